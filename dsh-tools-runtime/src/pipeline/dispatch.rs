//! Stages 10–14: the execute waterfall around core dispatch, then normalisation.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::ToolError;
use dsh_tools::exec::{RunContextHandle, ToolExecution, ToolExecutionResult, ToolRunContext};
use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

use super::outcome::{
    aborted, aborted_before_dispatch, build_success, cancelled, from_panic, try_success,
};
use super::prepare::{Execution, Prepared};
use crate::error::ToolNotFoundError;
use crate::hooks::{DispatchExecution, ExecuteNext};
use crate::panic_message;
use crate::registry::ToolRegistry;

/// What core dispatch leaves behind for normalisation.
#[derive(Default)]
struct CoreRecord {
    /// The pipeline's side of the body's run context: kept here (not on core dispatch's stack)
    /// so contexts deferred by a body that a wrapper dropped (a timeout) are still collected.
    handle: Mutex<Option<RunContextHandle>>,
    body_invoked: AtomicBool,
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

    /// Whether the body called `conclude_turn` (REFERENCE §6.3 rule 5).
    fn concludes_turn(&self) -> bool {
        self.handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(RunContextHandle::concludes_turn)
    }
}

impl ToolRegistry {
    /// Stages 10–14. Returns a post-result, or a final result when a wrapper panicked.
    pub(crate) async fn dispatch(&self, execution: &Execution) -> Prepared {
        let wrappers = self.filtered(&execution.hooks.wrappers, &execution.exec);
        if wrappers.is_empty() {
            // No wrapper: core dispatch's own result, nothing to normalise, nothing outlives
            // this call (the record can live on its stack).
            let record = CoreRecord::default();
            let caller = &execution.caller_cancel;
            let result = self
                .core_dispatch(&execution.exec, caller, None, &record)
                .await;
            return self.after_dispatch(execution, &record, result);
        }
        // Boxed: the waterfall's future would otherwise size every execution's future.
        Box::pin(self.dispatch_wrapped(execution, wrappers)).await
    }

    /// Stages 10–14 through the execute wrappers.
    async fn dispatch_wrapped(
        &self,
        execution: &Execution,
        wrappers: Vec<crate::hooks::ExecuteWrapperFn>,
    ) -> Prepared {
        let exec = Arc::clone(&execution.exec);
        let view = DispatchExecution {
            exec: Arc::clone(&exec),
            cancel: execution.caller_cancel.clone(),
            replaced: false,
        };
        let record = Arc::new(CoreRecord::default());
        // What core dispatch produced, to tell it from a result a wrapper made up (rule 11).
        let produced: Arc<Mutex<Option<ToolExecutionResult>>> = Arc::default();
        let core = {
            let registry = self.clone();
            let record = Arc::clone(&record);
            let produced = Arc::clone(&produced);
            let caller = execution.caller_cancel.clone();
            Arc::new(move |dispatch: DispatchExecution| {
                let registry = registry.clone();
                let record = Arc::clone(&record);
                let produced = Arc::clone(&produced);
                let caller = caller.clone();
                Box::pin(async move {
                    let replaced = dispatch.replaced.then_some(&caller);
                    let result = registry
                        .core_dispatch(&dispatch.exec, &dispatch.cancel, replaced, &record)
                        .await;
                    *produced.lock().unwrap_or_else(PoisonError::into_inner) = Some(result.clone());
                    result
                }) as dsh_tools::definition::BoxFuture<'static, ToolExecutionResult>
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
                match self.normalise_foreign(&exec, returned, concludes_turn) {
                    Ok(result) => result,
                    // 14. A normalisation error is final: no post-execute, no contexts.
                    Err(error) => {
                        return Prepared::FinalResult(ToolExecutionResult::failure(error));
                    }
                }
            }
        };
        self.after_dispatch(execution, &record, result)
    }

    /// Rules 12–13 on the (normalised) dispatch result.
    fn after_dispatch(
        &self,
        execution: &Execution,
        record: &CoreRecord,
        result: ToolExecutionResult,
    ) -> Prepared {
        let body_invoked = record.body_invoked.load(Ordering::SeqCst);
        execution.body_invoked.store(body_invoked, Ordering::SeqCst);
        // 12. Contexts the body deferred come first, whatever the result.
        let mut result = prepend_contexts(result, record.take_deferred());
        // 13. A success that the caller cancelled meanwhile becomes a cancellation.
        if execution.caller_cancel.is_cancelled() && !result.is_error() {
            result = cancelled(body_invoked, result.additional_contexts().to_vec());
        }
        Prepared::PostResult(result)
    }

    /// Rule 11: a result not produced by core dispatch for this execution. Failures pass as they
    /// are; successes are revalidated from their value (content and meta re-rendered; whether
    /// the turn concludes is this execution's own flag, §6.3 rule 5, never an authored one).
    /// A vanished tool or a value violating the output contract is an error (rule 14).
    fn normalise_foreign(
        &self,
        exec: &ToolExecution,
        returned: ToolExecutionResult,
        concludes_turn: bool,
    ) -> Result<ToolExecutionResult, ToolError> {
        match returned {
            failure @ ToolExecutionResult::Failure(_) => Ok(failure),
            ToolExecutionResult::Success(success) => {
                let Some(def) =
                    self.resolve_executable(&exec.name, exec.agent, exec.parent.is_some())
                else {
                    let error = ToolNotFoundError::unknown(&exec.name);
                    return Err(ToolError::from_harness(&error));
                };
                try_success(
                    &def,
                    exec,
                    success.value,
                    success.additional_contexts,
                    concludes_turn,
                )
            }
        }
    }

    /// Core dispatch (rule 10 a–f). `cancel` is the dispatch token (the caller's, or the one a
    /// wrapper put in its place — then `replaced_caller` is the caller's).
    async fn core_dispatch(
        &self,
        exec: &Arc<ToolExecution>,
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
        // c. Resolve again.
        let Some(def) = self.resolve_executable(&exec.name, exec.agent, exec.parent.is_some())
        else {
            let error = ToolNotFoundError::unknown(&exec.name);
            return ToolExecutionResult::failure(ToolError::from_harness(&error));
        };
        let Some(args) = exec.arguments.clone() else {
            return ToolExecutionResult::failure(ToolError::msg(
                "tool execution arguments must be losslessly JSON-serializable",
            ));
        };
        // d. Invoke the body; a panic (before or inside its future) is the tool's failure.
        record.body_invoked.store(true, Ordering::SeqCst);
        let states = Arc::clone(
            &self
                .inner
                .states
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let (ctx, handle) = ToolRunContext::new(Arc::clone(exec), fused.clone());
        let ctx = ctx.with_states(states);
        *record.handle.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
        let outcome =
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| def.execute(args, ctx)))
            {
                Err(payload) => Err(payload),
                Ok(body) => match replaced_caller {
                    None => std::panic::AssertUnwindSafe(body).catch_unwind().await,
                    // Boxed: the watcher's future would otherwise size every dispatch.
                    Some(caller) => {
                        Box::pin(async {
                            let body = std::panic::AssertUnwindSafe(body).catch_unwind();
                            let watch = async {
                                caller.cancelled().await;
                                fused.cancel();
                                std::future::pending::<()>().await;
                            };
                            tokio::select! {
                                biased;
                                outcome = body => outcome,
                                () = watch => unreachable!("the watcher never completes"),
                            }
                        })
                        .await
                    }
                },
            };
        // The watcher may not have observed a cancellation that landed in the same poll in which
        // the body completed: the fused token is aborted by either source (rule 10e).
        if replaced_caller.is_some_and(CancellationToken::is_cancelled) {
            fused.cancel();
        }
        match outcome {
            Err(payload) => {
                let message = panic_message(&*payload);
                let name = def.name();
                tracing::error!(tool = %name, call_id = %exec.call_id, %message, "tool panicked");
                ToolExecutionResult::failure(ToolError::msg(format!(
                    "tool \"{name}\" panicked: {message}"
                )))
            }
            Ok(Err(error)) => ToolExecutionResult::failure(error),
            // e. A success cancelled meanwhile becomes ABORTED; failures stay.
            Ok(Ok(_)) if fused.is_cancelled() => aborted(),
            Ok(Ok(value)) => build_success(&def, exec, value, record.concludes_turn()),
        }
    }
}

/// Rule 12: the body's deferred contexts come before any others.
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
