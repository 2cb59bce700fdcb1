//! Leaks: 10,000 sequential `run_code` runs through the registry and the QuickJS sandbox. Each
//! run registers a fresh tool whose definition closure holds a drop probe and whose body future
//! holds another, calls it from the program twice, and disposes it: afterwards no probe may be
//! alive, and the process's resident set must be back at its baseline (± 1 MiB) once warmed up.
//!
//! Its own test binary, so no other test allocates while the resident set is measured.
#![cfg(feature = "code-mode")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

#[path = "sandbox/support.rs"]
#[allow(
    dead_code,
    reason = "the sandbox tests' helpers; this binary uses the drop probe"
)]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;
use support::Probe;

const WARM_UP: usize = 1_000;
const RUNS: usize = 10_000;
const MIB: i64 = 1 << 20;

/// A tool whose closure holds one probe and whose every call's future holds another.
fn probed_tool(live: &Arc<AtomicUsize>) -> ToolDefinition {
    let held = Probe::new(live);
    let live = Arc::clone(live);
    ToolDefinition::builder("probe")
        .description("Echoes with drop probes.")
        .execute(move |args, _ctx| {
            let _held = &held;
            let in_flight = Probe::new(&live);
            async move {
                let _in_flight = in_flight;
                Ok(args["n"].clone())
            }
        })
        .build()
        .expect("the tool builds")
}

/// The resident set of this process, in bytes (Linux `/proc/self/status`).
fn resident_bytes() -> Option<i64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

async fn run_once(registry: &ToolRegistry, live: &Arc<AtomicUsize>, i: usize) {
    let registration = registry.register(probed_tool(live)).expect("registers");
    let input = ToolExecutionInput::new(
        format!("leak-{i}"),
        "run_code",
        json!({
            "code": "const a = await tools.probe({ n: 1 });\nconst b = await tools.probe({ n: 2 });\nconsole.log('run');\nreturn a + b;",
            "description": "Call the probe twice"
        }),
    );
    let result = registry.execute(input).await;
    assert_eq!(
        result.value(),
        Some(&json!({"logs": ["run"], "result": 3})),
        "run {i}: {result:?}"
    );
    registration.dispose();
    assert_eq!(live.load(Ordering::SeqCst), 0, "probes alive after run {i}");
}

#[tokio::test]
async fn ten_thousand_runs_leave_no_probe_and_no_memory_behind() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config");
    CodeMode::new(Arc::new(runtime)).install(&registry).unwrap();
    let live = Arc::new(AtomicUsize::new(0));
    for i in 0..WARM_UP {
        run_once(&registry, &live, i).await;
    }
    let baseline = resident_bytes();
    let started = Instant::now();
    for i in 0..RUNS {
        run_once(&registry, &live, WARM_UP + i).await;
    }
    let elapsed = started.elapsed();
    let after = resident_bytes();
    assert_eq!(live.load(Ordering::SeqCst), 0);
    let (Some(baseline), Some(after)) = (baseline, after) else {
        dsh_tools_tests::record_figure(
            env!("CARGO_TARGET_TMPDIR"),
            "leaks",
            &format!(
                "leaks: {RUNS} runs, 0 live probes (no /proc/self/status here: RSS not measured)"
            ),
        );
        return;
    };
    let growth = after - baseline;
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "leaks",
        &format!(
            "leaks: {RUNS} sequential run_code runs in {} ms ({} µs each), 0 live probes; RSS {:.2} MiB \
             after {WARM_UP} warm-up runs, {:.2} MiB after ({:+} KiB, bound ±1024 KiB)",
            elapsed.as_millis(),
            elapsed.as_micros() / RUNS as u128,
            baseline as f64 / MIB as f64,
            after as f64 / MIB as f64,
            growth / 1024
        ),
    );
    assert!(
        growth.abs() <= MIB,
        "RSS moved by {growth} bytes over {RUNS} runs (baseline {baseline}, after {after})"
    );
}
