//! Shared helpers of the workspace's integration tests.

use std::path::Path;

pub mod node;

/// The README's examples, compiled and run as doctests (here, so that no published crate reads a
/// file outside its package).
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The example of `dsh-tools-macros`' crate docs (`dsh-tools-macros/src/docs/crate.md`), run as a
/// doctest. The macros crate cannot run its docs' examples itself: they use the facade, which
/// depends on it.
#[doc = include_str!("../../dsh-tools-macros/src/docs/crate.md")]
#[cfg(doctest)]
pub struct MacrosCrateDoctests;

/// The examples of `#[tool]`'s docs (`dsh-tools-macros/src/docs/tool.md`), run as doctests.
#[doc = include_str!("../../dsh-tools-macros/src/docs/tool.md")]
#[cfg(doctest)]
pub struct ToolMacroDoctests;

/// The examples of `#[tool_set]`'s docs (`dsh-tools-macros/src/docs/tool_set.md`).
#[doc = include_str!("../../dsh-tools-macros/src/docs/tool_set.md")]
#[cfg(doctest)]
pub struct ToolSetMacroDoctests;

/// The examples of `#[derive(ToolSchema)]`'s docs (`dsh-tools-macros/src/docs/derive.md`).
#[doc = include_str!("../../dsh-tools-macros/src/docs/derive.md")]
#[cfg(doctest)]
pub struct DeriveMacroDoctests;

/// Prints a figure line and records it under `<target tmpdir>/figures/<name>.txt`, so the test
/// command can show every category's figures at the end of a CI log.
///
/// Call it as `record_figure(env!("CARGO_TARGET_TMPDIR"), "schema-suite", "…")`.
pub fn record_figure(target_tmpdir: &str, name: &str, line: &str) {
    println!("{line}");
    let dir = Path::new(target_tmpdir).join("figures");
    if std::fs::create_dir_all(&dir).is_ok() {
        // Figures are informative; failing to record one must not fail the test that measured it.
        let _ = std::fs::write(dir.join(format!("{name}.txt")), format!("{line}\n"));
    }
}

/// Whether tests that need Node.js (or the `tests/node` packages) must fail rather than skip
/// when it is missing: under CI, and whenever `scripts/test` runs them (it exports
/// `DSH_REQUIRE_NODE=1`).
pub fn node_required() -> bool {
    ["CI", "DSH_REQUIRE_NODE"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
}
