//! Stages 1–9: create the execution, collapse, pre-execute policies, approval, guards.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use dsh_tools::ToolError;
use dsh_tools::definition::FinalizeFn;
use dsh_tools::exec::{
    ExecutionToken, PreToolDecision, ToolExecution, ToolExecutionInput, ToolExecutionResult,
};
use dsh_tools::json::is_lossless;
use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

use super::outcome::{aborted_before_dispatch, denied, from_panic};
use crate::approval::{ApprovalOutcome, ApprovalRequest};
use crate::error::{RUN_CODE_NAME, ToolNotFoundError};
use crate::hooks::{HookTables, PreExecuteFn, PreNext};
use crate::registry::{PresentationMode, ToolRegistry};

/// An execution in flight: what every later stage needs.
pub(crate) struct Execution {
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) caller_cancel: CancellationToken,
    pub(crate) finalizer: Option<FinalizeFn>,
    pub(crate) hooks: Arc<HookTables>,
    /// Whether dispatch invoked the body (set by `dispatch`; read by the late cancellation of
    /// rule 16, which is `ABORTED` only when the body ran).
    pub(crate) body_invoked: AtomicBool,
}

/// Where an execution goes after preparation (REFERENCE §6.6).
pub(crate) enum Prepared {
    /// Run the execute waterfall.
    Dispatch,
    /// A result that still goes through post-execute (denials, in-policy aborts).
    PostResult(ToolExecutionResult),
    /// A final result (skips post-execute).
    FinalResult(ToolExecutionResult),
}

impl ToolRegistry {
    /// Stage 1: create the execution (snapshot arguments once, mint the token, capture the
    /// finaliser). A non-lossless argument value yields the final failure directly.
    pub(crate) fn create_execution(
        &self,
        input: ToolExecutionInput,
    ) -> (Execution, Option<ToolExecutionResult>) {
        let ToolExecutionInput {
            call_id,
            root_call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
            progress,
        } = input;
        let visible = self.get(&name, agent);
        let lossless = is_lossless(&arguments);
        // The finaliser is captured now. The argument failure of a collapsed call that is not
        // aborted drops it, like the collapse itself (rule 2): such a call could never execute.
        let collapsed = visible.is_some()
            && parent.is_none()
            && name != RUN_CODE_NAME
            && self.effective_mode(agent) == PresentationMode::Code;
        let finalizer = visible
            .as_ref()
            .and_then(|def| def.finalizer())
            .filter(|_| lossless || !collapsed || cancel.is_cancelled());
        let call_id: Arc<str> = call_id.into();
        let root_call_id = root_call_id.map_or_else(|| Arc::clone(&call_id), Arc::from);
        let exec = Arc::new(ToolExecution {
            token: ExecutionToken::mint(),
            call_id,
            root_call_id,
            name: name.into(),
            arguments: lossless.then(|| Arc::new(arguments)),
            agent,
            parent,
            progress,
        });
        let failure = (!lossless).then(|| {
            ToolExecutionResult::failure(ToolError::msg(
                "tool execution arguments must be losslessly JSON-serializable",
            ))
        });
        let execution = Execution {
            exec,
            caller_cancel: cancel,
            finalizer,
            hooks: self.inner.hook_tables(),
            body_invoked: AtomicBool::new(false),
        };
        (execution, failure)
    }

    /// Stages 2–9.
    pub(crate) async fn prepare(&self, execution: &mut Execution) -> Prepared {
        let exec = Arc::clone(&execution.exec);
        let cancel = &execution.caller_cancel;

        // 2. The Code Mode collapse of model-direct calls.
        let collapsed = exec.parent.is_none()
            && &*exec.name != RUN_CODE_NAME
            && self.effective_mode(exec.agent) == PresentationMode::Code
            && self.get(&exec.name, exec.agent).is_some();
        if collapsed {
            if cancel.is_cancelled() {
                return Prepared::FinalResult(aborted_before_dispatch());
            }
            execution.finalizer = None;
            let error = ToolNotFoundError::collapsed(&exec.name);
            return Prepared::FinalResult(ToolExecutionResult::failure(ToolError::from_harness(
                &error,
            )));
        }
        // 3. Pre-aborted.
        if cancel.is_cancelled() {
            return Prepared::FinalResult(aborted_before_dispatch());
        }
        // 4–8, with any panic contained as a final error (rule 9).
        let chain = self.filtered(&execution.hooks.pre, &exec);
        let prepared = if chain.is_empty() {
            // Nothing to await: the guards alone decide, synchronously.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.conclude(&exec, PreToolDecision::Allow, false, cancel)
            }))
        } else {
            // Boxed: the waterfall's future would otherwise size every execution's future.
            Box::pin(std::panic::AssertUnwindSafe(self.policy(&exec, chain, cancel)).catch_unwind())
                .await
        };
        prepared.unwrap_or_else(|payload| {
            tracing::warn!(tool = %exec.name, call_id = %exec.call_id, "pre-execute policy panicked");
            Prepared::FinalResult(from_panic(&*payload))
        })
    }

    async fn policy(
        &self,
        exec: &Arc<ToolExecution>,
        chain: Vec<PreExecuteFn>,
        cancel: &CancellationToken,
    ) -> Prepared {
        // 4. The pre-execute waterfall (scope-filtered).
        let decision = PreNext {
            chain: chain.into(),
            index: 0,
            exec: Arc::clone(exec),
        }
        .run()
        .await;
        // 5–6. Ask.
        let mut approval_cancelled = false;
        let decision = match decision {
            PreToolDecision::Ask { reason } => {
                let outcome = self.ask(exec, reason, cancel).await;
                approval_cancelled = matches!(outcome, Asked::Cancelled(_));
                outcome.into_decision()
            }
            other => other,
        };
        self.conclude(exec, decision, approval_cancelled, cancel)
    }

    /// Stages 7–8 after the decision: denial, or the first guard's reason after an allow.
    fn conclude(
        &self,
        exec: &ToolExecution,
        decision: PreToolDecision,
        approval_cancelled: bool,
        cancel: &CancellationToken,
    ) -> Prepared {
        if approval_cancelled && cancel.is_cancelled() {
            return Prepared::PostResult(aborted_before_dispatch());
        }
        // 7. Denial, or the first guard's reason after an allow.
        let reason = match decision {
            PreToolDecision::Allow => self.guard_reason(exec),
            PreToolDecision::Deny { reason } => Some(reason),
            PreToolDecision::Ask { reason } => Some(reason.unwrap_or_default()),
        };
        if let Some(reason) = reason {
            tracing::info!(tool = %exec.name, call_id = %exec.call_id, %reason, "tool call denied");
            return Prepared::PostResult(denied(reason));
        }
        // 8. Cancelled during policy.
        if cancel.is_cancelled() {
            return Prepared::PostResult(aborted_before_dispatch());
        }
        Prepared::Dispatch
    }

    async fn ask(
        &self,
        exec: &ToolExecution,
        reason: Option<String>,
        cancel: &CancellationToken,
    ) -> Asked {
        let name = &exec.name;
        let service = self
            .inner
            .approval
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(service) = service else {
            return Asked::Denied(reason.unwrap_or_else(|| {
                format!("tool \"{name}\" requires approval (not yet supported)")
            }));
        };
        let Some(agent) = exec.agent else {
            return Asked::Denied(format!(
                "tool \"{name}\" requires approval, but the call has no agent to route it through"
            ));
        };
        let arguments = exec.arguments.clone();
        let args = arguments.as_deref().unwrap_or(&serde_json::Value::Null);
        let view = self
            .get(name, Some(agent))
            .and_then(|def| def.present_call(args))
            .unwrap_or_else(|| dsh_tools::present::fallback_call_view(name, args));
        let request = ApprovalRequest {
            agent,
            tool_name: name.to_string(),
            call_id: exec.call_id.to_string(),
            reason,
            arguments,
            view,
            cancel: cancel.clone(),
        };
        // A Code Mode sub-call waiting for a person does not spend its program's wall clock.
        #[cfg(feature = "code-mode")]
        let paused = self.pause_run_clock(exec.parent);
        let outcome = service.request(request).await;
        #[cfg(feature = "code-mode")]
        drop(paused);
        tracing::info!(tool = %name, call_id = %exec.call_id, ?outcome, "approval answered");
        match outcome {
            ApprovalOutcome::AllowedOnce => Asked::Allowed,
            ApprovalOutcome::Rejected => {
                Asked::Denied(format!("the user rejected tool \"{name}\""))
            }
            ApprovalOutcome::Cancelled => {
                Asked::Cancelled(format!("approval for tool \"{name}\" was cancelled"))
            }
            ApprovalOutcome::Unavailable => Asked::Denied(format!(
                "tool \"{name}\" requires approval, but no approval channel is available"
            )),
        }
    }

    /// Global guards in registration order, then each chain layer farthest-first.
    fn guard_reason(&self, exec: &ToolExecution) -> Option<String> {
        let guards: Vec<_> = {
            let state = self.inner.read();
            let mut guards: Vec<_> = state
                .global
                .guards
                .iter()
                .map(|(_, g)| Arc::clone(g))
                .collect();
            if let Some(agent) = exec.agent {
                for id in state.chain(agent) {
                    if let Some(node) = state.scopes.get(&id) {
                        guards.extend(node.layer.guards.iter().map(|(_, g)| Arc::clone(g)));
                    }
                }
            }
            guards
        };
        guards.iter().find_map(|guard| guard(exec))
    }
}

/// The outcome of an `ask`.
enum Asked {
    Allowed,
    Denied(String),
    Cancelled(String),
}

impl Asked {
    fn into_decision(self) -> PreToolDecision {
        match self {
            Asked::Allowed => PreToolDecision::Allow,
            Asked::Denied(reason) | Asked::Cancelled(reason) => PreToolDecision::Deny { reason },
        }
    }
}
