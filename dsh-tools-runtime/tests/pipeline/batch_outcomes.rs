//! A batch's calls end exactly as the same calls made one at a time with `execute`: every way a
//! body can end (a value, an error, a panic before its future exists, on its first poll or
//! after it was pending, a concluded turn with deferred contexts, a cancellation before or
//! during the call, invalid arguments, a declared deadline), whether it completes on its first
//! poll — which a batch dispatches without a future of its own — or later.

use crate::support;

use std::sync::Arc;

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools::{ToolDefinition, ToolError};
use dsh_tools_runtime::ToolRegistry;
use serde_json::{Value, json};
use support::{base, context};

/// How a case's body ends.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Value,
    Error,
    PanicBeforeFuture,
    Panic,
    ConcludesWithContexts,
    CancelsItself,
}

const ENDINGS: [Ending; 6] = [
    Ending::Value,
    Ending::Error,
    Ending::PanicBeforeFuture,
    Ending::Panic,
    Ending::ConcludesWithContexts,
    Ending::CancelsItself,
];

/// A concurrency-safe tool named after its case that ends as `ending`, after yielding once to
/// the executor when `pending` (so it does not complete on its first poll).
fn case_tool(ending: Ending, pending: bool) -> ToolDefinition {
    let name = format!("{ending:?}_{}", if pending { "later" } else { "now" }).to_lowercase();
    base(&name)
        .parameters_json(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }))
        .concurrency_safe(true)
        .execute(move |args, ctx| {
            if matches!(ending, Ending::PanicBeforeFuture) {
                panic!("no future for {}", args["n"]);
            }
            async move {
                if pending {
                    tokio::task::yield_now().await;
                }
                let n = args["n"].clone();
                match ending {
                    Ending::Value | Ending::PanicBeforeFuture => Ok(json!({ "n": n })),
                    Ending::Error => Err(ToolError::msg(format!("failed {n}"))),
                    Ending::Panic => panic!("body {n} panicked"),
                    Ending::ConcludesWithContexts => {
                        ctx.defer_context(context(&format!("deferred {n}")));
                        ctx.conclude_turn();
                        Ok(n)
                    }
                    Ending::CancelsItself => {
                        ctx.cancellation().cancel();
                        Ok(n)
                    }
                }
            }
        })
        .build()
        .unwrap()
}

/// A tool with a declared deadline it keeps (its calls take the path with a timer).
fn deadline_tool() -> ToolDefinition {
    base("with_deadline")
        .concurrency_safe(true)
        .timeout_ms(60_000)
        .execute(|_, _| async { Ok(json!("in time")) })
        .build()
        .unwrap()
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for ending in ENDINGS {
        for pending in [false, true] {
            registry
                .register(case_tool(ending, pending))
                .unwrap()
                .keep();
        }
    }
    registry.register(deadline_tool()).unwrap().keep();
    registry
}

/// Every case's input: each tool with valid arguments, one with invalid arguments (classified
/// exclusive, so it runs alone), one cancelled before it starts.
fn inputs(registry: &ToolRegistry) -> Vec<ToolExecutionInput> {
    let mut inputs: Vec<ToolExecutionInput> = registry
        .visible(None)
        .iter()
        .enumerate()
        .map(|(i, def)| ToolExecutionInput::new(format!("c{i}"), def.name(), json!({"n": i})))
        .collect();
    inputs.push(ToolExecutionInput::new(
        "invalid",
        "value_now",
        json!({"n": "one"}),
    ));
    let cancelled = ToolExecutionInput::new("cancelled", "value_now", json!({"n": 99}));
    cancelled.cancel.cancel();
    inputs.push(cancelled);
    inputs
}

fn wire(results: &[ToolExecutionResult]) -> Vec<Value> {
    results
        .iter()
        .map(|result| serde_json::to_value(result).unwrap())
        .collect()
}

#[tokio::test]
async fn a_batch_ends_each_call_as_execute_does() {
    let registry = registry();
    let mut one_by_one = Vec::new();
    for input in inputs(&registry) {
        one_by_one.push(registry.execute(input).await);
    }
    let batched = registry.execute_batch(inputs(&registry)).await;
    assert_eq!(wire(&batched), wire(&one_by_one));
    // The cases really differ: every ending is represented, and the batch kept call order.
    let outcomes = wire(&batched);
    assert_eq!(outcomes.len(), 2 * ENDINGS.len() + 3);
    let text = serde_json::to_string(&outcomes).unwrap();
    for needle in [
        "failed ",
        "panicked",
        "no future for",
        "deferred ",
        "concludesTurn",
        "ABORTED",
        "INVALID_ARGS",
        "in time",
    ] {
        assert!(text.contains(needle), "no {needle:?} in {text}");
    }
}

#[tokio::test]
async fn a_batch_of_one_case_at_a_time_matches_execute() {
    // Each case alone in a batch of its own (no neighbour whose dispatch overlaps it).
    let registry = Arc::new(registry());
    for input in inputs(&registry) {
        let alone = ToolExecutionInput::new(
            input.call_id.clone(),
            input.name.clone(),
            input.arguments.clone(),
        );
        if input.cancel.is_cancelled() {
            alone.cancel.cancel();
        }
        let expected = registry.execute(input).await;
        let batched = registry.execute_batch(vec![alone]).await;
        assert_eq!(wire(&batched), wire(&[expected]));
    }
}

#[tokio::test]
async fn a_body_that_cancels_its_own_token_ends_aborted_and_leaves_its_caller_alone() {
    // Stage 10e: a success whose body token was cancelled is `ABORTED`, whether the body
    // completed on its first poll or later, alone or batched; the caller's token is its own.
    let registry = registry();
    for name in ["cancelsitself_now", "cancelsitself_later"] {
        let input = ToolExecutionInput::new("c", name, json!({"n": 1}));
        let caller = input.cancel.clone();
        let alone = registry.execute(input).await;
        let batched = registry
            .execute_batch(vec![ToolExecutionInput::new("c", name, json!({"n": 1}))])
            .await;
        for result in [&alone, &batched[0]] {
            let ToolExecutionResult::Failure(failure) = result else {
                panic!("{name}: {result:?} is not a failure");
            };
            let code = failure.error.info().map(|info| info.code.as_ref());
            assert_eq!(code, Some("ABORTED"), "{name}");
        }
        assert!(
            !caller.is_cancelled(),
            "{name}: the caller's token was cancelled"
        );
    }
}
