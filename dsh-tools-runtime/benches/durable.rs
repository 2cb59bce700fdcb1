//! Durable Code Mode: what resuming a suspended run costs as its journal grows, and how large
//! its continuation is.
//!
//! - `durable/resume/<n>`: `CodeModeExt::resume_code` of a run that made `n` awaited tool
//!   calls before the one it suspended on — open and verify the continuation, replay the `n`
//!   calls from the journal (no pipeline), run the approved call through the pipeline, finish;
//! - `durable/live/<n>`: the same program run live through `execute` (its `n` calls through the
//!   full pipeline, the asking call approved by the approval service) — the comparison;
//! - printed: the continuation's size for each `n` and the bytes each journaled call adds;
//! - `durable/resume-python/<n>` (feature `python`): the same program in Python on Monty, whose
//!   continuation carries the paused interpreter instead of being replayed — resuming restores
//!   it and runs the approved call only; printed: its continuation's size.
//!
//! - `durable/journaled/<store>` (feature `store`): the program of `durable/live/10` run with
//!   `run_code_journaled`, journaled as it goes in each store of `dsh-tools-store` (memory, file,
//!   and PostgreSQL / Redis when `DSH_TEST_POSTGRES_URL` / `DSH_TEST_REDIS_URL` name the servers
//!   of `scripts/services`): the run's begin and end, an intent before the write, each of the 11
//!   calls journaled before its result reaches the program. Printed: the cost per call as a ratio
//!   to the live run's.
//!
//! The spent-id store of the bench spends nothing, so one continuation is resumed again and
//! again.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group};
use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::durable::{
    ContinuationKey, Decision, Durability, Resume, RunOutcome, SpentStore,
};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

const LENGTHS: [usize; 3] = [10, 100, 1_000];

/// Spends nothing: the bench resumes one continuation many times.
struct NeverSpent;

impl SpentStore for NeverSpent {
    fn spend(&self, _id: &str) -> std::io::Result<bool> {
        Ok(true)
    }
}

/// Approves every request (the live comparison).
struct Yes;

impl ApprovalService for Yes {
    fn request(&self, _request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        Box::pin(std::future::ready(ApprovalOutcome::AllowedOnce))
    }
}

fn registry() -> ToolRegistry {
    let config = QuickJsConfig {
        max_tool_calls: 2_000,
        ..QuickJsConfig::default()
    };
    registry_on(Arc::new(QuickJsRuntime::new(config).expect("valid config")))
}

fn registry_on(runtime: Arc<dyn dsh_tools_runtime::code::CodeRuntime>) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(runtime)
        .install(&registry)
        .expect("Code Mode installs");
    let read = ToolDefinition::builder("read")
        .description("Read one line.")
        .parameters_json(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        )
        .execute(|args, _| async move { Ok(json!(format!("line {}: fn main() {{}}", args["n"]))) })
        .build()
        .expect("valid tool");
    let write = ToolDefinition::builder("write")
        .description("Write a file.")
        .parameters_json(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
        .execute(|_, _| async { Ok(json!("written")) })
        .build()
        .expect("valid tool");
    registry.register(read).expect("registers").keep();
    registry.register(write).expect("registers").keep();
    registry
        .on_pre_execute(pre_execute_fn(|exec, next| async move {
            if &*exec.name == "write" {
                PreToolDecision::Ask { reason: None }
            } else {
                next.run().await
            }
        }))
        .keep();
    registry.set_approval(Arc::new(Yes));
    registry
}

fn input(n: usize, agent: dsh_tools::exec::ScopeId) -> ToolExecutionInput {
    let program = format!(
        "for (let i = 0; i < {n}; i++) {{ await tools.read({{ n: i }}); }}\n\
         await tools.write({{ path: 'notes.txt' }});\n\
         return 'done';"
    );
    input_of(program, agent)
}

#[cfg(feature = "python")]
fn python_input(n: usize, agent: dsh_tools::exec::ScopeId) -> ToolExecutionInput {
    let program = format!(
        "for i in range({n}):\n    await tools.read({{'n': i}})\n\
         await tools.write({{'path': 'notes.txt'}})\n\
         return 'done'"
    );
    input_of(program, agent)
}

fn input_of(program: String, agent: dsh_tools::exec::ScopeId) -> ToolExecutionInput {
    let mut input = ToolExecutionInput::new(
        "bench-run",
        "run_code",
        json!({"code": program, "description": "Read then write"}),
    );
    input.agent = Some(agent);
    input
}

fn benches(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let registry = registry();
    let agent = registry.new_scope();
    let durability = Durability::new(ContinuationKey::generate(), Arc::new(NeverSpent));

    let mut continuations = Vec::new();
    for n in LENGTHS {
        let outcome =
            tokio.block_on(registry.run_code_suspendable(input(n, agent.id()), &durability));
        let RunOutcome::Suspended { continuation, .. } = outcome else {
            panic!("the write suspends the run");
        };
        continuations.push((n, continuation));
    }
    for (n, continuation) in &continuations {
        println!(
            "durable/continuation/{n}: {} bytes ({:.1} bytes per journaled call)",
            continuation.len(),
            continuation.len() as f64 / *n as f64
        );
    }
    let (small, large) = (&continuations[0], &continuations[2]);
    println!(
        "durable/continuation: {:.1} bytes per additional journaled call ({} -> {} calls)",
        (large.1.len() - small.1.len()) as f64 / (large.0 - small.0) as f64,
        small.0,
        large.0
    );

    let mut group = c.benchmark_group("durable/resume");
    for (n, continuation) in &continuations {
        let check = tokio.block_on(registry.resume_code(
            continuation,
            Resume::new(Decision::APPROVE).for_agent(agent.id()),
            &durability,
        ));
        let Ok(RunOutcome::Completed(result)) = check else {
            panic!("the resumed run completes");
        };
        assert_eq!(result.value(), Some(&json!({"logs": [], "result": "done"})));
        group.bench_with_input(
            BenchmarkId::from_parameter(n),
            continuation,
            |b, continuation| {
                b.iter(|| {
                    let resume = Resume::new(Decision::APPROVE).for_agent(agent.id());
                    tokio
                        .block_on(registry.resume_code(continuation, resume, &durability))
                        .expect("resumes")
                })
            },
        );
    }
    group.finish();

    let mut group = c.benchmark_group("durable/live");
    for n in LENGTHS {
        let result = tokio.block_on(registry.execute(input(n, agent.id())));
        assert_eq!(result.value(), Some(&json!({"logs": [], "result": "done"})));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, n| {
            b.iter(|| tokio.block_on(registry.execute(input(*n, agent.id()))))
        });
    }
    group.finish();

    #[cfg(feature = "python")]
    python(c, &tokio, &durability);
    #[cfg(feature = "store")]
    journaled(c, &tokio, &registry, agent.id());
}

/// The calls of the journaled runs: `JOURNALED_READS` reads and the write.
#[cfg(feature = "store")]
const JOURNALED_READS: usize = 10;

/// The stores a journaled run can go to here: memory and file always, the servers when named.
#[cfg(feature = "store")]
fn stores(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn dsh_tools_store::DurableStore>)> {
    use dsh_tools_store::{FileStore, MemoryStore, PostgresStore, RedisStore, StoreKey};
    let key = StoreKey::generate();
    let file = FileStore::open(dir, key.clone()).expect("a store directory");
    let mut stores: Vec<(&'static str, Arc<dyn dsh_tools_store::DurableStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new(key.clone()))),
        ("file", Arc::new(file)),
    ];
    let servers = [
        ("postgres", "DSH_TEST_POSTGRES_URL"),
        ("redis", "DSH_TEST_REDIS_URL"),
    ];
    for (name, variable) in servers {
        let Ok(url) = std::env::var(variable) else {
            eprintln!("{name} left out: {variable} is not set (scripts/services start)");
            continue;
        };
        let store: Arc<dyn dsh_tools_store::DurableStore> = if name == "postgres" {
            Arc::new(PostgresStore::new(&url, key.clone()).expect("a PostgreSQL store"))
        } else {
            Arc::new(RedisStore::new(&url, key.clone()).expect("a Redis store"))
        };
        stores.push((name, store));
    }
    stores
}

/// The cost of journaling a run as it goes, per store, beside the same run live.
#[cfg(feature = "store")]
fn journaled(
    c: &mut Criterion,
    tokio: &tokio::runtime::Runtime,
    registry: &ToolRegistry,
    agent: dsh_tools::exec::ScopeId,
) {
    use dsh_tools_runtime::code::durable::run_code_journaled;
    use std::time::Instant;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let nonce = format!("{:x}", std::process::id());
    let mut next = 0_u64;
    let mut fresh = |store: &str| {
        next += 1;
        let mut input = input(JOURNALED_READS, agent);
        input.call_id = format!("bench-{nonce}-{store}-{next}");
        input
    };
    let live = per_run(|| {
        let result = tokio.block_on(registry.execute(input(JOURNALED_READS, agent)));
        assert_eq!(result.value(), Some(&json!({"logs": [], "result": "done"})));
    });
    let mut group = c.benchmark_group("durable/journaled");
    for (name, store) in stores(dir.path()) {
        let durability =
            Durability::new(ContinuationKey::generate(), Arc::new(NeverSpent)).with_store(store);
        let mut run = || {
            let outcome = tokio.block_on(run_code_journaled(registry, fresh(name), &durability));
            let RunOutcome::Completed(result) = outcome else {
                panic!("a journaled run without suspension completes");
            };
            assert_eq!(result.value(), Some(&json!({"logs": [], "result": "done"})));
        };
        let journaled = per_run(&mut run);
        let calls = (JOURNALED_READS + 1) as f64;
        println!(
            "durable/journaled/{name}: {:.1} us per call journaled, {:.1} us live: {:.2}x",
            journaled.as_secs_f64() * 1e6 / calls,
            live.as_secs_f64() * 1e6 / calls,
            journaled.as_secs_f64() / live.as_secs_f64()
        );
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let start = Instant::now();
                for _ in 0..iterations {
                    run();
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}

/// The median wall time of `run` over 31 runs (after 5 to warm up): the printed ratios.
#[cfg(feature = "store")]
fn per_run(mut run: impl FnMut()) -> Duration {
    for _ in 0..5 {
        run();
    }
    let mut times: Vec<Duration> = (0..31)
        .map(|_| {
            let start = std::time::Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The resume cost and continuation size of the same program in Python (a snapshot).
#[cfg(feature = "python")]
fn python(c: &mut Criterion, tokio: &tokio::runtime::Runtime, durability: &Durability) {
    use dsh_tools_runtime::code::monty::{MontyConfig, MontyRuntime};
    let config = MontyConfig {
        max_tool_calls: 2_000,
        ..MontyConfig::default()
    };
    let registry = registry_on(Arc::new(MontyRuntime::new(config).expect("valid config")));
    let agent = registry.new_scope();
    let mut group = c.benchmark_group("durable/resume-python");
    for n in LENGTHS {
        let outcome =
            tokio.block_on(registry.run_code_suspendable(python_input(n, agent.id()), durability));
        let RunOutcome::Suspended { continuation, .. } = outcome else {
            panic!("the write suspends the run");
        };
        println!(
            "durable/continuation-python/{n}: {} bytes",
            continuation.len()
        );
        let check = tokio.block_on(registry.resume_code(
            &continuation,
            Resume::new(Decision::APPROVE).for_agent(agent.id()),
            durability,
        ));
        let Ok(RunOutcome::Completed(result)) = check else {
            panic!("the resumed run completes");
        };
        assert_eq!(result.value(), Some(&json!({"logs": [], "result": "done"})));
        group.bench_with_input(
            BenchmarkId::from_parameter(n),
            &continuation,
            |b, continuation| {
                b.iter(|| {
                    let resume = Resume::new(Decision::APPROVE).for_agent(agent.id());
                    tokio
                        .block_on(registry.resume_code(continuation, resume, durability))
                        .expect("resumes")
                })
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = durable_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5)).sample_size(20);
    targets = benches
}

fn main() {
    durable_benches();
    Criterion::default().configure_from_args().final_summary();
}
