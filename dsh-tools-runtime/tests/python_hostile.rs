//! Hostile Python programs (`tests/python/hostile/*.py`, one file per class), run in a child
//! process on the Monty runtime.
//!
//! Each file starts with `# expect: <kind>[: <message prefix>]`, and may add
//! `# limits: cpu=<ms>ms wall=<ms>ms output=<bytes>` over the corpus defaults ([`corpus_config`])
//! and `# isolation: workers` to run in a worker process (with a 16 MiB memory limit).
//!
//! The parent test re-invokes this test binary on the ignored test [`hostile_corpus_child`] and
//! checks its exit status: the host process survived every program. The child runs the files in
//! turn and checks that each
//! - ends in its named outcome kind, with its message prefix;
//! - within its limit + 250 ms (the interpreter-time budget for a budget timeout, the wall-clock
//!   ceiling otherwise);
//! - leaves no thread behind (in process, the runtime keeps no idle thread).

#![cfg(feature = "python")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

#[path = "python/support.rs"]
#[allow(
    dead_code,
    reason = "the Python tests' helpers; this binary uses a few"
)]
mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use dsh_tools_runtime::code::CodeRuntime;
use dsh_tools_runtime::code::monty::{Isolation, MontyConfig, WorkerConfig, live_threads};
use support::{WORKER, binding, request, runtime_with, tools};

/// How much later than its limit a program may end.
const TOLERANCE: Duration = Duration::from_millis(250);
/// Marks the child's result lines on its standard output.
const RESULT: &str = "hostile-result";

/// The corpus defaults: short budgets so every file ends quickly, no idle thread (so every
/// thread that ran a program must end).
fn corpus_config(workers: bool) -> MontyConfig {
    let isolation = if workers {
        Isolation::Workers(WorkerConfig {
            memory_limit_bytes: 16 << 20,
            workers: 1,
            ..WorkerConfig::new(WORKER, Vec::<String>::new())
        })
    } else {
        Isolation::InProcess
    };
    MontyConfig {
        cpu_budget: Duration::from_millis(300),
        wall_clock: Duration::from_millis(1000),
        idle_threads: 0,
        isolation,
        ..MontyConfig::default()
    }
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the hostile corpus")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
}

/// One corpus file: its program, expected outcome and limits.
struct Hostile {
    name: String,
    program: String,
    kind: String,
    message: Option<String>,
    key: String,
    config: MontyConfig,
}

fn millis(value: &str) -> Duration {
    let ms = value.strip_suffix("ms").expect("a duration in ms");
    Duration::from_millis(ms.parse().expect("a number of ms"))
}

fn parse(path: &Path) -> Hostile {
    let name = path
        .file_stem()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let program = std::fs::read_to_string(path).expect("a UTF-8 program");
    let header = |key: &str| {
        program
            .lines()
            .take_while(|line| line.starts_with('#'))
            .find_map(|line| line.strip_prefix(&format!("# {key}: ")))
            .map(str::to_owned)
    };
    let expect = header("expect").unwrap_or_else(|| panic!("{name}: no `# expect:` line"));
    let (kind, message) = match expect.split_once(": ") {
        Some((kind, message)) => (kind.to_owned(), Some(message.to_owned())),
        None => (expect, None),
    };
    let limits = header("limits").unwrap_or_default();
    let workers = header("isolation").as_deref() == Some("workers");
    let mut config = corpus_config(workers);
    for setting in limits.split_whitespace() {
        match setting.split_once('=').expect("key=value") {
            ("cpu", v) => config.cpu_budget = millis(v),
            ("wall", v) => config.wall_clock = millis(v),
            ("output", v) => config.max_output_bytes = v.parse().expect("bytes"),
            (key, _) => panic!("{name}: unknown limit {key}"),
        }
    }
    Hostile {
        key: format!("{limits} {workers}"),
        name,
        program,
        kind,
        message,
        config,
    }
}

/// The `tools` namespace of the corpus: `echo` resolves with its arguments, `fail` fails,
/// `never` never settles.
fn corpus_tools() -> dsh_tools_runtime::code::BindingNamespace {
    let echo = binding(|args| async move { Ok(args) });
    let fail = binding(|_| async { Err("disk on fire".to_owned()) });
    let never = binding(|_| std::future::pending());
    tools(vec![("echo", echo), ("fail", fail), ("never", never)])
}

/// Waits until no in-process thread is alive; how long it took.
fn threads_drained(name: &str) -> Duration {
    let started = Instant::now();
    while live_threads() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{name}: a thread never ended"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    started.elapsed()
}

/// The child half: runs the corpus in this process (only when the parent asks for it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child half of hostile_corpus_in_a_child_process, which runs it"]
async fn hostile_corpus_child() {
    let corpus: Vec<Hostile> = corpus_files().iter().map(|path| parse(path)).collect();
    let mut runtimes = HashMap::new();
    for hostile in corpus {
        let runtime = runtimes
            .entry(hostile.key.clone())
            .or_insert_with(|| runtime_with(hostile.config.clone()));
        println!("hostile-start {}", hostile.name);
        let started = Instant::now();
        let run = runtime.run(request(&hostile.program, vec![corpus_tools()]));
        let result = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .unwrap_or_else(|_| panic!("{}: the run never ended", hostile.name))
            .expect("valid bindings");
        let elapsed = started.elapsed();
        let error = result
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no failure: {result:?}", hostile.name));
        assert_eq!(
            error.kind.as_str(),
            hostile.kind,
            "{}: {error:?}",
            hostile.name
        );
        if let Some(prefix) = &hostile.message {
            assert!(
                error.message.starts_with(prefix.as_str()),
                "{}: {:?} does not start with {prefix:?}",
                hostile.name,
                error.message
            );
        }
        let limit = if error.message.starts_with("compute budget exhausted") {
            hostile.config.cpu_budget
        } else {
            hostile.config.wall_clock
        };
        assert!(
            elapsed <= limit + TOLERANCE,
            "{}: ended after {elapsed:?}, limit {limit:?}",
            hostile.name
        );
        let drained = tokio::task::block_in_place(|| threads_drained(&hostile.name));
        let first_line = error.message.lines().next().unwrap_or_default();
        println!("hostile-message {}: {first_line}", hostile.name);
        println!(
            "{RESULT} {} {} {} {} {} {}",
            hostile.name,
            error.kind,
            elapsed.as_millis(),
            limit.as_millis(),
            drained.as_millis(),
            runtime.isolation(),
        );
    }
}

#[test]
fn hostile_corpus_in_a_child_process() {
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "hostile_corpus_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the child starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stdout
        .lines()
        .rfind(|l| l.starts_with("hostile-start "))
        .unwrap_or("before the first program");
    assert!(
        output.status.success(),
        "the host process did not survive ({}; last started: {last})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    let lines: Vec<Vec<&str>> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix(&format!("{RESULT} ")))
        .map(|line| line.split(' ').collect())
        .collect();
    assert_eq!(
        lines.len(),
        corpus_files().len(),
        "one result per file:\n{stdout}"
    );
    let number = |s: &str| s.parse::<i128>().expect("a number");
    let slowest = lines
        .iter()
        .max_by_key(|l| number(l[2]) - number(l[3]))
        .expect("a result");
    let in_workers = lines.iter().filter(|l| l[5] == "process").count();
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "python-hostile-corpus",
        &format!(
            "python hostile corpus: {} programs ({in_workers} in worker processes) in a child process, \
             all in their named outcome; slowest termination against its limit: {} ({}) {} ms vs {} ms \
             (+{} ms, tolerance 250 ms)",
            lines.len(),
            slowest[0],
            slowest[1],
            slowest[2],
            slowest[3],
            number(slowest[2]) - number(slowest[3]),
        ),
    );
}
