//! `dsh-tools run`: Code Mode programs against the example tools in the QuickJS sandbox.

mod support;

use std::path::Path;

fn run(dir: &Path, args: &[&str], program: &str) -> (i32, String, String) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    support::dsh_tools(dir, &all, program)
}

#[test]
fn the_shipped_program_runs_against_the_workspace() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (code, stdout, stderr) = run(workspace, &["examples/programs/public-api.ts"], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Rust files"), "{stdout}");
    assert!(stdout.contains("dsh-tools/src/"), "{stdout}");
    assert!(stderr.contains("run-1:code:1 glob ok"), "{stderr}");
    assert!(stderr.contains("run-1:code:2 grep ok"), "{stderr}");
}

#[test]
fn typed_programs_read_files_and_return_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let program = r#"
        const file: { lines: { text: string }[] } = await tools.read_file({ path: "notes.txt" });
        console.log("lines:", file.lines.length);
        return file.lines.map((l) => l.text.toUpperCase());
    "#;
    let (code, stdout, _) = run(dir.path(), &["--json"], program);
    assert_eq!(code, 0, "{stdout}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        result["value"],
        serde_json::json!({"logs": ["lines: 2"], "result": ["ALPHA", "BETA"]})
    );
}

#[test]
fn a_denied_call_rejects_with_tool_call_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let program = r#"
        try {
            await tools.write_file({ path: "out.txt", content: "x" });
            return "written";
        } catch (e) {
            return `${e instanceof ToolCallError} ${e.toolName}: ${e.message}`;
        }
    "#;
    let (code, stdout, _) = run(dir.path(), &[], program);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim(),
        "true write_file: tool \"write_file\" requires approval, but no approval channel is available"
    );
    assert!(!dir.path().join("out.txt").exists());
}

#[test]
fn a_throwing_program_is_a_code_run_failure_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, _) = run(
        dir.path(),
        &[],
        "console.log('before');\n\nthrow new Error('boom');\n",
    );
    assert_eq!(code, 1);
    assert!(
        stdout.starts_with("Error: code run failed (exception): "),
        "{stdout}"
    );
    assert!(stdout.contains("boom"), "{stdout}");
    assert!(stdout.contains(":3:"), "the model's line 3: {stdout}");
    assert!(
        stdout.trim_end().ends_with("Captured output:\nbefore"),
        "{stdout}"
    );
}

#[test]
fn the_repl_runs_each_program_in_a_fresh_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let session = "globalThis.kept = 41;\nreturn 1 + 1;\n.\nreturn typeof globalThis.kept;\n.\nconst d = await tools.list_dir({});\nreturn d.entries.length;\n";
    let (code, stdout, stderr) = support::dsh_tools(dir.path(), &["repl"], session);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "2\nundefined\n1\n");
    assert!(stderr.contains("run-3:code:1 list_dir ok"), "{stderr}");
}
