//! Crash tests: `dsh-tools run --store URL` processes killed with SIGKILL at a random call of a
//! 5-call program, each resumed by id (`runs resume`) in a new process, against the file store,
//! PostgreSQL and Redis. Every side effect applies once: calls before the kill are not run
//! again, the call in flight at the kill is either journaled or reported `OUTCOME_UNKNOWN` (never
//! silently re-run), later calls run once. The kill is synchronised on a FIFO the killed
//! process's tool writes to (no sleeps).
//!
//! `DSH_CRASH_RUNS` sets the number of runs per store (default 20).

#![cfg(unix)]

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Five shell commands, each counting itself into `effects.txt`, then (in the process to be
/// killed) writing its number to the FIFO `$DSH_MARK`.
const PROGRAM: &str = r#"
const out = [];
for (let i = 1; i <= 5; i++) {
  try {
    await tools.bash({
      command: `echo ${i} >> effects.txt; if [ -n "$DSH_MARK" ]; then echo ${i} > "$DSH_MARK"; fi`,
      description: `Step ${i}`,
    });
    out.push("ok");
  } catch (e) {
    out.push(e.message);
  }
}
return out;
"#;

fn command(dir: &Path, data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
    command
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .env_remove("DSH_TOOLS_CONTINUATION_KEY")
        .env_remove("DSH_MARK")
        .stdin(Stdio::null());
    command
}

/// A small deterministic generator (xorshift): the kill points.
struct Points(u64);

impl Points {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 5) as usize + 1
    }
}

/// One run killed at call `kill_at`, resumed by id: what the resumed run returned per call.
fn crash_once(store: &str, dir: &Path, data: &Path, kill_at: usize) -> Vec<String> {
    let fifo = dir.join("mark.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let _ = std::fs::remove_file(dir.join("effects.txt"));
    let mut child = command(dir, data, &["run", "program.ts", "--yes", "--store", store])
        .env("DSH_MARK", &fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for step in 1..=kill_at {
        // Blocks until the tool of call `step` opens the FIFO; its write ends at its close.
        let mut mark = String::new();
        std::fs::File::open(&fifo)
            .unwrap()
            .read_to_string(&mut mark)
            .unwrap();
        assert_eq!(mark.trim(), step.to_string());
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let run = run_id_of(&mut child);

    let resumed = command(
        dir,
        data,
        &["runs", "resume", &run, "--yes", "--json", "--store", store],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8(resumed.stdout).unwrap();
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let result: Value = serde_json::from_str(&stdout).unwrap();
    let steps: Vec<String> = result["value"]["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{stdout}"))
        .iter()
        .map(|step| step.as_str().unwrap().to_owned())
        .collect();
    // Every side effect once: 1..=5, in order.
    let effects = std::fs::read_to_string(dir.join("effects.txt")).unwrap();
    assert_eq!(effects, "1\n2\n3\n4\n5\n", "killed at {kill_at}");
    // Finished: not listed any more.
    let listed = command(dir, data, &["runs", "list", "--store", store])
        .output()
        .unwrap();
    assert!(!String::from_utf8(listed.stdout).unwrap().contains(&run));
    steps
}

fn crash_many(kind: &str, store: &str) {
    let runs: usize = std::env::var("DSH_CRASH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("program.ts"), PROGRAM).unwrap();
    let mut points = Points(0x9e37_79b9_7f4a_7c15);
    let mut unknown = 0;
    for _ in 0..runs {
        let kill_at = points.next();
        let steps = crash_once(store, dir.path(), data.path(), kill_at);
        for (index, step) in steps.iter().enumerate() {
            let call = index + 1;
            if step == "ok" {
                continue;
            }
            // Only the call in flight at the kill may be unknown, and it says so.
            assert_eq!(call, kill_at, "{steps:?}");
            assert!(
                step.starts_with("OUTCOME_UNKNOWN: the outcome of tools.bash (run-")
                    && step.ends_with(&format!(
                        ":code:{call}) is unknown: it was in flight when the run's process stopped; it may or may not have taken effect and was not run again"
                    )),
                "{step}"
            );
            unknown += 1;
        }
    }
    eprintln!("{kind}: {runs} runs killed and resumed, {unknown} calls reported OUTCOME_UNKNOWN");
}

/// The server's URL from `var`; a test without one fails under CI.
fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set: scripts/test starts the servers (scripts/services)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (eval \"$(scripts/services start)\" sets it)");
            None
        }
    }
}

#[test]
fn killed_runs_resume_from_a_file_store() {
    let store = tempfile::tempdir().unwrap();
    crash_many("file", &format!("file:{}", store.path().display()));
}

#[test]
fn killed_runs_resume_from_postgres() {
    if let Some(url) = server_url("DSH_TEST_POSTGRES_URL") {
        crash_many("postgres", &url);
    }
}

#[test]
fn killed_runs_resume_from_redis() {
    if let Some(url) = server_url("DSH_TEST_REDIS_URL") {
        crash_many("redis", &url);
    }
}

/// A one-call program whose call, in the process to be killed, tells `$DSH_MARK` it started
/// and then waits on `$DSH_HOLD` (released after the kill): its outcome is unknown.
const IN_FLIGHT: &str = r#"
try {
  await tools.bash({
    command: `echo ran >> effects.txt; if [ -n "$DSH_MARK" ]; then echo 1 > "$DSH_MARK"; read -r _ < "$DSH_HOLD"; fi`,
    description: "Pay once",
  });
  return "ok";
} catch (e) {
  return e.message;
}
"#;

/// Runs [`IN_FLIGHT`] and kills its process while the call is in flight: the run's id.
fn killed_in_flight(store: &str, dir: &Path, data: &Path) -> String {
    let (mark, hold) = (dir.join("mark.fifo"), dir.join("hold.fifo"));
    for fifo in [&mark, &hold] {
        let _ = std::fs::remove_file(fifo);
        assert!(Command::new("mkfifo").arg(fifo).status().unwrap().success());
    }
    std::fs::write(dir.join("in_flight.ts"), IN_FLIGHT).unwrap();
    let mut child = command(
        dir,
        data,
        &["run", "in_flight.ts", "--yes", "--store", store],
    )
    .env("DSH_MARK", &mark)
    .env("DSH_HOLD", &hold)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut started = String::new();
    std::fs::File::open(&mark)
        .unwrap()
        .read_to_string(&mut started)
        .unwrap();
    assert_eq!(started.trim(), "1");
    child.kill().unwrap(); // SIGKILL, the call in flight
    child.wait().unwrap();
    // Lets the orphaned shell end.
    drop(std::fs::OpenOptions::new().write(true).open(&hold).unwrap());
    run_id_of(&mut child)
}

/// The run id a killed `run --store` printed on its standard error.
fn run_id_of(child: &mut std::process::Child) -> String {
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("dsh-tools: run "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run id in: {stderr}"))
        .to_owned()
}

#[test]
fn a_resumption_on_a_terminal_asks_before_running_an_unknown_call_again() {
    use rexpect::reader::Options;
    use rexpect::session::spawn_with_options;
    let (dir, data, store_dir) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let store = format!("file:{}", store_dir.path().display());
    for (answer, effects, outcome) in [
        ("n", "ran\n", "OUTCOME_UNKNOWN: "),
        ("y", "ran\nran\n", "ok"),
    ] {
        let _ = std::fs::remove_file(dir.path().join("effects.txt"));
        let run = killed_in_flight(&store, dir.path(), data.path());
        // In a terminal: the same command, its standard streams left to the terminal.
        let mut resume = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
        resume
            .args(["runs", "resume", &run, "--json", "--store", &store])
            .current_dir(dir.path())
            .env("XDG_DATA_HOME", data.path())
            .env("HOME", data.path())
            .env_remove("DSH_TOOLS_CONTINUATION_KEY")
            .env_remove("DSH_MARK");
        resume.env("TERM", "xterm");
        let options = Options::new()
            .timeout_ms(Some(60_000))
            .strip_ansi_escape_codes(true);
        let mut session = spawn_with_options(resume, options).unwrap();
        let question = format!(
            "allow tool \"bash\" (the outcome of tools.bash ({run}:code:1) is unknown: it was in flight when run \"{run}\"'s process stopped and may or may not have taken effect; allowing it runs it again with the same idempotency key ({run}:code:1))? [y/N/a]"
        );
        session
            .exp_string(&question)
            .unwrap_or_else(|e| panic!("{question}: {e}"));
        session.send_line(answer).unwrap();
        if answer == "y" {
            // Run again, the call goes through the pipeline as any call: bash asks.
            session
                .exp_string("allow tool \"bash\" (it can change files or run commands)? [y/N/a]")
                .unwrap();
            session.send_line("y").unwrap();
        }
        let rest = session.exp_eof().unwrap();
        assert!(
            rest.contains(&format!("\"result\":\"{outcome}")),
            "{answer}: {rest}"
        );
        let written = std::fs::read_to_string(dir.path().join("effects.txt")).unwrap();
        assert_eq!(written, effects, "answered {answer}");
    }
}
