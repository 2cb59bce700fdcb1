//! Runs the Node.js side of the differential tests (`tests/node/differential.mjs`): one `node`
//! process per corpus, the cases in a temporary file, JavaScript's answers on stdout.
//!
//! Node.js is part of the test environment (`scripts/test` needs it for `npm ci`): a missing
//! `node` fails the differential tests, it never skips them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// Runs `differential.mjs <mode>` on `cases` and returns its answer.
///
/// `scratch` is a directory for the case file (pass `env!("CARGO_TARGET_TMPDIR")`).
///
/// # Panics
///
/// When `node` cannot be started, exits unsuccessfully or prints something that is not JSON:
/// the test that asked has no answer to compare with.
pub fn run_differential(scratch: &str, mode: &str, cases: &Value) -> Value {
    let dir = Path::new(scratch).join("node-differential");
    std::fs::create_dir_all(&dir).expect("a scratch directory for the cases");
    let file = dir.join(format!("{mode}-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec(cases).expect("cases serialize"))
        .expect("the case file is written");
    let script = workspace_root().join("tests/node/differential.mjs");
    let node = std::env::var_os("DSH_NODE").unwrap_or_else(|| "node".into());
    let output = Command::new(&node)
        .arg(&script)
        .arg(mode)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (Node.js is required by the differential tests; set DSH_NODE to \
                 its path if it is not on PATH): {e}",
                node.to_string_lossy()
            )
        });
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "node {} {mode} failed: {}\n{}",
        script.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "node printed no JSON ({e}): {:.500}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
