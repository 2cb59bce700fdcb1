//! Python Code Mode against its comparisons, in one run.
//!
//! - `python/run_code/three_calls/*`: the same job — three awaited tool calls, a printed line, a
//!   returned object — as a `run_code` call through `ToolRegistry::execute` (registry pipeline,
//!   a fresh interpreter, each call through the full pipeline, the completion rendered):
//!   `monty` (in process), `monty_worker` (in a worker process: the process boundary), and
//!   `quickjs` (the TypeScript flavour of the same program); then CPython doing the same job
//!   (`benches/python/run_code_cpython.py`, its calls answered by this process over pipes):
//!   `cpython_fresh_process` (a new `python3` per run, as a CPython sandbox needs) and
//!   `cpython_warm_process` (one process, a fresh namespace per run — no isolation between
//!   runs, the floor of any CPython design). Skipped with a printed reason without `python3`.
//! - `python/fresh_interpreter`: a trivial program on the runtime alone (no registry), in
//!   process and in a worker: the fixed cost of a run and of the process boundary.
//! - `python/one_awaited_call`: the marginal cost of one awaited `tools.x()` through the registry,
//!   in process and in a worker.
//!
//! Every side is checked to produce the same completion before anything is timed; the median
//! ratios are printed at the end.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::monty::{Isolation, MontyConfig, MontyRuntime, WorkerConfig};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{CodeRunRequest, CodeRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};

const GROUP: &str = "python/run_code/three_calls";
const WORKER: &str = env!("CARGO_BIN_EXE_dsh-monty-worker");
const CPYTHON: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/benches/python/run_code_cpython.py"
);

const PROGRAM: &str = "files = await tools.list({'dir': 'src'})\n\
    hits = await tools.search({'pattern': 'TODO', 'files': files})\n\
    text = await tools.read({'path': hits[0]['path']})\n\
    print(f'{len(hits)} hits')\n\
    return {'first': hits[0], 'size': len(text)}";

const PROGRAM_TS: &str = "const files = await tools.list({ dir: 'src' }) as string[];\n\
    const hits = await tools.search({ pattern: 'TODO', files }) as { path: string; line: number }[];\n\
    const text = await tools.read({ path: hits[0].path }) as string;\n\
    console.log(`${hits.length} hits`);\n\
    return { first: hits[0], size: text.length };";

fn answers() -> [(&'static str, Value); 3] {
    [
        ("list", json!(["a.rs", "b.rs"])),
        ("search", json!([{"path": "a.rs", "line": 3}])),
        ("read", json!("fn main() {}")),
    ]
}

fn registry(runtime: Arc<dyn CodeRuntime>) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    for (name, value) in answers() {
        let def = ToolDefinition::builder(name)
            .description("A benchmark tool.")
            .concurrency_safe(true)
            .execute(move |_, _| {
                let value = value.clone();
                async move { Ok(value) }
            })
            .build()
            .expect("valid tool");
        registry.register(def).expect("registers").keep();
    }
    CodeMode::new(runtime)
        .install(&registry)
        .expect("Code Mode installs");
    registry
}

fn monty(isolation: Isolation) -> Arc<dyn CodeRuntime> {
    let config = MontyConfig {
        max_tool_calls: usize::MAX,
        isolation,
        ..MontyConfig::default()
    };
    Arc::new(MontyRuntime::new(config).expect("valid config"))
}

fn workers() -> Isolation {
    Isolation::Workers(WorkerConfig {
        workers: 2,
        ..WorkerConfig::new(WORKER, Vec::<String>::new())
    })
}

async fn run_program(registry: &ToolRegistry, program: &str) -> Value {
    let input = ToolExecutionInput::new(
        "bench",
        "run_code",
        json!({"code": program, "description": "A benchmark program"}),
    );
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    result.value().expect("a value").clone()
}

/// A CPython process speaking `run_code_cpython.py`'s line protocol.
struct CPython {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl CPython {
    fn start(warm: bool) -> Result<Self, String> {
        let mut command = Command::new("python3");
        command.arg(CPYTHON);
        if warm {
            command.arg("--warm");
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("`python3` could not be started ({e})"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
        })
    }

    /// Runs the program, answering its calls; returns `{logs, result}`.
    fn run(&mut self) -> Value {
        writeln!(self.stdin, "{}", json!({"run": PROGRAM})).expect("python stdin");
        self.stdin.flush().expect("python stdin");
        let answers = answers();
        loop {
            let mut line = String::new();
            self.stdout.read_line(&mut line).expect("python stdout");
            assert!(!line.is_empty(), "python exited");
            let message: Value = serde_json::from_str(&line).expect("python json");
            if let Some(done) = message.get("done") {
                return done.clone();
            }
            let name = message["call"].as_str().expect("a call");
            let value = &answers
                .iter()
                .find(|(n, _)| *n == name)
                .expect("a known tool")
                .1;
            writeln!(self.stdin, "{}", json!({"value": value})).expect("python stdin");
            self.stdin.flush().expect("python stdin");
        }
    }
}

impl Drop for CPython {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The median of one benchmark (`group_dir/function`) from criterion's saved estimates.
fn median(id: &str) -> Option<f64> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").into());
    let path = target.join("criterion").join(id).join("new/estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn benches(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let in_process = registry(monty(Isolation::InProcess));
    let in_workers = registry(monty(workers()));
    let quickjs = registry(Arc::new(
        QuickJsRuntime::new(QuickJsConfig {
            max_tool_calls: usize::MAX,
            ..QuickJsConfig::default()
        })
        .expect("valid config"),
    ));
    let expected =
        json!({"logs": ["1 hits"], "result": {"first": {"path": "a.rs", "line": 3}, "size": 12}});
    assert_eq!(tokio.block_on(run_program(&in_process, PROGRAM)), expected);
    assert_eq!(tokio.block_on(run_program(&in_workers, PROGRAM)), expected);
    assert_eq!(tokio.block_on(run_program(&quickjs, PROGRAM_TS)), expected);

    let mut group = c.benchmark_group(GROUP);
    group.bench_function("monty", |b| {
        b.iter(|| tokio.block_on(run_program(&in_process, PROGRAM)))
    });
    group.bench_function("monty_worker", |b| {
        b.iter(|| tokio.block_on(run_program(&in_workers, PROGRAM)))
    });
    group.bench_function("quickjs", |b| {
        b.iter(|| tokio.block_on(run_program(&quickjs, PROGRAM_TS)))
    });
    match CPython::start(true) {
        Ok(mut warm) => {
            let check = warm.run();
            assert_eq!(check, expected, "CPython computed something else");
            group.bench_function("cpython_warm_process", |b| b.iter(|| warm.run()));
            group.sample_size(20);
            group.measurement_time(Duration::from_secs(10));
            group.bench_function("cpython_fresh_process", |b| {
                b.iter(|| CPython::start(false).expect("python3 starts").run())
            });
        }
        Err(reason) => eprintln!("skipped the CPython side: {reason}"),
    }
    group.finish();

    // The fixed cost of a run, without the registry: in process and across the process boundary.
    let runtimes = [
        ("in_process", monty(Isolation::InProcess)),
        ("worker", monty(workers())),
    ];
    let mut group = c.benchmark_group("python/fresh_interpreter");
    for (name, runtime) in &runtimes {
        let result = tokio
            .block_on(runtime.run(CodeRunRequest::new("return 1 + 1", Vec::new())))
            .expect("runs");
        assert_eq!(result.value, Some(json!(2)));
        group.bench_function(*name, |b| {
            b.iter(|| {
                tokio
                    .block_on(runtime.run(CodeRunRequest::new("return 1 + 1", Vec::new())))
                    .expect("runs")
            })
        });
    }
    group.finish();

    // One awaited call through the registry: n sequential calls minus none, over n.
    let mut group = c.benchmark_group("python/one_awaited_call");
    for (name, registry) in [("in_process", &in_process), ("worker", &in_workers)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let program = |n: u64| {
                    format!("for i in range({n}):\n    await tools.read({{'path': 'a.rs'}})\n")
                };
                tokio.block_on(async {
                    let start = Instant::now();
                    run_program(registry, &program(0)).await;
                    let baseline = start.elapsed();
                    let start = Instant::now();
                    run_program(registry, &program(iters)).await;
                    start.elapsed().saturating_sub(baseline)
                })
            })
        });
    }
    group.finish();

    let ratio = |a: &str, b: &str| Some(median(a)? / median(b)?);
    for (what, a, b) in [
        (
            "Python run_code in a worker vs in process",
            "python_run_code_three_calls/monty_worker",
            "python_run_code_three_calls/monty",
        ),
        (
            "Python run_code vs TypeScript run_code",
            "python_run_code_three_calls/monty",
            "python_run_code_three_calls/quickjs",
        ),
        (
            "CPython, fresh process vs Monty in process",
            "python_run_code_three_calls/cpython_fresh_process",
            "python_run_code_three_calls/monty",
        ),
        (
            "CPython, fresh process vs Monty in a worker",
            "python_run_code_three_calls/cpython_fresh_process",
            "python_run_code_three_calls/monty_worker",
        ),
        (
            "CPython, warm process vs Monty in process",
            "python_run_code_three_calls/cpython_warm_process",
            "python_run_code_three_calls/monty",
        ),
        (
            "fresh interpreter, worker vs in process",
            "python_fresh_interpreter/worker",
            "python_fresh_interpreter/in_process",
        ),
    ] {
        if let Some(r) = ratio(a, b) {
            println!("{what}: {r:.2}x (median)");
        }
    }
}

criterion_group!(python, benches);

fn main() {
    python();
    Criterion::default().configure_from_args().final_summary();
}
