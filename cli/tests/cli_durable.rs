//! `dsh-tools run --suspend` and `dsh-tools resume`: a run that needs approval suspends, and
//! resumes in another process — each tool call exactly once; refused continuations change
//! nothing.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// `dsh-tools <args>` in `dir`, its data directory under `data`, with `key` as
/// `DSH_TOOLS_CONTINUATION_KEY` (or none, and then the key file).
fn dsh_tools(dir: &Path, data: &Path, key: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
    command
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .env_remove("DSH_TOOLS_CONTINUATION_KEY")
        .stdin(Stdio::null());
    if let Some(key) = key {
        command.env("DSH_TOOLS_CONTINUATION_KEY", key);
    }
    let output = command.output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Reads a file, counts two shell commands into `counter.txt` (each asks for approval), reads it
/// back.
const PROGRAM: &str = r#"
const notes = await tools.read_file({ path: "notes.txt" });
await tools.bash({ command: "echo a >> counter.txt", description: "Count a" });
let second = "ran";
try {
  await tools.bash({ command: "echo b >> counter.txt", description: "Count b" });
} catch (e) {
  second = e.message;
}
const counted = await tools.read_file({ path: "counter.txt" });
return { notes: notes.lines.length, second, counted: counted.lines.map((l) => l.text) };
"#;

struct Workspace {
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        std::fs::write(dir.path().join("program.ts"), PROGRAM).unwrap();
        Self {
            dir,
            data: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        dsh_tools(self.dir.path(), self.data.path(), None, args)
    }

    fn counter(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("counter.txt")).ok()
    }
}

fn suspended(stdout: &str) -> (String, Value) {
    let document: Value = serde_json::from_str(stdout).unwrap();
    let suspended = &document["suspended"];
    (
        suspended["continuation"].as_str().unwrap().to_owned(),
        suspended["pending"].clone(),
    )
}

#[test]
fn suspend_approve_suspend_deny_across_processes_runs_each_call_once() {
    let ws = Workspace::new();
    let (code, stdout, stderr) = ws.run(&["run", "program.ts", "--suspend", "--json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let (first, pending) = suspended(&stdout);
    assert_eq!(pending[0]["id"], "run-1:code:2");
    assert_eq!(pending[0]["tool"], "bash");
    assert_eq!(
        pending[0]["arguments"],
        json!({"command": "echo a >> counter.txt", "description": "Count a"})
    );
    assert_eq!(pending[0]["reason"], "it can change files or run commands");
    assert_eq!(pending[0]["card"]["card"], "terminal");
    assert!(stderr.contains("run-1:code:1 read_file ok"), "{stderr}");
    assert!(
        stderr.contains("run-1 suspended: run-1:code:2 awaits a decision"),
        "{stderr}"
    );
    assert_eq!(ws.counter(), None, "nothing counted before the approval");

    // Another process approves, and suspends again at the second command.
    let (code, stdout, stderr) = ws.run(&["resume", &first, "--approve", "--suspend", "--json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let (second, pending) = suspended(&stdout);
    assert_eq!(pending[0]["id"], "run-1:code:3");
    assert!(
        stderr.contains("run-1:code:1 read_file replayed"),
        "{stderr}"
    );
    assert!(stderr.contains("run-1:code:2 bash ok"), "{stderr}");
    assert_eq!(ws.counter().as_deref(), Some("a\n"));

    // A third process denies, reading the continuation from stdin.
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["resume", "-", "--deny", "--json"])
        .current_dir(ws.dir.path())
        .env("XDG_DATA_HOME", ws.data.path())
        .env("HOME", ws.data.path())
        .env_remove("DSH_TOOLS_CONTINUATION_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), second.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        result["value"]["result"],
        json!({"notes": 2, "second": "the user rejected tool \"bash\"", "counted": ["a"]})
    );
    assert_eq!(
        ws.counter().as_deref(),
        Some("a\n"),
        "each command ran at most once"
    );

    // Spent: the first continuation again changes nothing.
    let (code, stdout, stderr) = ws.run(&["resume", &first, "--approve"]);
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("dsh-tools: <argument>: continuation ")
            && stderr
                .trim_end()
                .ends_with("was already resumed (a continuation resumes once)"),
        "{stderr}"
    );
    assert_eq!(ws.counter().as_deref(), Some("a\n"));

    // The key file (0600) and the spent ids beside it.
    let store = ws.data.path().join("dsh-tools");
    let key = std::fs::read_to_string(store.join("continuation.key")).unwrap();
    assert_eq!(key.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(store.join("continuation.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let spent = std::fs::read_to_string(store.join("spent-continuations")).unwrap();
    assert_eq!(spent.lines().count(), 2);
}

#[test]
fn tampered_truncated_and_foreign_continuations_are_refused_without_a_side_effect() {
    let ws = Workspace::new();
    let (code, stdout, _) = ws.run(&["run", "program.ts", "--suspend", "--json"]);
    assert_eq!(code, 3);
    let (continuation, _) = suspended(&stdout);

    let mut tampered = continuation.clone().into_bytes();
    let at = tampered.len() - 10;
    tampered[at] = if tampered[at] == b'x' { b'y' } else { b'x' };
    let tampered = String::from_utf8(tampered).unwrap();
    let truncated = &continuation[..continuation.len() - 20];
    for bad in [tampered.as_str(), truncated, "dshc1.", "hello"] {
        let (code, stdout, stderr) = ws.run(&["resume", bad, "--approve"]);
        assert_eq!(code, 2, "{bad}: {stdout}{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("dsh-tools: <argument>: "), "{stderr}");
    }
    let (_, _, stderr) = ws.run(&["resume", &tampered, "--approve"]);
    assert_eq!(
        stderr.trim_end(),
        "dsh-tools: <argument>: continuation refused: it was altered, truncated or sealed with another key (authentication failed)"
    );

    // Another key (the environment's) refuses it too.
    let other = "another key of at least thirty-two bytes";
    let (code, _, stderr) = dsh_tools(
        ws.dir.path(),
        ws.data.path(),
        Some(other),
        &["resume", &continuation, "--approve"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert_eq!(ws.counter(), None, "nothing ran");

    // The genuine one still resumes.
    let (code, stdout, stderr) = ws.run(&["resume", &continuation, "--approve", "--suspend"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert_eq!(ws.counter().as_deref(), Some("a\n"));
    // The readable summary.
    assert!(
        stdout.starts_with("suspended: run-1:code:3 tools.bash awaits a decision (it can change files or run commands)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\ncontinuation: dshc1."), "{stdout}");
}

#[test]
fn the_key_comes_from_the_environment_or_a_private_key_file() {
    let ws = Workspace::new();
    let key = "a key from the environment, 32 bytes or more";
    let (code, stdout, _) = dsh_tools(
        ws.dir.path(),
        ws.data.path(),
        Some(key),
        &["run", "program.ts", "--suspend", "--json"],
    );
    assert_eq!(code, 3);
    let (continuation, _) = suspended(&stdout);
    assert!(!ws.data.path().join("dsh-tools/continuation.key").exists());
    // Without the variable, the key file's key does not open it.
    let (code, _, _) = ws.run(&["resume", &continuation, "--deny"]);
    assert_eq!(code, 2);
    let (code, _, stderr) = dsh_tools(
        ws.dir.path(),
        ws.data.path(),
        Some("short"),
        &["resume", &continuation, "--deny"],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("DSH_TOOLS_CONTINUATION_KEY"), "{stderr}");
    // The first command is not caught: denied, it ends the run (exit status 1).
    let (code, stdout, _) = dsh_tools(
        ws.dir.path(),
        ws.data.path(),
        Some(key),
        &["resume", &continuation, "--deny", "--suspend"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        stdout.trim_end(),
        "Error: code run failed (exception): ToolCallError: bash: the user rejected tool \"bash\"\n    at __dsh_main__ (program.ts:3:7)"
    );
    assert_eq!(ws.counter(), None);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let file = ws.data.path().join("dsh-tools/continuation.key");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (code, _, stderr) = ws.run(&["run", "program.ts", "--suspend"]);
        assert_eq!(code, 2);
        assert!(
            stderr.contains("open to other users (mode 644)"),
            "{stderr}"
        );
    }
}

/// [`PROGRAM`] in Python: the interpreter's paused state travels in the continuation.
const PYTHON_PROGRAM: &str = r#"
notes = await tools.read_file({"path": "notes.txt"})
print("notes read")
await tools.bash({"command": "echo a >> counter.txt", "description": "Count a"})
print("a counted")
second = "ran"
try:
    await tools.bash({"command": "echo b >> counter.txt", "description": "Count b"})
except ToolCallError as e:
    second = str(e)
counted = await tools.read_file({"path": "counter.txt"})
return {"notes": len(notes["lines"]), "second": second, "counted": [l["text"] for l in counted["lines"]]}
"#;

#[test]
fn a_python_run_suspends_and_resumes_across_processes_running_each_call_once() {
    let ws = Workspace::new();
    std::fs::write(ws.dir.path().join("program.py"), PYTHON_PROGRAM).unwrap();
    let (code, stdout, stderr) = ws.run(&["run", "program.py", "--suspend", "--json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let (first, pending) = suspended(&stdout);
    assert_eq!(pending[0]["id"], "run-1:code:2");
    assert_eq!(pending[0]["tool"], "bash");
    assert_eq!(ws.counter(), None, "nothing counted before the approval");

    // Another process approves, and suspends again at the second command: the read is not
    // replayed (nothing replays a snapshot).
    let (code, stdout, stderr) = ws.run(&["resume", &first, "--approve", "--suspend", "--json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let (second, pending) = suspended(&stdout);
    assert_eq!(pending[0]["id"], "run-1:code:3");
    assert!(!stderr.contains("read_file"), "{stderr}");
    assert!(stderr.contains("run-1:code:2 bash ok"), "{stderr}");
    assert_eq!(ws.counter().as_deref(), Some("a\n"));

    // A third denies.
    let (code, stdout, stderr) = ws.run(&["resume", &second, "--deny", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        result["value"],
        json!({
            "logs": ["notes read", "a counted"],
            "result": {"notes": 2, "second": "bash: the user rejected tool \"bash\"", "counted": ["a"]},
        })
    );
    assert_eq!(ws.counter().as_deref(), Some("a\n"));

    // Spent, and altered: refused, nothing runs.
    let (code, _, stderr) = ws.run(&["resume", &first, "--approve"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("was already resumed"), "{stderr}");
    let mut altered = second.clone().into_bytes();
    let at = altered.len() / 2;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let (code, _, stderr) = ws.run(&["resume", &altered, "--approve"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert_eq!(ws.counter().as_deref(), Some("a\n"));
}
