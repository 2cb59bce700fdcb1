//! Stages 10–14 (`docs/CONTRACTS.md`, "Stages"): the execute waterfall around core dispatch, then
//! normalisation.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    RunContextHandle, StateMap, ToolExecution, ToolExecutionResult, ToolRunContext,
};
use dsh_tools::json::ResultJson;
use dsh_tools::{ToolDefinition, ToolError};
use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

use super::hooks::{DispatchExecution, ExecuteNext, ExecuteWrapper, ExecuteWrapperFn, applicable};
use super::outcome::{
    aborted, aborted_before_dispatch, build_success, cancelled, from_panic, try_success,
};
use super::timeout::ToolTimeoutError;
use super::{Call, Host, Prepared};
use crate::error::ToolNotFoundError;
use crate::error::panic_message;

/// The dispatch stage's settings: the host state tools receive, and whether declared budgets
/// are enforced.
pub(super) struct Dispatch {
    states: RwLock<Arc<StateMap>>,
    /// Enforce each tool's declared `timeout_ms` around its body (on by default).
    pub(super) deadlines: AtomicBool,
    /// How a value without a renderer of its own is laid out.
    pub(super) json: ResultJson,
}

impl Default for Dispatch {
    fn default() -> Self {
        Self::laying_out(ResultJson::default())
    }
}

impl Dispatch {
    pub(super) fn laying_out(json: ResultJson) -> Self {
        Self {
            states: RwLock::default(),
            deadlines: AtomicBool::new(true),
            json,
        }
    }

    /// What a call's core dispatch leaves behind, fresh.
    pub(super) fn record(&self) -> CoreRecord {
        CoreRecord {
            handle: Mutex::default(),
            body_invoked: AtomicBool::new(false),
            json: self.json,
        }
    }

    pub(super) fn provide_state(&self, edit: impl FnOnce(&mut StateMap)) {
        let mut guard = self.states.write().unwrap_or_else(PoisonError::into_inner);
        edit(Arc::make_mut(&mut guard));
    }

    pub(super) fn enforce_deadlines(&self, enforce: bool) {
        self.deadlines.store(enforce, Ordering::Relaxed);
    }

    pub(super) fn states(&self) -> Arc<StateMap> {
        Arc::clone(&self.states.read().unwrap_or_else(PoisonError::into_inner))
    }
}

/// What core dispatch leaves behind for normalisation.
pub(super) struct CoreRecord {
    /// The pipeline's side of the body's run context: kept here (not on core dispatch's stack)
    /// so contexts deferred by a body that a wrapper dropped (a timeout) are still collected.
    pub(super) handle: Mutex<Option<RunContextHandle>>,
    pub(super) body_invoked: AtomicBool,
    /// The pipeline's layout of values without a renderer.
    pub(super) json: ResultJson,
}

impl CoreRecord {
    fn take_deferred(&self) -> Vec<dsh_tools::ContextMessage> {
        self.handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(RunContextHandle::take_deferred)
            .unwrap_or_default()
    }

    /// Whether the body's token is cancelled (no body invoked: no).
    pub(super) fn body_cancelled(&self) -> bool {
        self.handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(RunContextHandle::is_cancelled)
    }

    /// Whether the body called `conclude_turn` (`docs/CONTRACTS.md`, "Building a success", rule 5).
    fn concludes_turn(&self) -> bool {
        self.handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(RunContextHandle::concludes_turn)
    }
}

/// Stages 10–14. Returns a post-result, or a final result when a wrapper panicked.
pub(super) async fn dispatch<H: Host>(host: &H, call: &Call) -> Prepared {
    let wrappers = applicable(call.hooks.get::<ExecuteWrapper>(), &call.exec, |a| {
        host.chain(a)
    });
    if wrappers.is_empty() {
        // No wrapper: core dispatch's own result, nothing to normalise, nothing outlives this
        // call (the record can live on its stack).
        let record = host.pipeline().dispatch.record();
        let caller = &call.caller_cancel;
        let resolved = call.resolved.as_ref();
        let result = core_dispatch(host, &call.exec, resolved, caller, None, &record);
        let result = result.await;
        return after_dispatch(call, &record, result);
    }
    // Boxed: the waterfall's future would otherwise size every call's future.
    Box::pin(dispatch_wrapped(host, call, wrappers)).await
}

/// Stages 10–14 through the execute wrappers.
async fn dispatch_wrapped<H: Host>(
    host: &H,
    call: &Call,
    wrappers: Vec<ExecuteWrapperFn>,
) -> Prepared {
    let exec = Arc::clone(&call.exec);
    let view = DispatchExecution {
        exec: Arc::clone(&exec),
        cancel: CancellationToken::clone(&call.caller_cancel),
        replaced: false,
        budget: call.budget(),
    };
    let record = Arc::new(host.pipeline().dispatch.record());
    // What core dispatch produced, to tell it from a result a wrapper made up (stage 11).
    let produced: Arc<Mutex<Option<ToolExecutionResult>>> = Arc::default();
    let core = {
        let host = host.clone();
        let record = Arc::clone(&record);
        let produced = Arc::clone(&produced);
        let caller = CancellationToken::clone(&call.caller_cancel);
        let resolved = call.resolved.clone();
        Arc::new(move |dispatch: DispatchExecution| {
            let host = host.clone();
            let record = Arc::clone(&record);
            let produced = Arc::clone(&produced);
            let caller = caller.clone();
            let resolved = resolved.clone();
            Box::pin(async move {
                let replaced = dispatch.replaced.then_some(&caller);
                let (exec, cancel) = (&dispatch.exec, &dispatch.cancel);
                let resolved = resolved.as_ref();
                let result = core_dispatch(&host, exec, resolved, cancel, replaced, &record).await;
                *produced.lock().unwrap_or_else(PoisonError::into_inner) = Some(result.clone());
                result
            }) as BoxFuture<'static, ToolExecutionResult>
        })
    };
    let next = ExecuteNext {
        chain: wrappers.into(),
        index: 0,
        core,
    };
    let waterfall = std::panic::AssertUnwindSafe(next.run(view));
    let returned = match waterfall.catch_unwind().await {
        Ok(result) => result,
        Err(payload) => {
            tracing::warn!(tool = %exec.name, call_id = %exec.call_id, "execute wrapper panicked");
            return Prepared::FinalResult(from_panic(&*payload));
        }
    };
    let produced = produced
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let result = match produced {
        Some(core) if core == returned => core,
        _ => {
            let concludes_turn = record.concludes_turn();
            match normalise_foreign(host, &exec, returned, concludes_turn) {
                Ok(result) => result,
                // 14. A normalisation error is final: no post-execute, no contexts.
                Err(error) => return Prepared::FinalResult(ToolExecutionResult::failure(error)),
            }
        }
    };
    after_dispatch(call, &record, result)
}

/// Stages 12–13 on the (normalised) dispatch result.
pub(super) fn after_dispatch(
    call: &Call,
    record: &CoreRecord,
    result: ToolExecutionResult,
) -> Prepared {
    let body_invoked = record.body_invoked.load(Ordering::SeqCst);
    call.body_invoked.store(body_invoked, Ordering::SeqCst);
    // 12. Contexts the body deferred come first, whatever the result.
    let mut result = prepend_contexts(result, record.take_deferred());
    // 13. A success that the caller cancelled meanwhile becomes a cancellation.
    if call.caller_cancel.is_cancelled() && !result.is_error() {
        result = cancelled(body_invoked, result.additional_contexts().to_vec());
    }
    Prepared::PostResult(result)
}

/// Stage 11: a result not produced by core dispatch for this call. Failures pass as they are;
/// successes are revalidated from their value (content and meta re-rendered; whether the turn
/// concludes is this call's own flag ("Building a success", rule 5), never an authored one). A
/// vanished tool or a value violating the output contract is an error (stage 14).
fn normalise_foreign<H: Host>(
    host: &H,
    exec: &ToolExecution,
    returned: ToolExecutionResult,
    concludes_turn: bool,
) -> Result<ToolExecutionResult, ToolError> {
    match returned {
        failure @ ToolExecutionResult::Failure(_) => Ok(failure),
        ToolExecutionResult::Success(success) => {
            let nested = exec.parent.is_some();
            let Some(def) = host.resolve(&exec.name, exec.agent, nested).runnable() else {
                let error = ToolNotFoundError::unknown(&exec.name);
                return Err(ToolError::from_harness(&error));
            };
            let contexts = success.additional_contexts;
            let json = host.pipeline().dispatch.json;
            try_success(&def, exec, success.value, contexts, concludes_turn, json)
        }
    }
}

/// How the body's run ended.
enum Body {
    /// It settled (a panic included).
    Settled(std::thread::Result<Result<serde_json::Value, ToolError>>),
    /// Its declared budget ran out first; `caller_first`: the caller had cancelled before.
    TimedOut { caller_first: bool },
}

/// Core dispatch (stage 10 a–f). `cancel` is the dispatch token (the caller's, or the one a
/// wrapper put in its place — then `replaced_caller` is the caller's). `resolved` is what the
/// call resolved to when it was created, and the store generation then.
async fn core_dispatch<H: Host>(
    host: &H,
    exec: &Arc<ToolExecution>,
    resolved: Option<&(ToolDefinition, u64)>,
    cancel: &CancellationToken,
    replaced_caller: Option<&CancellationToken>,
    record: &CoreRecord,
) -> ToolExecutionResult {
    // a. Fuse the caller's token with the wrapper's: a child of the dispatch token follows it
    // synchronously; the caller's token needs watching only when a wrapper replaced it.
    let fused = cancel.child_token();
    if replaced_caller.is_some_and(CancellationToken::is_cancelled) {
        fused.cancel();
    }
    // b. Already cancelled: the body is not invoked.
    if fused.is_cancelled() {
        return aborted_before_dispatch();
    }
    // c. Resolve again (what the call resolved to at creation stands while the store is
    // unchanged since).
    let current = resolved.filter(|(_, generation)| host.generation() == *generation);
    let again;
    let def = match current {
        Some((def, _)) => def,
        None => {
            let nested = exec.parent.is_some();
            let Some(def) = host.resolve(&exec.name, exec.agent, nested).runnable() else {
                let error = ToolNotFoundError::unknown(&exec.name);
                return ToolExecutionResult::failure(ToolError::from_harness(&error));
            };
            again = def;
            &again
        }
    };
    let Some(args) = exec.arguments.clone() else {
        return ToolExecutionResult::failure(ToolError::msg(
            "tool execution arguments must be losslessly JSON-serializable",
        ));
    };
    let stage = &host.pipeline().dispatch;
    // The declared budget, enforced from the moment the body is invoked.
    let budget = def
        .timeout_ms()
        .filter(|_| stage.deadlines.load(Ordering::Relaxed));
    let deadline = match budget.map(start_deadline) {
        None => None,
        Some(Ok(deadline)) => Some(deadline),
        Some(Err(message)) => return ToolExecutionResult::failure(ToolError::msg(message)),
    };
    // d. Invoke the body; a panic (before or inside its future) is the tool's failure.
    record.body_invoked.store(true, Ordering::SeqCst);
    let (ctx, handle) = ToolRunContext::new(Arc::clone(exec), fused.clone());
    let ctx = ctx.with_states(stage.states());
    *record.handle.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
    let invoked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| def.execute(args, ctx)));
    let outcome = match invoked {
        Err(payload) => Err(payload),
        Ok(body) => match (replaced_caller, deadline) {
            (None, None) => std::panic::AssertUnwindSafe(body).catch_unwind().await,
            // Boxed: the watchers' future would otherwise size every dispatch.
            (caller, deadline) => match Box::pin(watched(body, caller, &fused, deadline)).await {
                Body::Settled(outcome) => outcome,
                Body::TimedOut { caller_first } => {
                    return timed_out(exec, budget.unwrap_or_default(), caller_first);
                }
            },
        },
    };
    // The watcher may not have observed a cancellation that landed in the same poll in which
    // the body completed: the fused token is aborted by either source (stage 10e).
    if replaced_caller.is_some_and(CancellationToken::is_cancelled) {
        fused.cancel();
    }
    body_result(def, exec, outcome, fused.is_cancelled(), record)
}

/// Stage 10 d–e: the dispatch result of a body that settled (`outcome`; `Err`: it panicked;
/// `cancelled`: the body's token is cancelled now).
pub(super) fn body_result(
    def: &ToolDefinition,
    exec: &ToolExecution,
    outcome: std::thread::Result<Result<serde_json::Value, ToolError>>,
    cancelled: bool,
    record: &CoreRecord,
) -> ToolExecutionResult {
    match outcome {
        Err(payload) => {
            let message = panic_message(&*payload);
            let name = def.name();
            // Not the message: it may quote the call's arguments (the result carries it).
            tracing::error!(tool = %name, call_id = %exec.call_id, "tool panicked");
            ToolExecutionResult::failure(ToolError::msg(format!(
                "tool \"{name}\" panicked: {message}"
            )))
        }
        Ok(Err(error)) => ToolExecutionResult::failure(error),
        // e. A success cancelled meanwhile becomes ABORTED; failures stay.
        Ok(Ok(_)) if cancelled => aborted(),
        Ok(Ok(value)) => build_success(def, exec, value, record.concludes_turn(), record.json),
    }
}

/// The result of a body that outlived its budget: `TOOL_TIMEOUT`, or `ABORTED` when the caller
/// had cancelled first (the registry's cancellation outcome stands).
fn timed_out(exec: &ToolExecution, timeout_ms: u64, caller_first: bool) -> ToolExecutionResult {
    if caller_first {
        tracing::info!(
            tool = %exec.name, call_id = %exec.call_id, timeout_ms,
            "cancelled tool call still running at its deadline: dropped"
        );
        aborted()
    } else {
        tracing::warn!(tool = %exec.name, call_id = %exec.call_id, timeout_ms, "tool call timed out");
        ToolTimeoutError { timeout_ms }.into_result()
    }
}

/// The timer of a declared budget, or why none can run (a Tokio runtime without its time
/// driver, or no runtime at all).
fn start_deadline(timeout_ms: u64) -> Result<Pin<Box<tokio::time::Sleep>>, String> {
    let sleep = || Box::pin(tokio::time::sleep(Duration::from_millis(timeout_ms)));
    std::panic::catch_unwind(sleep).map_err(|payload| {
        format!(
            "the tool declares timeout_ms = {timeout_ms}, which cannot be enforced here ({}); \
             run calls on a Tokio runtime with its time driver enabled, or turn deadlines off \
             (ToolRegistry::enforce_deadlines)",
            panic_message(&*payload)
        )
    })
}

/// Runs the body while watching the caller's token (when a wrapper replaced it) and the
/// deadline (when the tool declares one). At the deadline the body's token is cancelled, the
/// body is polled once more so cancellation wired into it fires, and then it is dropped.
async fn watched(
    body: BoxFuture<'static, Result<serde_json::Value, ToolError>>,
    caller: Option<&CancellationToken>,
    fused: &CancellationToken,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
) -> Body {
    let body = std::panic::AssertUnwindSafe(body).catch_unwind();
    tokio::pin!(body);
    let watch = async {
        if let Some(caller) = caller {
            caller.cancelled().await;
            fused.cancel();
        }
        std::future::pending::<()>().await;
    };
    let expired = async {
        match deadline {
            Some(deadline) => deadline.await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        outcome = &mut body => return Body::Settled(outcome),
        () = watch => unreachable!("the watcher never completes"),
        () = expired => {}
    }
    let caller_first = fused.is_cancelled() || caller.is_some_and(CancellationToken::is_cancelled);
    fused.cancel();
    // Whatever this last poll yields is discarded: the deadline already decided the outcome.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (&mut body).now_or_never()));
    Body::TimedOut { caller_first }
}

/// Stage 12: the body's deferred contexts come before any others.
fn prepend_contexts(
    mut result: ToolExecutionResult,
    mut deferred: Vec<dsh_tools::ContextMessage>,
) -> ToolExecutionResult {
    if deferred.is_empty() {
        return result;
    }
    let contexts = match &mut result {
        ToolExecutionResult::Success(s) => &mut s.additional_contexts,
        ToolExecutionResult::Failure(f) => &mut f.additional_contexts,
    };
    deferred.append(contexts);
    *contexts = deferred;
    result
}
