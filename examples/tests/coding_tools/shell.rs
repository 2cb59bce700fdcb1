//! bash: exit statuses, capped output, deadline, cancellation and process-group cleanup.

use std::fs;
use std::time::{Duration, Instant};

use dsh_tools_examples::coding::*;
use serde_json::json;

use super::{card, ctx, host_call, text, tmp, tool};

// --- bash ------------------------------------------------------------------------------------

/// Whether a process is still running (a reaped or zombie process is not).
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
    }
}

/// Waits (a bounded while) for every process in `pid_file` to be gone.
#[cfg(target_os = "linux")]
async fn assert_gone(pid_file: &std::path::Path) {
    let pids: Vec<u32> = fs::read_to_string(pid_file)
        .unwrap()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect();
    assert!(!pids.is_empty());
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn bash_runs_a_command_and_reports_its_exit() {
    let out = bash("echo hello".into(), "Say hello".into(), None, ctx())
        .await
        .unwrap();
    assert_eq!(
        out,
        BashOutput {
            exit_code: Some(0),
            signal: None,
            stdout: "hello\n".into(),
            stderr: String::new()
        }
    );

    // A failing command is a result, not a tool error: the model reads the exit code.
    let args = json!({"command": "echo out; echo oops >&2; exit 3", "description": "Fail"});
    let result = host_call(&tool("bash"), args.clone()).await;
    assert!(!result.is_error);
    assert_eq!(text(&result), "out\n[stderr]\noops\nexit code 3");
    assert_eq!(
        card(&tool("bash").present_result(&args, &result)),
        r#"{"card":"terminal","output":"out\noops\n","exitCode":3}"#
    );

    let result = host_call(
        &tool("bash"),
        json!({"command": "true", "description": "Nothing"}),
    )
    .await;
    assert_eq!(text(&result), "exit code 0");
}

#[cfg(unix)]
#[tokio::test]
async fn bash_reports_a_killing_signal() {
    let args = json!({"command": "kill -9 $$", "description": "Die"});
    let result = host_call(&tool("bash"), args.clone()).await;
    assert_eq!(text(&result), "killed by SIGKILL");
    assert_eq!(
        card(&tool("bash").present_result(&args, &result)),
        r#"{"card":"terminal","output":"","signal":"SIGKILL"}"#
    );
}

#[tokio::test]
async fn bash_caps_each_stream() {
    let out = bash(
        "head -c 200000 /dev/zero | tr '\\0' a".into(),
        "Lots of output".into(),
        None,
        ctx(),
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    let (head, tail) = out
        .stdout
        .split_once("\n[… 134464 bytes truncated]\n")
        .unwrap();
    assert_eq!((head.len(), tail.len()), (32 * 1024, 32 * 1024));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn bash_times_out_and_kills_the_whole_process_group() {
    let dir = tmp();
    let pids = dir.path().join("pids");
    let command = format!(
        "echo started; sleep 5 & echo $$ $! > {}; wait",
        pids.display()
    );
    let started = Instant::now();
    let err = bash(command, "Sleep".into(), Some(200), ctx())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        err.starts_with("command timed out after 200 ms and was killed"),
        "{err}"
    );
    assert!(
        err.ends_with("output before it was killed:\nstarted\n"),
        "{err}"
    );
    assert_gone(&pids).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn bash_is_cancelled_through_the_run_context() {
    let dir = tmp();
    let pids = dir.path().join("pids");
    let ctx = ctx();
    let token = ctx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let started = Instant::now();
    let command = format!("echo $$ > {}; sleep 5", pids.display());
    let err = bash(command, "Sleep".into(), None, ctx).await.unwrap_err();
    assert_eq!(err, "command cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    assert_gone(&pids).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn dropping_a_running_bash_call_kills_the_command() {
    let dir = tmp();
    let pids = dir.path().join("pids");
    let command = format!("sleep 5 & echo $$ $! > {}; wait", pids.display());
    let call = bash(command, "Sleep".into(), None, ctx());
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    assert_gone(&pids).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn background_jobs_do_not_outlive_the_command() {
    let dir = tmp();
    let pids = dir.path().join("pids");
    let started = Instant::now();
    let command = format!("sleep 5 & echo $! > {}; echo detached", pids.display());
    let out = bash(command, "Background".into(), None, ctx())
        .await
        .unwrap();
    assert_eq!(
        (out.exit_code, out.stdout.as_str()),
        (Some(0), "detached\n")
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    assert_gone(&pids).await;
}

#[tokio::test]
async fn bash_validates_its_timeout() {
    assert_eq!(
        bash("true".into(), "x".into(), Some(0), ctx())
            .await
            .unwrap_err(),
        "timeout_ms must be at least 1"
    );
}

#[test]
fn bash_call_card_is_a_terminal() {
    assert_eq!(
        card(
            &tool("bash")
                .present_call(&json!({"command": "cargo test", "description": "Run the tests"}))
        ),
        r#"{"card":"terminal","title":"cargo test","description":"Run the tests"}"#
    );
}
