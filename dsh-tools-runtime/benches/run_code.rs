//! `run_code` end to end against a Node.js `worker_thread` doing the same job, in one run.
//!
//! - `run_code/three_calls/dsh_tools`: `ToolRegistry::execute` of a `run_code` call — the
//!   registry pipeline, the swc type strip, a fresh QuickJS sandbox, three awaited tool calls
//!   each through the full pipeline, the completion rendered;
//! - `run_code/three_calls/node_worker_thread`: `benches/node/run_code_worker.mjs`, started by
//!   this benchmark: a fresh `worker_thread` per run, the same program (types removed by hand:
//!   Node 20 has no type strip, which favours Node), three calls answered by the parent thread.
//!   Timed inside Node (no pipe round trip is charged); skipped with a printed reason when `node`
//!   is absent.
//! - `run_code/three_calls/node_prewarmed_worker`: the same, on one worker started before the
//!   clock runs and reused for every run (fresh bindings and console per program, but the
//!   worker's isolate shared across runs): no worker start-up on the critical path — the fairest
//!   Node can be, and less isolation than either other side.
//!
//! - `run_code/one_awaited_call`: the marginal cost of one awaited `tools.x()` call through the
//!   registry (bridge, scheduler, full pipeline), from programs making n calls and none.
//!
//! - `run_code/static_check_refusal`: the same program with one misspelled tool name — the
//!   registry pipeline and the static check (one swc parse and walk), which refuses it before any
//!   sandbox starts: an upper bound of what the check adds to every run.
//!
//! Both sides are checked to produce the same completion before anything is timed, and the
//! median ratio is printed at the end.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};

const GROUP: &str = "run_code/three_calls";

const PROGRAM: &str = "interface Hit { path: string; line: number }\n\
    const files = await tools.list({ dir: 'src' }) as string[];\n\
    const hits: Hit[] = await tools.search({ pattern: 'TODO', files });\n\
    const text = await tools.read({ path: hits[0].path });\n\
    console.log(`${hits.length} hits`);\n\
    return { first: hits[0], size: (text as string).length };";

fn tool(name: &str, parameters: Value, value: Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("A benchmark tool.")
        .parameters_json(parameters)
        .concurrency_safe(true)
        .execute(move |_, _| {
            let value = value.clone();
            async move { Ok(value) }
        })
        .build()
        .expect("valid tool")
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let string = json!({"type": "string"});
    let object = |properties: Value, required: &[&str]| json!({"type": "object", "properties": properties, "required": required});
    for def in [
        tool(
            "list",
            object(json!({"dir": string}), &["dir"]),
            json!(["a.rs", "b.rs"]),
        ),
        tool(
            "search",
            object(
                json!({"pattern": string, "files": {"type": "array", "items": string}}),
                &["pattern", "files"],
            ),
            json!([{"path": "a.rs", "line": 3}]),
        ),
        tool(
            "read",
            object(json!({"path": string}), &["path"]),
            json!("fn main() {}"),
        ),
    ] {
        registry.register(def).expect("registers").keep();
    }
    let config = QuickJsConfig {
        max_tool_calls: usize::MAX,
        ..QuickJsConfig::default()
    };
    let runtime = QuickJsRuntime::new(config).expect("valid config");
    CodeMode::new(Arc::new(runtime))
        .install(&registry)
        .expect("Code Mode installs");
    registry
}

async fn run_code(registry: &ToolRegistry) -> Value {
    run_program(registry, PROGRAM).await
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

/// The Node.js side, a child process speaking the script's line protocol.
struct NodeWorker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl NodeWorker {
    fn start() -> Result<Self, String> {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/node/run_code_worker.mjs"
        );
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("`node` could not be started ({e})"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
        })
    }

    fn ask(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("node stdin");
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).expect("node stdout");
        assert!(!answer.is_empty(), "node exited");
        answer
    }

    /// `iters` runs timed inside Node (`warm`: on the reused, pre-warmed worker).
    fn run(&mut self, iters: u64, warm: bool) -> Duration {
        let line = if warm {
            format!("warm {iters}")
        } else {
            iters.to_string()
        };
        let nanos: u64 = self.ask(&line).trim().parse().expect("nanos");
        Duration::from_nanos(nanos)
    }
}

impl Drop for NodeWorker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn benches(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let registry = registry();
    let ours = tokio.block_on(run_code(&registry));
    assert_eq!(
        ours,
        json!({"logs": ["1 hits"], "result": {"first": {"path": "a.rs", "line": 3}, "size": 12}})
    );

    // The static check alone (it refuses the program before the sandbox).
    let refused = format!("{PROGRAM}\nawait tools.raed({{ path: 'x' }});");
    c.bench_function("run_code/static_check_refusal", |b| {
        b.iter(|| {
            let input = ToolExecutionInput::new(
                "bench",
                "run_code",
                json!({"code": refused, "description": "A benchmark program"}),
            );
            let result = tokio.block_on(registry.execute(input));
            assert!(result.is_error());
            result
        })
    });

    // One awaited call through the registry: a program making `n` sequential calls minus one
    // making none, over `n` (each call runs the whole pipeline via the bridge).
    c.bench_function("run_code/one_awaited_call", |b| {
        b.iter_custom(|iters| {
            let program = |n: u64| {
                format!("for (let i = 0; i < {n}; i++) await tools.read({{ path: 'a.rs' }});")
            };
            tokio.block_on(async {
                let start = Instant::now();
                run_program(&registry, &program(0)).await;
                let baseline = start.elapsed();
                let start = Instant::now();
                run_program(&registry, &program(iters)).await;
                // A sample of a few calls can measure under its baseline; criterion refuses a zero.
                start
                    .elapsed()
                    .saturating_sub(baseline)
                    .max(Duration::from_nanos(1))
            })
        })
    });

    let mut group = c.benchmark_group(GROUP);
    group.bench_function("dsh_tools", |b| {
        b.iter(|| tokio.block_on(run_code(&registry)))
    });
    match NodeWorker::start() {
        Ok(mut node) => {
            for check in ["check", "check warm"] {
                let check: Value = serde_json::from_str(&node.ask(check)).expect("node json");
                assert_eq!(
                    check["value"], ours["result"],
                    "node computed something else"
                );
                assert_eq!(check["logs"], ours["logs"], "node logged something else");
            }
            group.sample_size(20);
            group.measurement_time(Duration::from_secs(8));
            group.bench_function("node_worker_thread", |b| {
                b.iter_custom(|iters| node.run(iters, false))
            });
            group.bench_function("node_prewarmed_worker", |b| {
                b.iter_custom(|iters| node.run(iters, true))
            });
        }
        Err(reason) => println!("{GROUP}/node_worker_thread: skipped: {reason}"),
    }
    group.finish();
}

/// The median of one benchmark from criterion's saved estimates, in nanoseconds.
fn median_ns(function: &str) -> Option<f64> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").into());
    let path = target
        .join("criterion")
        .join(GROUP.replace('/', "_"))
        .join(function)
        .join("new/estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

criterion_group! {
    name = run_code_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = benches
}

fn main() {
    run_code_benches();
    Criterion::default().configure_from_args().final_summary();
    let Some(ours) = median_ns("dsh_tools") else {
        return;
    };
    for (function, label) in [
        ("node_worker_thread", "a fresh worker_thread per run"),
        ("node_prewarmed_worker", "a pre-warmed, reused worker"),
    ] {
        if let Some(node) = median_ns(function) {
            println!(
                "{GROUP}: dsh-tools {:.3} ms vs Node.js on {label} {:.3} ms (median): {:.1}x faster",
                ours / 1e6,
                node / 1e6,
                node / ours
            );
        }
    }
}
