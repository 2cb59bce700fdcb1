//! Compile-fail and compile-pass cases of `#[tool]`, `#[tool_set]` and `#[derive(ToolSchema)]`.
//!
//! The `.stderr` snapshots are pinned to one compiler. After a toolchain bump, regenerate them
//! with `TRYBUILD=overwrite cargo test -p dsh-tools-tests --test ui` and review the diff.

#[rustversion::stable(1.95)]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    // One case per file, in category directories. The first glob also matches `pass/`; a later
    // glob overrides the expectation of the files it matches, so those must compile and run.
    t.compile_fail("tests/ui/*/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

#[rustversion::not(stable(1.95))]
#[test]
fn ui() {
    panic!("ui snapshots are for rustc 1.95; rerun with TRYBUILD=overwrite after a toolchain bump")
}
