//! Scale: concurrent `run_code` programs on a multi-threaded Tokio runtime (sandboxes spread
//! over their own threads), from 1 to 256 programs at once, each making 100 awaited tool calls
//! through the full pipeline.
//!
//! Criterion reports the time of one wave (all N programs started together, all finished) with
//! throughput in programs; the cost per program shows how cost grows with concurrency. Before
//! the waves, one 256-program wave is sampled for peak RSS: memory per concurrent sandbox is
//! the peak growth over the idle baseline, divided by 256, printed.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

const LEVELS: [usize; 5] = [1, 4, 16, 64, 256];

/// Each program: 100 sequential awaited calls, each answer checked.
const PROGRAM: &str = "let sum = 0;\n\
    for (let i = 0; i < 100; i++) {\n\
      const r = await tools.echo({ n: i }) as { n: number };\n\
      if (r.n !== i) throw new Error('cross-talk at ' + i);\n\
      sum += r.n;\n\
    }\n\
    return sum;";

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let echo = ToolDefinition::builder("echo")
        .description("Echoes its arguments.")
        .parameters_json(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        )
        .concurrency_safe(true)
        .execute(|args, _| async move { Ok((*args).clone()) })
        .build()
        .expect("valid tool");
    registry.register(echo).expect("registers").keep();
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).expect("valid config");
    CodeMode::new(Arc::new(runtime))
        .install(&registry)
        .expect("Code Mode installs");
    registry
}

/// Runs `n` programs at once and checks every result.
async fn wave(registry: &ToolRegistry, n: usize) {
    let runs = (0..n).map(|i| {
        let registry = registry.clone();
        tokio::spawn(async move {
            let input = ToolExecutionInput::new(
                format!("wave-{i}"),
                "run_code",
                json!({"code": PROGRAM, "description": "100 calls"}),
            );
            registry.execute(input).await
        })
    });
    for run in futures_util::future::join_all(runs).await {
        let result = run.expect("joined");
        assert_eq!(
            result.value().map(|v| &v["result"]),
            Some(&json!(4950)),
            "{result:?}"
        );
    }
}

/// Resident set size of this process, in KiB (Linux; `None` elsewhere).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak RSS growth during one 256-program wave, per program.
fn memory_per_sandbox(tokio: &tokio::runtime::Runtime, registry: &ToolRegistry) {
    tokio.block_on(wave(registry, 16));
    let Some(baseline) = rss_kib() else {
        println!("run_code/scale: memory per sandbox: skipped (no /proc/self/status)");
        return;
    };
    let peak = Arc::new(AtomicU64::new(baseline));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(now) = rss_kib() {
                    peak.fetch_max(now, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    tokio.block_on(wave(registry, 256));
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let growth = peak.load(Ordering::Relaxed).saturating_sub(baseline);
    println!(
        "run_code/scale: 256 concurrent programs: peak RSS +{growth} KiB over {baseline} KiB ({} KiB per concurrent sandbox)",
        growth / 256
    );
}

fn benches(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let registry = registry();
    memory_per_sandbox(&tokio, &registry);
    let mut group = c.benchmark_group("run_code/scale_100_calls");
    group.sample_size(10);
    for n in LEVELS {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("{n} concurrent"), |b| {
            b.iter(|| tokio.block_on(wave(&registry, n)))
        });
    }
    group.finish();
}

criterion_group! {
    name = scale;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = benches
}

fn main() {
    scale();
    Criterion::default().configure_from_args().final_summary();
}
