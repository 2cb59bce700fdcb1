//! Running the `dsh-tools` binary from the CLI tests.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `dsh-tools <args>` in `dir` with `stdin` piped (so there is never a terminal) and returns
/// the exit status, stdout and stderr.
pub(crate) fn dsh_tools(dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A command that fails before reading stdin closes it: a broken pipe is expected then.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}
