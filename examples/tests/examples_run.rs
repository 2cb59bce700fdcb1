//! The runnable examples under `examples/examples/` (the README lists their `cargo run` lines):
//! each one runs to completion and prints what its docs say it shows.

use std::path::PathBuf;
use std::process::Command;

/// Runs the built example `name` and returns its stdout (building the examples first when this
/// test binary was built without them, e.g. by `cargo test --test examples_run`).
fn run_example(name: &str) -> String {
    let profile_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .expect("the test binary lives in <target>/<profile>/deps");
    let binary: PathBuf = profile_dir.join("examples").join(name);
    if !binary.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "dsh-tools-examples", "--examples"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the examples failed");
    }
    let output = Command::new(&binary)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    assert!(
        output.status.success(),
        "{name} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn minimal_tool_validates_then_runs() {
    let out = run_example("minimal_tool");
    assert!(out.contains("value: 42\n"), "{out}");
    assert!(
        out.contains(
            "model sees: Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer"
        ),
        "{out}"
    );
}

#[test]
fn stateful_tool_set_shares_its_state() {
    let out = run_example("stateful_tool_set");
    assert!(out.starts_with("add_note: 1\nadd_note: 2\n"), "{out}");
    assert!(
        out.contains("add_note: Error: a note needs some text"),
        "{out}"
    );
    assert!(out.contains("\"buy milk\",\n  \"call Ana\""), "{out}");
}

#[test]
fn guarded_approval_asks_then_guards() {
    let out = run_example("guarded_approval");
    assert!(
        out.contains("tmp/cache.bin: deleted tmp/cache.bin"),
        "{out}"
    );
    assert!(
        out.contains("src/main.rs: Error: the user rejected tool \"delete_file\""),
        "{out}"
    );
    assert!(
        out.contains("(delete /etc/passwd): approved\n/etc/passwd: Error: /etc/passwd is outside the workspace"),
        "{out}"
    );
}

#[test]
fn code_mode_host_runs_a_program_against_the_sdk() {
    let out = run_example("code_mode_host");
    assert!(
        out.contains("--- prompt section tools:sdk (order 150) ---"),
        "{out}"
    );
    assert!(out.contains("  population: number;"), "{out}");
    assert!(out.contains("--- wire tools: [\"run_code\"]"), "{out}");
    assert!(
        out.contains("Atlantis: no data for Atlantis\n{\n  \"total\": 0.97\n}"),
        "{out}"
    );
    assert_eq!(
        out.matches("\"type\":\"tool/code-dispatch\"").count(),
        4,
        "{out}"
    );
}
