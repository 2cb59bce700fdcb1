//! `dsh-tools call`: a tool of the example pack through the full pipeline, with the CLI's
//! approval service (terminal prompt, refusal without a terminal, `--yes`).

mod support;

use std::path::Path;

use serde_json::{Value, json};

/// Runs `dsh-tools call …` in `dir`; stdout parsed as JSON (`null` when it is not).
fn call(dir: &Path, args: &[&str], stdin: &str) -> (i32, Value, String) {
    let mut all = vec!["call"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = support::dsh_tools(dir, &all, stdin);
    (
        code,
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr,
    )
}

#[test]
fn a_read_only_tool_runs_without_approval() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let (code, result, stderr) = call(dir.path(), &["read_file", "-"], r#"{"path": "notes.txt"}"#);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["isError"], false);
    assert_eq!(result["value"]["total_lines"], 2);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alpha")
    );
}

#[test]
fn the_arguments_may_be_inline_json_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("args.json"), r#"{"path": "notes.txt"}"#).unwrap();
    for args in [r#"{"path":"notes.txt"}"#, "args.json"] {
        let (code, result, stderr) = call(dir.path(), &["read_file", args], "");
        assert_eq!(code, 0, "{args}: {stderr}");
        assert_eq!(result["value"]["total_lines"], 2, "{args}");
    }
    let (code, _, stderr) = call(dir.path(), &["read_file", r#"{"path": notes.txt}"#], "");
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "dsh-tools: <argument>: invalid JSON at line 1, column 11: expected ident\n"
    );
}

#[test]
fn a_machine_changing_tool_without_a_terminal_is_refused_and_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, result, _) = call(
        dir.path(),
        &["write_file"],
        r#"{"path": "out.txt", "content": "x"}"#,
    );
    assert_eq!(code, 1);
    assert_eq!(
        result,
        json!({
            "isError": true,
            "error": {"message": "tool \"write_file\" requires approval, but no approval channel is available"},
            "content": [{"type": "text", "text": "Error: tool \"write_file\" requires approval, but no approval channel is available"}]
        })
    );
    assert!(!dir.path().join("out.txt").exists());
}

#[test]
fn yes_approves_for_scripting() {
    let dir = tempfile::tempdir().unwrap();
    let (code, result, stderr) = call(
        dir.path(),
        &["write_file", "--yes"],
        r#"{"path": "out.txt", "content": "written"}"#,
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["isError"], false);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "written"
    );
}

#[test]
fn unknown_tools_and_bad_arguments_are_results_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, result, _) = call(dir.path(), &["nope"], "{}");
    assert_eq!(code, 1);
    assert_eq!(result["error"]["message"], "unknown tool \"nope\"");
    assert_eq!(result["error"]["info"]["code"], "UNKNOWN_TOOL");
    let (code, result, _) = call(dir.path(), &["read_file"], r#"{"path": 7}"#);
    assert_eq!(code, 1);
    assert_eq!(
        result["error"]["message"],
        "invalid arguments: \"path\" must be a string"
    );
    assert_eq!(result["error"]["info"]["code"], "INVALID_ARGS");
}

#[test]
fn a_bash_call_past_its_timeout_argument_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let (code, result, _) = call(
        dir.path(),
        &["bash", "--yes"],
        r#"{"command": "sleep 5", "description": "wait", "timeout_ms": 100}"#,
    );
    assert_eq!(code, 1);
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{result}"
    );
}
