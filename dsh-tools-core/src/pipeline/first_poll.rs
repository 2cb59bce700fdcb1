//! Stages 10–13 without a future of their own, for a batch's calls: core dispatch up to the
//! body's first poll, made in the scheduler's own `poll`. A body that completes on that poll
//! (the common case for quick tools) costs no allocation beyond the body's own; one that does
//! not hands its still-running body (already boxed, so it can move) to a continuation.
//!
//! Only the plain case takes this path: no execute wrapper applies, the tool the call resolved
//! to at creation still stands, and no deadline is enforced on it. Anything else is
//! [`FirstPoll::Async`] — the caller runs [`super::dispatch`] as usual.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::task::{Context, Poll};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ToolRunContext;
use dsh_tools::{ToolDefinition, ToolError};
use futures_util::FutureExt;

use super::dispatch::{CoreRecord, after_dispatch, body_result};
use super::hooks::ExecuteWrapper;
use super::outcome::aborted_before_dispatch;
use super::{Call, CallerCancel, Host, Prepared};

/// How far [`first_poll`] got.
pub(crate) enum FirstPoll {
    /// Dispatch is over: its post- or final result.
    Done(Prepared),
    /// The body is still running: await [`Running::finish`].
    Running(Running),
    /// Not the plain case: run [`super::dispatch`].
    Async,
}

/// A body that did not complete on its first poll, and what its dispatch result needs.
pub(crate) struct Running {
    body: BoxFuture<'static, Result<serde_json::Value, ToolError>>,
    def: ToolDefinition,
    record: CoreRecord,
}

impl Running {
    /// The rest of dispatch: the body to its end, then stages 10e–13 as [`super::dispatch`]
    /// makes them.
    pub(crate) async fn finish(self, call: &Call) -> Prepared {
        let outcome = AssertUnwindSafe(self.body).catch_unwind().await;
        let cancelled = self.record.body_cancelled();
        let result = body_result(&self.def, &call.exec, outcome, cancelled, &self.record);
        after_dispatch(call, &self.record, result)
    }
}

// Fast path of `dispatch::dispatch`, held equal by tests/pipeline/batch_outcomes.rs::a_batch_ends_each_call_as_execute_does.
/// Stages 10–13 of `call` up to its body's first poll (with `cx`, the waker of whoever polls
/// the call next). The steps and their order are core dispatch's (stage 10 a–e).
pub(crate) fn first_poll<H: Host>(host: &H, call: &Call, cx: &mut Context<'_>) -> FirstPoll {
    let stage = &host.pipeline().dispatch;
    let Some((def, generation)) = &call.resolved else {
        return FirstPoll::Async;
    };
    let plain = *generation == host.generation()
        && call.hooks.get::<ExecuteWrapper>().is_empty()
        && (def.timeout_ms().is_none() || !stage.deadlines.load(Ordering::Relaxed));
    if !plain {
        return FirstPoll::Async;
    }
    // The creation already failed a call without an argument snapshot; the full path says so.
    let Some(args) = call.exec.arguments.clone() else {
        return FirstPoll::Async;
    };
    let record = stage.record();
    let exec = &call.exec;
    // a–b. The body's token follows the caller's (a child made only if the body or a
    // cancellation asks for it); already cancelled, the body is not invoked.
    if call.caller_cancel.is_cancelled() {
        return FirstPoll::Done(after_dispatch(call, &record, aborted_before_dispatch()));
    }
    // d. Invoke the body and poll it once; a panic in either is the tool's failure.
    record.body_invoked.store(true, Ordering::SeqCst);
    let (ctx, handle) = match &call.caller_cancel {
        CallerCancel::Own(caller) => {
            ToolRunContext::with_parent_token(Arc::clone(exec), caller.clone())
        }
        CallerCancel::Shared(caller) => {
            ToolRunContext::with_shared_parent_token(Arc::clone(exec), Arc::clone(caller))
        }
    };
    let ctx = ctx.with_states(stage.states());
    *record.handle.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle);
    let invoke = || match call.args_valid {
        true => def.execute_prevalidated(args, ctx),
        false => def.execute(args, ctx),
    };
    let outcome = match catch_unwind(AssertUnwindSafe(invoke)) {
        Err(payload) => Err(payload),
        Ok(mut body) => match catch_unwind(AssertUnwindSafe(|| body.as_mut().poll(cx))) {
            Ok(Poll::Pending) => {
                let def = def.clone();
                return FirstPoll::Running(Running { body, def, record });
            }
            Ok(Poll::Ready(outcome)) => Ok(outcome),
            Err(payload) => Err(payload),
        },
    };
    let result = body_result(def, exec, outcome, record.body_cancelled(), &record);
    FirstPoll::Done(after_dispatch(call, &record, result))
}
