//! `dsh-tools run`, `repl` and `sdk` with Python: programs on the Monty interpreter (in worker
//! processes of the `dsh-tools` binary itself), and the Python SDK.

mod support;

use std::path::Path;
use std::process::Command;

fn dsh(dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    support::dsh_tools(dir, args, stdin)
}

#[test]
fn the_shipped_python_program_runs_against_the_workspace() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let (code, stdout, stderr) = dsh(workspace, &["run", "examples/programs/public-api.py"], "");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("Rust files"), "{stdout}");
    assert!(stdout.contains("dsh-tools/src/"), "{stdout}");
    assert!(stderr.contains("run-1:code:1 glob ok"), "{stderr}");
    assert!(stderr.contains("run-1:code:2 grep ok"), "{stderr}");
}

#[test]
fn python_programs_read_files_and_return_values() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let program = "file = await tools.read_file({'path': 'notes.txt'})\n\
                   print('lines:', len(file['lines']))\n\
                   return [line['text'].upper() for line in file['lines']]\n";
    let (code, stdout, stderr) = dsh(
        dir.path(),
        &["run", "--language", "python", "--json"],
        program,
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        result["value"],
        serde_json::json!({"logs": ["lines: 2"], "result": ["ALPHA", "BETA"]})
    );
}

#[test]
fn a_denied_call_raises_tool_call_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let program = "try:\n    await tools.write_file({'path': 'out.txt', 'content': 'x'})\n    return 'written'\nexcept ToolCallError as e:\n    return f'caught: {e}'\n";
    let (code, stdout, _) = dsh(dir.path(), &["run", "--language", "python"], program);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim(),
        "caught: write_file: tool \"write_file\" requires approval, but no approval channel is available"
    );
    assert!(!dir.path().join("out.txt").exists());
}

#[test]
fn unsupported_python_is_reported_before_running_and_limits_hold() {
    let dir = tempfile::tempdir().unwrap();
    let program = "class A(Exception):\n    pass\nawait tools.reed_file({'path': 'x'})\n";
    let (code, stdout, _) = dsh(dir.path(), &["run", "--language", "python"], program);
    assert_eq!(code, 1);
    assert!(stdout.contains("the program cannot run:"), "{stdout}");
    assert!(
        stdout.contains("1:1: class inheritance is not supported"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3:13: no tool named `reed_file` (hint: did you mean `read_file`?)"),
        "{stdout}"
    );
    // A memory bomb ends in its outcome; the CLI's worker process took it, the CLI lives on.
    let (code, stdout, _) = dsh(
        dir.path(),
        &["run", "--language", "python"],
        "x = 'a' * 10**10\n",
    );
    assert_eq!(code, 1);
    assert!(
        stdout.contains("code run failed (memory-limit): memory limit reached (67108864 bytes)"),
        "{stdout}"
    );
}

#[test]
fn the_python_repl_runs_each_program_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let input =
        "x = 41\nreturn x + 1\n.\ntry:\n    return x\nexcept NameError:\n    return 'fresh'\n.\n";
    let (code, stdout, stderr) = dsh(dir.path(), &["repl", "--language", "python"], input);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, ["42", "fresh"], "{stdout}");
}

#[test]
fn the_python_sdk_of_the_example_tools_is_valid_python() {
    let (code, text, stderr) = dsh(&std::env::temp_dir(), &["sdk", "--language", "python"], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(text.starts_with("## Writing code for run_code"));
    let module = text
        .split_once("```python\n")
        .and_then(|(_, rest)| rest.trim_end().strip_suffix("```"))
        .expect("a python block");
    let order: Vec<usize> = [
        "bash",
        "edit_file",
        "glob",
        "grep",
        "list_dir",
        "read_file",
        "write_file",
    ]
    .iter()
    .map(|name| {
        module
            .find(&format!("    async def {name}(self, args: "))
            .unwrap_or_else(|| panic!("no {name}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let output = Command::new("python3")
        .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(module.as_bytes())?;
            child.wait_with_output()
        })
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (code, ty, _) = dsh(
        &std::env::temp_dir(),
        &["sdk", "py-type"],
        r#"{"type": "object", "properties": {"n": {"type": ["integer", "null"]}}, "required": ["n"]}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(
        ty,
        "class Schema(TypedDict):\n    n: int | None\n\n\nSchema\n"
    );
}
