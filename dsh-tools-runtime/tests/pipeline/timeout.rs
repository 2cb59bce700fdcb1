//! Deadlines (`docs/CONTRACTS.md`, "Deadlines"): the result shape, the policy wrapper, hard
//! cancellation. All tests run in paused Tokio time; none sleeps to synchronise.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult, ToolRunContext};
use dsh_tools::{ToolDefinition, ToolError};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::hooks::{execute_wrapper_fn, post_execute_fn};
use dsh_tools_runtime::timeout::{TOOL_TIMEOUT, timeout_policy};
use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio::time::{Instant, advance};
use tokio_util::sync::CancellationToken;

fn tool<F, Fut>(name: &str, timeout_ms: Option<u64>, body: F) -> ToolDefinition
where
    F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let builder = ToolDefinition::builder(name)
        .description("A test tool.")
        .execute(body);
    match timeout_ms {
        Some(ms) => builder.timeout_ms(ms),
        None => builder,
    }
    .build()
    .unwrap()
}

/// A registry with `def` and the timeout policy installed.
fn registry_with(def: ToolDefinition) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(def).unwrap().keep();
    registry.install_timeout_policy().keep();
    registry
}

fn call(id: &str, name: &str) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, json!({}))
}

fn code(result: &ToolExecutionResult) -> Option<String> {
    Some(result.error()?.info()?.code.to_string())
}

fn text(result: &ToolExecutionResult) -> &str {
    result.content()[0].as_text().unwrap()
}

/// Polls once without a waker: `true` while the execution is still running.
fn still_running<F: Future + Unpin>(execution: &mut F) -> bool {
    execution.now_or_never().is_none()
}

fn hour() -> Duration {
    Duration::from_secs(3600)
}

/// Sets its flag when dropped: held by a tool future to prove the future was dropped.
struct DropProbe(Arc<AtomicBool>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that never finishes and ignores cancellation, holding a drop probe.
fn stuck_tool(name: &str, timeout_ms: Option<u64>, dropped: &Arc<AtomicBool>) -> ToolDefinition {
    let dropped = Arc::clone(dropped);
    tool(name, timeout_ms, move |_, _| {
        let probe = DropProbe(Arc::clone(&dropped));
        async move {
            let _probe = probe;
            std::future::pending::<()>().await;
            Ok(json!("unreachable"))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn the_timeout_result_has_the_reference_shape() {
    let registry = registry_with(tool("slow", Some(250), |_, _| async {
        tokio::time::sleep(hour()).await;
        Ok(json!("late"))
    }));
    let result = registry.execute(call("c1", "slow")).await;
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "isError": true,
            "error": {
                "message": "tool call timed out after 250ms",
                "info": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"}
            },
            "content": [{"type": "text", "text": "Error: tool call timed out after 250ms"}]
        })
    );
    assert_eq!(TOOL_TIMEOUT, "TOOL_TIMEOUT");
}

#[tokio::test(start_paused = true)]
async fn the_timeout_fires_exactly_at_the_deadline_and_drops_the_tool_future() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry_with(stuck_tool("stuck", Some(100), &dropped));
    let mut execution = Box::pin(registry.execute(call("c1", "stuck")));

    assert!(still_running(&mut execution), "the body is running");
    advance(Duration::from_millis(99)).await;
    assert!(still_running(&mut execution), "1ms before the deadline");
    assert!(!dropped.load(Ordering::SeqCst));

    advance(Duration::from_millis(1)).await;
    let result = (&mut execution)
        .now_or_never()
        .expect("settled at the deadline");
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    assert_eq!(text(&result), "Error: tool call timed out after 100ms");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool future was dropped with the timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn a_cooperative_tool_sees_its_run_context_token_cancelled() {
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let helper: Arc<Mutex<Option<tokio::task::JoinHandle<&'static str>>>> = Arc::default();
    let (seen_in, helper_in) = (Arc::clone(&seen), Arc::clone(&helper));
    let registry = registry_with(tool("cooperative", Some(100), move |_, ctx| {
        let token = ctx.cancellation().clone();
        *seen_in.lock().unwrap() = Some(token.clone());
        // Work handed to a helper task stops through the token it was given.
        *helper_in.lock().unwrap() = Some(tokio::spawn(async move {
            token.cancelled().await;
            "helper stopped"
        }));
        async move {
            ctx.cancellation().cancelled().await;
            Ok(json!("stopped"))
        }
    }));

    let result = registry.execute(call("c1", "cooperative")).await;
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    let token = seen.lock().unwrap().take().expect("the body ran");
    assert!(
        token.is_cancelled(),
        "the run-context token was cancelled at the deadline"
    );
    let helper = helper
        .lock()
        .unwrap()
        .take()
        .expect("the helper was spawned");
    let stopped = tokio::time::timeout(Duration::from_secs(1), helper).await;
    assert_eq!(
        stopped
            .expect("the helper observed the cancellation")
            .unwrap(),
        "helper stopped"
    );
}

#[tokio::test(start_paused = true)]
async fn a_caller_cancel_before_the_deadline_stays_aborted() {
    let registry = registry_with(tool("cooperative", Some(100), |_, ctx| async move {
        ctx.cancellation().cancelled().await;
        Ok(json!("stopped early"))
    }));
    let input = call("c1", "cooperative");
    let cancel = input.cancel.clone();
    let started = Instant::now();
    let mut execution = Box::pin(registry.execute(input));
    assert!(still_running(&mut execution));
    advance(Duration::from_millis(40)).await;
    cancel.cancel();

    let result = execution.await;
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(40),
        "settled on the cancellation"
    );
    assert_eq!(code(&result).as_deref(), Some("ABORTED"));
    assert_eq!(text(&result), "Error: tool call aborted");
}

#[tokio::test(start_paused = true)]
async fn an_uncooperative_body_cancelled_by_the_caller_is_dropped_at_the_deadline() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry_with(stuck_tool("stuck", Some(100), &dropped));
    let input = call("c1", "stuck");
    let cancel = input.cancel.clone();
    let mut execution = Box::pin(registry.execute(input));
    assert!(still_running(&mut execution));
    advance(Duration::from_millis(10)).await;
    cancel.cancel();
    assert!(still_running(&mut execution), "ignores the cancel");

    advance(Duration::from_millis(90)).await;
    let result = (&mut execution)
        .now_or_never()
        .expect("dropped at the deadline");
    assert_eq!(
        code(&result).as_deref(),
        Some("ABORTED"),
        "the caller cancelled first"
    );
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_tool_finishing_in_time_succeeds() {
    let registry = registry_with(tool("quick", Some(100), |_, _| async {
        tokio::time::sleep(Duration::from_millis(99)).await;
        Ok(json!("in time"))
    }));
    let started = Instant::now();
    let result = registry.execute(call("c1", "quick")).await;
    assert_eq!(result.value(), Some(&json!("in time")));
    assert_eq!(started.elapsed(), Duration::from_millis(99));
}

#[tokio::test(start_paused = true)]
async fn a_tools_own_failure_before_the_deadline_stays() {
    let registry = registry_with(tool("failing", Some(100), |_, _| async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Err(ToolError::msg("disk full"))
    }));
    let result = registry.execute(call("c1", "failing")).await;
    assert_eq!(text(&result), "Error: disk full");
    assert!(result.error().unwrap().info().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_call_without_a_budget_is_untouched() {
    async fn patient(_: Arc<Value>, ctx: ToolRunContext) -> Result<Value, ToolError> {
        tokio::time::sleep(hour()).await;
        Ok(json!({"cancelled": ctx.is_cancelled()}))
    }
    let with_policy = registry_with(tool("patient", None, patient));
    let without_policy = ToolRegistry::new();
    let plain_tool = tool("patient", None, patient);
    without_policy.register(plain_tool).unwrap().keep();

    let started = Instant::now();
    let guarded = with_policy.execute(call("c1", "patient")).await;
    assert_eq!(started.elapsed(), hour(), "no deadline applies");
    let plain = without_policy.execute(call("c1", "patient")).await;
    assert_eq!(guarded, plain);
    assert_eq!(guarded.value(), Some(&json!({"cancelled": false})));
}

#[tokio::test(start_paused = true)]
async fn post_execute_policies_and_observers_see_the_timeout_once() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry_with(stuck_tool("stuck", Some(100), &dropped));
    let post_seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let post_log = Arc::clone(&post_seen);
    registry
        .on_post_execute(post_execute_fn(move |_, result, next| {
            post_log.lock().unwrap().push(code(&result));
            next.run()
        }))
        .keep();
    let notified = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&notified);
    registry
        .on_result(move |_, result| {
            assert_eq!(code(result).as_deref(), Some("TOOL_TIMEOUT"));
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .keep();

    let result = registry.execute(call("c1", "stuck")).await;
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    assert_eq!(*post_seen.lock().unwrap(), [Some(TOOL_TIMEOUT.to_owned())]);
    // Exactly one result notification.
    assert_eq!(notified.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_caller_cancel_after_the_deadline_does_not_replace_the_timeout() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry_with(stuck_tool("stuck", Some(100), &dropped));
    let input = call("c1", "stuck");
    let cancel = input.cancel.clone();
    // The caller's cancellation arrives while post-execute runs, after the deadline fired.
    registry
        .on_post_execute(post_execute_fn(move |_, _, next| {
            cancel.cancel();
            next.run()
        }))
        .keep();
    let result = registry.execute(input).await;
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
}

/// A wrapper that spends 60ms (e.g. rate limiting) before running the rest of the waterfall.
fn delaying_wrapper() -> dsh_tools_runtime::hooks::ExecuteWrapperFn {
    execute_wrapper_fn(|dispatch, next| async move {
        tokio::time::sleep(Duration::from_millis(60)).await;
        next.run(dispatch).await
    })
}

/// Runs a 60ms tool (budget 100ms) behind a 60ms delaying wrapper, with the timeout policy
/// registered before (outer) or after (inner) it; returns the result and the time it took.
async fn with_policy_order(timeout_outer: bool) -> (ToolExecutionResult, Duration) {
    let registry = ToolRegistry::new();
    let work = tool("work", Some(100), |_, _| async {
        tokio::time::sleep(Duration::from_millis(60)).await;
        Ok(json!("done"))
    });
    registry.register(work).unwrap().keep();
    if timeout_outer {
        registry.install_timeout_policy().keep();
    }
    registry.on_execute(delaying_wrapper()).keep();
    if !timeout_outer {
        registry.install_timeout_policy().keep();
    }
    let started = Instant::now();
    let result = registry.execute(call("c1", "work")).await;
    (result, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn an_outer_timeout_bounds_everything_inside_it() {
    let (result, took) = with_policy_order(true).await;
    assert_eq!(
        code(&result).as_deref(),
        Some("TOOL_TIMEOUT"),
        "60ms + 60ms > 100ms"
    );
    assert_eq!(took, Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn an_inner_timeout_bounds_only_what_is_inside_it() {
    let (result, took) = with_policy_order(false).await;
    assert_eq!(result.value(), Some(&json!("done")));
    assert_eq!(took, Duration::from_millis(120));
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_the_one_the_calling_scope_sees() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = registry_with(stuck_tool("stuck", Some(1_000), &dropped));
    let agent = registry.new_scope();
    agent
        .register(stuck_tool("stuck", Some(50), &dropped))
        .unwrap()
        .keep();

    let mut scoped = call("c1", "stuck");
    scoped.agent = Some(agent.id());
    assert_eq!(
        text(&registry.execute(scoped).await),
        "Error: tool call timed out after 50ms"
    );
    let global = registry.execute(call("c2", "stuck")).await;
    assert_eq!(text(&global), "Error: tool call timed out after 1000ms");
}

#[tokio::test(start_paused = true)]
async fn a_scoped_policy_applies_to_that_scope_only_and_disposes() {
    let registry = ToolRegistry::new();
    // Without the default deadlines only the policy times calls out.
    registry.enforce_deadlines(false);
    registry
        .register(tool("slow", Some(10), |_, _| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(json!("late but fine"))
        }))
        .unwrap()
        .keep();
    let agent = registry.new_scope();
    let policy = agent.on_execute(timeout_policy());
    let mut scoped = call("c1", "slow");
    scoped.agent = Some(agent.id());

    assert_eq!(
        code(&registry.execute(scoped.clone()).await).as_deref(),
        Some("TOOL_TIMEOUT")
    );
    assert!(
        !registry.execute(call("c2", "slow")).await.is_error(),
        "global calls are not timed"
    );
    policy.dispose();
    assert!(!registry.execute(scoped).await.is_error(), "uninstalled");
}

// --- The default: declared budgets are enforced without any policy ----------------------------

#[tokio::test(start_paused = true)]
async fn a_declared_budget_is_enforced_without_any_policy() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = ToolRegistry::new();
    registry
        .register(stuck_tool("stuck", Some(100), &dropped))
        .unwrap()
        .keep();
    let mut execution = Box::pin(registry.execute(call("c1", "stuck")));
    assert!(still_running(&mut execution));
    advance(Duration::from_millis(99)).await;
    assert!(still_running(&mut execution), "1ms before the deadline");
    advance(Duration::from_millis(1)).await;
    let result = (&mut execution)
        .now_or_never()
        .expect("settled at the deadline");
    assert_eq!(text(&result), "Error: tool call timed out after 100ms");
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool future was dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_deadline_keeps_the_contexts_the_body_deferred() {
    let registry = ToolRegistry::new();
    registry
        .register(tool("deferring", Some(50), |_, ctx| async move {
            ctx.defer_context(dsh_tools::ContextMessage {
                content: vec![dsh_tools::ContentBlock::text("noted")],
                source: None,
            });
            tokio::time::sleep(hour()).await;
            Ok(json!("late"))
        }))
        .unwrap()
        .keep();
    let result = registry.execute(call("c1", "deferring")).await;
    assert_eq!(code(&result).as_deref(), Some("TOOL_TIMEOUT"));
    assert_eq!(result.additional_contexts().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_host_can_turn_the_default_deadlines_off() {
    let registry = ToolRegistry::new();
    registry
        .register(tool("slow", Some(100), |_, _| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(json!("done"))
        }))
        .unwrap()
        .keep();
    registry.enforce_deadlines(false);
    let started = Instant::now();
    let result = registry.execute(call("c1", "slow")).await;
    assert_eq!(result.value(), Some(&json!("done")));
    assert_eq!(started.elapsed(), Duration::from_millis(200));
    registry.enforce_deadlines(true);
    assert_eq!(
        code(&registry.execute(call("c2", "slow")).await).as_deref(),
        Some("TOOL_TIMEOUT")
    );
}

#[test]
fn a_budget_that_cannot_be_enforced_fails_the_call_before_its_body_runs() {
    // A Tokio runtime without its time driver: no timer for the deadline.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let registry = ToolRegistry::new();
    registry
        .register(tool("timed", Some(100), move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("ran")) }
        }))
        .unwrap()
        .keep();
    let result = runtime.block_on(registry.execute(call("c1", "timed")));
    let message = result.error().expect("a failure").message().to_owned();
    assert!(
        message.starts_with("the tool declares timeout_ms = 100, which cannot be enforced here"),
        "{message}"
    );
    assert!(
        message.contains("ToolRegistry::enforce_deadlines"),
        "{message}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the body never ran");
    // Without a budget the same runtime runs tools as before.
    registry.enforce_deadlines(false);
    let result = runtime.block_on(registry.execute(call("c2", "timed")));
    assert_eq!(result.value(), Some(&json!("ran")));
}
