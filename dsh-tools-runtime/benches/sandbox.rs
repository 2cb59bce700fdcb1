//! The QuickJS sandbox: a fresh sandbox running a trivial program, a program strip + run with
//! three awaited host calls (the `run_code` shape minus the registry), the marginal cost of one
//! awaited host call, and the type strip alone.
//!
//! Every run is end to end through `CodeRuntime::run` on a current-thread Tokio runtime: thread
//! spawn, fresh QuickJS runtime and context, global setup, strip, evaluation, result.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::strip::{SourceLimits, strip_program};
use dsh_tools_runtime::code::{
    BindingFn, BindingNamespace, CodeRunRequest, CodeRunResult, CodeRuntime, ErrorClass,
};
use serde_json::json;
use tokio::runtime::Runtime;

const THREE_CALLS: &str = "interface Hit { path: string; line: number }\n\
    const files = await tools.list({ dir: 'src' }) as string[];\n\
    const hits: Hit[] = await tools.search({ pattern: 'TODO', files });\n\
    const text = await tools.read({ path: hits[0].path });\n\
    console.log(`${hits.length} hits`);\n\
    return { first: hits[0], size: (text as string).length };";

fn namespace() -> BindingNamespace {
    let list: BindingFn = Arc::new(|_| Box::pin(async { Ok(json!(["a.rs", "b.rs"])) }));
    let search: BindingFn =
        Arc::new(|_| Box::pin(async { Ok(json!([{ "path": "a.rs", "line": 3 }])) }));
    let read: BindingFn = Arc::new(|_| Box::pin(async { Ok(json!("fn main() {}")) }));
    let echo: BindingFn = Arc::new(|args| Box::pin(async move { Ok(args) }));
    BindingNamespace {
        global: "tools".to_owned(),
        functions: vec![
            ("list".to_owned(), list),
            ("search".to_owned(), search),
            ("read".to_owned(), read),
            ("echo".to_owned(), echo),
        ],
        error_class: Some(ErrorClass {
            name: "ToolCallError".to_owned(),
            member_name_property: "toolName".to_owned(),
        }),
    }
}

fn request(program: &str, bindings: Vec<BindingNamespace>) -> CodeRunRequest {
    CodeRunRequest::new(program, bindings)
}

async fn run(
    sandbox: &QuickJsRuntime,
    program: &str,
    bindings: Vec<BindingNamespace>,
) -> CodeRunResult {
    let result = sandbox
        .run(request(program, bindings))
        .await
        .expect("valid bindings");
    assert!(result.error.is_none(), "{result:?}");
    result
}

fn sandbox_benches(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let sandbox = QuickJsRuntime::new(QuickJsConfig {
        max_tool_calls: usize::MAX,
        ..QuickJsConfig::default()
    })
    .expect("valid config");

    c.bench_function("sandbox/fresh_trivial", |b| {
        b.iter(|| tokio.block_on(run(&sandbox, black_box("return 1;"), Vec::new())))
    });

    c.bench_function("sandbox/strip_run_3_calls", |b| {
        b.iter(|| tokio.block_on(run(&sandbox, black_box(THREE_CALLS), vec![namespace()])))
    });

    // One awaited call: a run making `n` sequential calls minus a run making none, over `n`.
    c.bench_function("sandbox/one_awaited_call", |b| {
        b.iter_custom(|iters| one_awaited_call(&tokio, &sandbox, iters))
    });

    // Latency of one run when a fresh sandbox is ready (a short pause between runs lets the
    // pool rebuild): the figures above are bound by rebuild throughput in a tight loop.
    let mut group = c.benchmark_group("sandbox/warm");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(2));
    group.bench_function("trivial_latency", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                std::thread::sleep(Duration::from_micros(400));
                let start = Instant::now();
                tokio.block_on(run(&sandbox, "return 1;", Vec::new()));
                total += start.elapsed();
            }
            total
        })
    });
    group.finish();

    c.bench_function("strip/three_calls_program", |b| {
        b.iter(|| strip_program(black_box(THREE_CALLS), &SourceLimits::default()).expect("strips"))
    });
}

fn one_awaited_call(tokio: &Runtime, sandbox: &QuickJsRuntime, iters: u64) -> Duration {
    let program = |n: u64| format!("for (let i = 0; i < {n}; i++) await tools.echo({{ i }});");
    tokio.block_on(async {
        let start = Instant::now();
        run(sandbox, &program(0), vec![namespace()]).await;
        let baseline = start.elapsed();
        let start = Instant::now();
        run(sandbox, &program(iters), vec![namespace()]).await;
        // A sample of a few calls can measure under its baseline; criterion refuses a zero.
        start
            .elapsed()
            .saturating_sub(baseline)
            .max(Duration::from_nanos(1))
    })
}

/// Resident set size of this process, in KiB (Linux; `None` elsewhere).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// RSS growth over 1,000 sequential runs (each making one call), after 100 warm-up runs.
fn rss_over_1000_runs() {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let sandbox = QuickJsRuntime::default();
    let program = "const r = await tools.echo({ n: 1 });\nconsole.log(r.n);\nreturn r;";
    tokio.block_on(async {
        for _ in 0..100 {
            run(&sandbox, program, vec![namespace()]).await;
        }
        let before = rss_kib();
        for _ in 0..1000 {
            run(&sandbox, program, vec![namespace()]).await;
        }
        if let (Some(before), Some(after)) = (before, rss_kib()) {
            let growth = after as i64 - before as i64;
            println!("sandbox/rss_over_1000_runs: {before} KiB -> {after} KiB ({growth:+} KiB)");
        }
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = sandbox_benches
}

fn main() {
    rss_over_1000_runs();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
