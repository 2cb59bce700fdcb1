//! `bash`: run a shell command, with a deadline, cancellation and capped output.
//!
//! The command runs as `sh -c` in a process group of its own. Whatever way the call ends (exit,
//! timeout, cancellation, or the future being dropped by a host deadline) the whole group is
//! killed, so neither the shell nor its children nor their background jobs outlive the call, and
//! no orphan can keep the output pipes open.

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use dsh_tools::{
    ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolRunContext, ToolSchema, tool,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::process::Command;

use super::process::{Capture, ProcessGroup, capture, signal_of};
use super::{meta_output, output_meta};

/// The deadline when the call gives no `timeout_ms`; the same as the tool's declared
/// `#[tool(timeout_ms = 120000)]` (the attribute takes a literal only, so a test pins the two).
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// How long to wait for the pipes to close once a stopped command's group has been killed.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// What `bash` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct BashOutput {
    /// The exit code, when the command exited (rather than being killed by a signal).
    pub exit_code: Option<i32>,
    /// The number of the signal that killed the command, if one did.
    pub signal: Option<i32>,
    /// What the command wrote to standard output (at most 64 KiB: the middle of longer output is
    /// replaced by a `[… N bytes truncated]` marker).
    pub stdout: String,
    /// What the command wrote to standard error (same limit).
    pub stderr: String,
}

/// Run a shell command with `sh -c` in the current directory and return its exit code and output.
/// A non-zero exit code is not a tool error: read `exit_code`. Standard input is empty; each
/// output stream is capped at 64 KiB. The command is killed when it runs past `timeout_ms` or the
/// call is cancelled, and background jobs (`cmd &`) are killed when the command finishes: detach
/// a long-lived process with `setsid cmd > log 2>&1 &`. Prefer read_file, glob, grep and
/// edit_file to their shell equivalents.
#[tool(
    timeout_ms = 120000,
    destructive,
    open_world,
    present_call = bash_call_card,
    present_result = bash_result_card,
    presentation_meta = bash_meta,
    render = render_bash
)]
pub async fn bash(
    /// The command line, run with `sh -c`.
    command: String,
    /// What the command does, in a few words, shown to the user (e.g. "Run the unit tests").
    description: String,
    /// Kill the command after this many milliseconds (default 120000).
    timeout_ms: Option<u64>,
    ctx: ToolRunContext,
) -> Result<BashOutput, String> {
    // The description is for the user: the call card shows it.
    let _ = description;
    let timeout_ms = timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if timeout_ms == 0 {
        return Err("timeout_ms must be at least 1".into());
    }
    let mut child = shell(&command)
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let group = ProcessGroup::of(&child);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let run = async {
        let status = async {
            let status = child.wait().await;
            // The shell is gone; end its background jobs so they release the pipes.
            group.kill().await;
            status
        };
        tokio::join!(status, capture(stdout), capture(stderr))
    };
    tokio::pin!(run);
    let stopped = tokio::select! {
        (status, stdout, stderr) = &mut run => return finish(status, stdout, stderr),
        () = ctx.cancellation().cancelled() => None,
        () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => Some(timeout_ms),
    };
    group.kill().await;
    let Some(timeout_ms) = stopped else {
        return Err("command cancelled".into());
    };
    let mut message = format!(
        "command timed out after {timeout_ms} ms and was killed (pass a larger timeout_ms if it \
         needs longer)"
    );
    if let Ok((_, stdout, stderr)) = tokio::time::timeout(DRAIN_AFTER_KILL, &mut run).await {
        let output = combined(&stdout.finish(), &stderr.finish());
        if !output.is_empty() {
            message.push_str("; output before it was killed:\n");
            message.push_str(&output);
        }
    }
    Err(message)
}

fn shell(command: &str) -> Command {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    shell
}

fn finish(
    status: io::Result<ExitStatus>,
    stdout: Capture,
    stderr: Capture,
) -> Result<BashOutput, String> {
    let status = status.map_err(|e| format!("cannot wait for the command: {e}"))?;
    Ok(BashOutput {
        exit_code: status.code(),
        signal: signal_of(status),
        stdout: stdout.finish(),
        stderr: stderr.finish(),
    })
}

/// Standard output, then standard error, on a line of its own.
fn combined(stdout: &str, stderr: &str) -> String {
    let mut output = stdout.to_owned();
    if !output.is_empty() && !stderr.is_empty() && !output.ends_with('\n') {
        output.push('\n');
    }
    output.push_str(stderr);
    output
}

/// The conventional name of a (Linux) signal number, for the terminal card.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    name.to_owned()
}

/// Standard output, standard error under a `[stderr]` line, then the exit status.
fn render_bash(_args: &bash::Args, out: &BashOutput) -> Vec<ContentBlock> {
    let mut text = out.stdout.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !out.stderr.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&out.stderr);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    text.push_str(&match (out.exit_code, out.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by {}", signal_name(signal)),
        (None, None) => "exit status unknown".to_owned(),
    });
    vec![ContentBlock::text(text)]
}

fn bash_meta(_args: &bash::Args, out: &BashOutput) -> Value {
    output_meta(out)
}

fn bash_call_card(args: &bash::Args) -> Option<ToolCallView> {
    Some(ToolCallView::terminal(args.command.clone()).with_description(args.description.clone()))
}

fn bash_result_card(_args: &bash::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: BashOutput = meta_output(result)?;
    let mut view = ToolResultView::terminal_output(combined(&out.stdout, &out.stderr));
    if let Some(code) = out.exit_code {
        view = view.with_exit_code(code);
    }
    if let Some(signal) = out.signal {
        view = view.with_signal(signal_name(signal));
    }
    Some(view)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_deadline_is_the_declared_one() {
        let declared = bash::definition().unwrap().timeout_ms();
        assert_eq!(declared, Some(DEFAULT_TIMEOUT_MS));
    }

    #[test]
    fn streams_are_combined_on_separate_lines() {
        assert_eq!(combined("out", "err\n"), "out\nerr\n");
        assert_eq!(combined("out\n", "err"), "out\nerr");
        assert_eq!(combined("", "err"), "err");
        assert_eq!(combined("out", ""), "out");
    }
}
