//! Deadlines: a tool's declared `timeout_ms` enforced (`docs/CONTRACTS.md`, "Deadlines"), with hard
//! cancellation: the body is dropped at its deadline.
//!
//! **By default** the pipeline enforces every declared budget around the tool's body: the body
//! runs under a deadline token and is dropped when the budget runs out, and the call fails with
//! `TOOL_TIMEOUT`. A host that enforces budgets some other way turns this off with
//! [`ToolRegistry::enforce_deadlines`](crate::ToolRegistry::enforce_deadlines)`(false)`.
//!
//! The default bounds each run of the body. To bound more — the execute wrappers around it, a
//! retrying wrapper's every attempt together — register the same budget as an execute wrapper:
//! [`timeout_policy`] is one. For a call whose tool declares a budget it runs the
//! rest of the execute waterfall under a *deadline token* (a child of the dispatch view's token,
//! so the caller's cancellation still reaches the body) and races it against a timer:
//!
//! * the call settles first: its result is returned as it is;
//! * the deadline passes first: the deadline token is cancelled, the rest of the waterfall (the
//!   tool's future included) is **dropped** — no orphaned work — and the call fails with
//!   `TOOL_TIMEOUT` (`Error: tool call timed out after <ms>ms`);
//! * the caller cancelled first: the registry's cancellation outcome stands — whatever the
//!   waterfall returns (usually `ABORTED`), or `ABORTED` when the body ignores the cancellation
//!   until the deadline, at which point it is dropped all the same.
//!
//! A call without a budget is delegated unchanged.
//!
//! # Wrapper order
//!
//! Execute wrappers run in registration order, the first registered outermost. A timeout policy
//! registered *before* a retrying wrapper bounds the whole retry (every attempt shares one
//! budget); registered *after* it, it bounds each attempt separately.
//!
//! # Runtime
//!
//! The deadline is a [`tokio::time::sleep`], so calls must run on a Tokio runtime with the time
//! driver enabled. Without it the default fails a call whose tool declares a budget before its
//! body runs, naming the cause; the wrapper panics and the call fails with that message.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::{ErrorCode, HarnessError, ToolError};
use futures_util::FutureExt;

use super::hooks::{DispatchExecution, ExecuteNext, ExecuteWrapperFn};

/// The stable code of a timed-out call.
pub const TOOL_TIMEOUT: &str = ErrorCode::ToolTimeout.as_str();

/// A tool call outlived its declared budget (`ToolTimeoutError`, code `TOOL_TIMEOUT`).
///
/// ```
/// use dsh_tools_runtime::timeout::ToolTimeoutError;
/// let result = ToolTimeoutError { timeout_ms: 250 }.into_result();
/// assert_eq!(
///     serde_json::to_string(&result).unwrap(),
///     r#"{"isError":true,"error":{"message":"tool call timed out after 250ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 250ms"}]}"#
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("tool call timed out after {timeout_ms}ms")]
pub struct ToolTimeoutError {
    /// The budget that was exceeded, in milliseconds.
    pub timeout_ms: u64,
}

impl ToolTimeoutError {
    /// The reference `TOOL_TIMEOUT` result: `Error: tool call timed out after <ms>ms`.
    pub fn into_result(self) -> ToolExecutionResult {
        ToolExecutionResult::failure(ToolError::from_harness(&self))
    }
}

impl HarnessError for ToolTimeoutError {
    fn name(&self) -> &'static str {
        "ToolTimeoutError"
    }
    fn code(&self) -> ErrorCode {
        ErrorCode::ToolTimeout
    }
}

/// The timeout policy: an execute wrapper enforcing each tool's `timeout_ms` where it is
/// registered in the wrapper order (see the [module docs](self) for the exact semantics and the
/// wrapper-order rule).
///
/// The budget is the one the call's tool declared when the call was created, i.e. the definition
/// the calling scope sees. Register it with [`ToolRegistry::on_execute`] — or
/// [`ToolRegistry::install_timeout_policy`] — for every call, or with
/// [`Scope::on_execute`](crate::Scope::on_execute) for one agent's calls.
///
/// [`ToolRegistry::on_execute`]: crate::ToolRegistry::on_execute
/// [`ToolRegistry::install_timeout_policy`]: crate::ToolRegistry::install_timeout_policy
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools::exec::ToolExecutionInput;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::hooks::execute_wrapper_fn;
/// use dsh_tools_runtime::timeout::timeout_policy;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let registry = ToolRegistry::new();
/// registry.register(ToolDefinition::builder("flaky")
///     .description("Takes 200ms.")
///     .timeout_ms(250)
///     .execute(|_, _| async {
///         tokio::time::sleep(std::time::Duration::from_millis(200)).await;
///         Ok(json!("done"))
///     })
///     .build().unwrap()).unwrap().keep();
/// // Registered first (outermost), the budget bounds both attempts of the retry together.
/// registry.on_execute(timeout_policy()).keep();
/// registry.on_execute(execute_wrapper_fn(|dispatch, next| async move {
///     let _first = next.clone().run(dispatch.clone()).await;
///     next.run(dispatch).await
/// })).keep();
///
/// let result = registry.execute(ToolExecutionInput::new("c1", "flaky", json!({}))).await;
/// assert_eq!(result.content()[0].as_text(), Some("Error: tool call timed out after 250ms"));
/// assert_eq!(result.error().unwrap().info().unwrap().code, "TOOL_TIMEOUT");
/// # });
/// ```
pub fn timeout_policy() -> ExecuteWrapperFn {
    Arc::new(
        |dispatch: DispatchExecution, next: ExecuteNext| match dispatch.budget {
            None => next.run(dispatch),
            Some(timeout_ms) => Box::pin(run_with_deadline(dispatch, next, timeout_ms))
                as BoxFuture<'static, ToolExecutionResult>,
        },
    )
}

async fn run_with_deadline(
    dispatch: DispatchExecution,
    next: ExecuteNext,
    timeout_ms: u64,
) -> ToolExecutionResult {
    let exec = Arc::clone(dispatch.execution());
    let outer = dispatch.cancellation().clone();
    let deadline = outer.child_token();
    let mut inner = next.run(dispatch.with_cancellation(deadline.clone()));
    tokio::select! {
        biased;
        result = &mut inner => return result,
        () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {}
    }
    let caller_first = outer.is_cancelled();
    // Cancel, then give the waterfall one last poll so cancellation wired into it (the body's
    // run-context token, tokens handed to helper tasks) fires before it is dropped. Whatever that
    // poll yields is discarded: the deadline already decided the outcome.
    deadline.cancel();
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| (&mut inner).now_or_never()));
    drop(inner);
    if caller_first {
        tracing::info!(
            tool = %exec.name, call_id = %exec.call_id, timeout_ms,
            "cancelled tool call still running at its deadline: dropped"
        );
        super::outcome::aborted()
    } else {
        tracing::warn!(tool = %exec.name, call_id = %exec.call_id, timeout_ms, "tool call timed out");
        ToolTimeoutError { timeout_ms }.into_result()
    }
}
