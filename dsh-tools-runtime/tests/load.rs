//! Load: 64 concurrent `run_code` programs × 100 tool calls each, through the registry and the
//! QuickJS sandbox, on a 2-worker multi-thread runtime — while another task keeps mutating the
//! registry (registering and disposing tools, restricting and disposing scopes).
//!
//! Each call carries a unique token and the tool echoes it with the sub-call id it ran under,
//! so every result is matched to its call; a global timeout turns a deadlock into a failure.
#![cfg(feature = "code-mode")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry, ToolRestriction};
use serde_json::{Value, json};

const PROGRAMS: usize = 64;
const CALLS: usize = 100;

/// Echoes its token with the id of the call it ran under.
fn token_tool(calls: Arc<AtomicUsize>) -> ToolDefinition {
    ToolDefinition::builder("token")
        .description("Echoes a token.")
        .parameters_json(json!({
            "type": "object",
            "properties": {"token": {"type": "string"}},
            "required": ["token"],
            "additionalProperties": false
        }))
        .concurrency_safe(true)
        .execute(move |args, ctx| {
            calls.fetch_add(1, Ordering::Relaxed);
            let call_id = ctx.execution().call_id.to_string();
            async move {
                // Interleave with the other calls in flight.
                tokio::task::yield_now().await;
                Ok(json!({"token": args["token"], "callId": call_id}))
            }
        })
        .build()
        .expect("the tool builds")
}

fn filler(n: usize) -> ToolDefinition {
    ToolDefinition::builder(format!("filler_{n}"))
        .description("Registered and disposed while programs run.")
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("the tool builds")
}

/// Ten rounds of ten parallel calls; returns every result in submission order.
fn program(n: usize) -> String {
    format!(
        "const out = [];\n\
         for (let round = 0; round < {rounds}; round++) {{\n\
           const batch = Array.from({{ length: 10 }}, (_, j) => tools.token({{ token: `{n}-${{round * 10 + j}}` }}));\n\
           out.push(...(await Promise.all(batch)));\n\
         }}\n\
         return out;",
        rounds = CALLS / 10
    )
}

/// Keeps mutating the registry until `stop`; returns how many mutations it made.
async fn mutate(registry: ToolRegistry, stop: Arc<AtomicBool>) -> usize {
    let mut mutations = 0;
    while !stop.load(Ordering::Acquire) {
        let added = registry.register(filler(mutations)).expect("registers");
        let scope = registry.new_scope();
        let restriction = scope
            .restrict(ToolRestriction {
                allow: None,
                deny: Some(vec!["token".to_owned()]),
            })
            .expect("restricts");
        tokio::task::yield_now().await;
        restriction.dispose();
        scope.dispose();
        added.dispose();
        mutations += 1;
        tokio::task::yield_now().await;
    }
    mutations
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_programs_of_a_hundred_calls_match_every_result_to_its_call() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let calls = Arc::new(AtomicUsize::new(0));
    registry
        .register(token_tool(Arc::clone(&calls)))
        .expect("registers")
        .keep();
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config");
    CodeMode::new(Arc::new(runtime)).install(&registry).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let mutator = tokio::spawn(mutate(registry.clone(), Arc::clone(&stop)));
    let started = Instant::now();
    let runs: Vec<_> = (0..PROGRAMS)
        .map(|n| {
            let registry = registry.clone();
            tokio::spawn(async move {
                let input = ToolExecutionInput::new(
                    format!("load-{n}"),
                    "run_code",
                    json!({"code": program(n), "description": "Echo a hundred tokens"}),
                );
                (n, registry.execute(input).await)
            })
        })
        .collect();
    let finished = tokio::time::timeout(Duration::from_secs(120), async {
        let mut results = Vec::with_capacity(PROGRAMS);
        for run in runs {
            results.push(run.await.expect("the run task"));
        }
        results
    })
    .await
    .expect("no deadlock: every program finished within 120 s");
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Release);
    let mutations = mutator.await.expect("the mutator");

    for (n, result) in &finished {
        assert!(!result.is_error(), "program {n}: {result:?}");
        let value = &result.value().expect("a value")["result"];
        let expected: Vec<Value> = (0..CALLS)
            .map(|i| json!({"token": format!("{n}-{i}"), "callId": format!("load-{n}:code:{}", i + 1)}))
            .collect();
        assert_eq!(value, &Value::Array(expected), "program {n}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), PROGRAMS * CALLS);
    assert!(
        mutations > 0,
        "the registry was never mutated during the runs"
    );
    let total = PROGRAMS * CALLS;
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "load",
        &format!(
            "load: {PROGRAMS} concurrent programs x {CALLS} tool calls = {total} calls in {} ms \
             ({:.0} calls/s, 2 workers), 0 errors, 0 mismatched results, 0 deadlocks, \
             {mutations} registry mutation rounds meanwhile",
            elapsed.as_millis(),
            total as f64 / elapsed.as_secs_f64()
        ),
    );
}
