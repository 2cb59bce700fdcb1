//! Stages 2–9 (`docs/CONTRACTS.md`, "Stages"): hidden tools, pre-aborted calls, pre-execute
//! policies, approval, guards.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, RwLock};

use dsh_tools::exec::{PreToolDecision, ToolExecution, ToolExecutionResult};
use dsh_tools::{ToolDefinition, ToolError};
use futures_util::FutureExt;

use super::hooks::{
    ApprovalGate, ApprovalWait, Ask, Guard, PreExecute, PreExecuteFn, PreNext, RunApproval,
    applicable,
};
use super::outcome::{aborted_before_dispatch, denied, from_panic};
use super::{Call, Host, Prepared};
use crate::approval::{
    ApprovalOutcome, ApprovalPolicy, ApprovalRequest, ApprovalScope, ApprovalService,
};

/// The policy stage: decides whether a call reaches dispatch. Holds the approval service and
/// the tools approved for the session.
#[derive(Default)]
pub(super) struct Policy {
    approval: RwLock<Option<Arc<dyn ApprovalService>>>,
    session: RwLock<HashSet<String>>,
    /// Which tools ask without a pre-execute policy saying so.
    asks: RwLock<ApprovalPolicy>,
}

impl Policy {
    pub(super) fn set_approval_policy(&self, policy: ApprovalPolicy) {
        *self.asks.write().unwrap_or_else(PoisonError::into_inner) = policy;
    }

    /// Whether `call`'s tool asks for approval by itself (declared, or by the approval policy).
    fn tool_asks(&self, call: &Call) -> bool {
        let Some((def, _)) = call.resolved.as_ref() else {
            return false;
        };
        let policy = *self.asks.read().unwrap_or_else(PoisonError::into_inner);
        policy.asks(def)
    }

    pub(super) fn set_approval(&self, service: Arc<dyn ApprovalService>) {
        *self
            .approval
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(service);
    }

    /// The mounted approval service, if any.
    pub(super) fn approval(&self) -> Option<Arc<dyn ApprovalService>> {
        self.approval
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets every approval given for the session.
    pub(super) fn clear_session_approvals(&self) {
        self.session
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn approved_for_session(&self, name: &str) -> bool {
        self.session
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    }

    /// Remembers what `outcome` approves beyond this call, narrowed to `widest`.
    fn remember<H: Host>(
        &self,
        host: &H,
        call: &Call,
        exec: &ToolExecution,
        outcome: ApprovalOutcome,
        widest: ApprovalScope,
    ) {
        match outcome.scope().map(|scope| scope.min(widest)) {
            Some(ApprovalScope::Session) => {
                self.session
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(exec.name.to_string());
            }
            Some(ApprovalScope::Run) => {
                for listener in applicable(call.hooks.get::<RunApproval>(), exec, |a| host.chain(a))
                {
                    listener(exec);
                }
            }
            Some(ApprovalScope::Once) | None => {}
        }
    }

    /// Stages 2–9.
    pub(super) async fn prepare<H: Host>(&self, host: &H, call: &mut Call) -> Prepared {
        match self.prepare_now(host, call) {
            Ok(prepared) => prepared,
            Err(chain) => self.prepare_awaited(host, call, chain).await,
        }
    }

    /// Stages 2–9 when nothing is awaited: `Ok` when no pre-execute policy applies (the guards
    /// alone decide, synchronously), else `Err` with the policies' chain, which
    /// [`Policy::prepare_awaited`] runs.
    pub(super) fn prepare_now<H: Host>(
        &self,
        host: &H,
        call: &mut Call,
    ) -> Result<Prepared, Vec<PreExecuteFn>> {
        let cancel = &call.caller_cancel;
        // 2. A tool this call may not run directly (the Code Mode collapse).
        if let Some(refusal) = call.hidden.take() {
            if cancel.is_cancelled() {
                return Ok(Prepared::FinalResult(aborted_before_dispatch()));
            }
            call.finalizer = None;
            let failure = ToolExecutionResult::failure(ToolError::from_harness(&refusal));
            return Ok(Prepared::FinalResult(failure));
        }
        // 3. Pre-aborted.
        if cancel.is_cancelled() {
            return Ok(Prepared::FinalResult(aborted_before_dispatch()));
        }
        // 4–8, with any panic contained as a final error (stage 9).
        let exec = &call.exec;
        let chain = applicable(call.hooks.get::<PreExecute>(), exec, |a| host.chain(a));
        if !chain.is_empty() || self.tool_asks(call) {
            return Err(chain);
        }
        let exec = Arc::clone(exec);
        let concluded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            conclude(host, call, &exec, PreToolDecision::Allow, false)
        }));
        Ok(concluded.unwrap_or_else(|payload| policy_panicked(&exec, &*payload)))
    }

    /// Stages 4–9 through the pre-execute `chain` (see [`Policy::prepare_now`]).
    pub(super) async fn prepare_awaited<H: Host>(
        &self,
        host: &H,
        call: &Call,
        chain: Vec<PreExecuteFn>,
    ) -> Prepared {
        let exec = Arc::clone(&call.exec);
        // Boxed: the waterfall's future would otherwise size every call's future.
        let policy = self.policy(host, call, &exec, chain);
        Box::pin(std::panic::AssertUnwindSafe(policy).catch_unwind())
            .await
            .unwrap_or_else(|payload| policy_panicked(&exec, &*payload))
    }

    async fn policy<H: Host>(
        &self,
        host: &H,
        call: &Call,
        exec: &Arc<ToolExecution>,
        chain: Vec<PreExecuteFn>,
    ) -> Prepared {
        // 4. The pre-execute waterfall (scope-filtered).
        let decision = PreNext {
            chain: chain.into(),
            index: 0,
            exec: Arc::clone(exec),
        }
        .run()
        .await;
        // A tool that asks by itself: an allow becomes an ask (a policy may still deny).
        let decision = match decision {
            PreToolDecision::Allow if self.tool_asks(call) => PreToolDecision::Ask { reason: None },
            other => other,
        };
        // 5–6. Ask.
        let mut approval_cancelled = false;
        let decision = match decision {
            PreToolDecision::Ask { reason } => {
                let outcome = self.ask(host, call, exec, reason).await;
                approval_cancelled = matches!(outcome, Asked::Cancelled(_));
                outcome.into_decision()
            }
            other => other,
        };
        conclude(host, call, exec, decision, approval_cancelled)
    }

    async fn ask<H: Host>(
        &self,
        host: &H,
        call: &Call,
        exec: &ToolExecution,
        reason: Option<String>,
    ) -> Asked {
        let name = &exec.name;
        let def = call.resolved.as_ref().map(|(def, _)| def);
        let annotations = def.map(ToolDefinition::annotations).unwrap_or_default();
        let widest = ApprovalScope::widest_for(&annotations, exec.parent.is_some());
        if widest == ApprovalScope::Session && self.approved_for_session(name) {
            return Asked::Allowed;
        }
        // What the person is shown: the tool's own presentation of its arguments, or the
        // generic one.
        let arguments = exec.arguments.clone();
        let args = arguments.as_deref().unwrap_or(&serde_json::Value::Null);
        let view = def
            .and_then(|def| def.present_call(args))
            .unwrap_or_else(|| dsh_tools::present::fallback_call_view(name, args));
        // A gate answers first (a Code Mode run's approvals, a durable run's decision or
        // suspension).
        let ask = Ask {
            exec,
            reason: reason.as_deref(),
            view: &view,
            widest,
        };
        let gated = applicable(call.hooks.get::<ApprovalGate>(), exec, |a| host.chain(a))
            .iter()
            .find_map(|gate| gate(&ask));
        if let Some(answer) = gated {
            let outcome = answer.await;
            tracing::info!(tool = %name, call_id = %exec.call_id, ?outcome, "approval answered by a gate");
            self.remember(host, call, exec, outcome, widest);
            return Asked::from_outcome(name, outcome);
        }
        let service = self
            .approval
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(service) = service else {
            return Asked::Denied(reason.unwrap_or_else(|| {
                format!("tool \"{name}\" requires approval, but no approval channel is available")
            }));
        };
        let request = ApprovalRequest {
            agent: exec.agent,
            tool_name: name.to_string(),
            call_id: exec.call_id.to_string(),
            reason,
            arguments,
            view,
            annotations,
            widest_scope: widest,
            cancel: tokio_util::sync::CancellationToken::clone(&call.caller_cancel),
        };
        // Whoever waits on this call (a Code Mode program's clock) is told the wait started;
        // what they return is dropped when it ends.
        let waiting: Vec<_> = applicable(call.hooks.get::<ApprovalWait>(), exec, |a| host.chain(a))
            .iter()
            .filter_map(|hook| hook(exec))
            .collect();
        let outcome = service.request(request).await;
        drop(waiting);
        tracing::info!(tool = %name, call_id = %exec.call_id, ?outcome, "approval answered");
        self.remember(host, call, exec, outcome, widest);
        Asked::from_outcome(name, outcome)
    }
}

impl Asked {
    /// What the pipeline does with an approval outcome for tool `name`.
    fn from_outcome(name: &str, outcome: ApprovalOutcome) -> Self {
        match outcome {
            ApprovalOutcome::AllowedOnce
            | ApprovalOutcome::AllowedForRun
            | ApprovalOutcome::AllowedForSession => Asked::Allowed,
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
}

/// Stages 7–8 after the decision: denial, or the first guard's reason after an allow.
fn conclude<H: Host>(
    host: &H,
    call: &Call,
    exec: &ToolExecution,
    decision: PreToolDecision,
    approval_cancelled: bool,
) -> Prepared {
    let cancel = &call.caller_cancel;
    if approval_cancelled && cancel.is_cancelled() {
        return Prepared::PostResult(aborted_before_dispatch());
    }
    // 7. Denial, or the first guard's reason after an allow.
    let reason = match decision {
        PreToolDecision::Allow => guard_reason(host, call, exec),
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

/// The first guard's reason: global guards in registration order, then each scope of the
/// call's chain, farthest first (each in registration order). Guards are read as they are now,
/// not from the call's snapshot: a guard added or removed by a pre-execute policy of this very
/// call counts.
fn guard_reason<H: Host>(host: &H, call: &Call, exec: &ToolExecution) -> Option<String> {
    let hooks = host.pipeline().hooks_since(&call.hooks);
    let guards = hooks.get::<Guard>();
    if guards.is_empty() {
        return None;
    }
    let global = guards.iter().filter(|g| g.scope.is_none());
    let scoped = exec
        .agent
        .filter(|_| guards.iter().any(|g| g.scope.is_some()))
        .map(|agent| host.chain(agent))
        .unwrap_or_default()
        .into_iter()
        .flat_map(|scope| guards.iter().filter(move |g| g.scope == Some(scope)));
    global.chain(scoped).find_map(|guard| (guard.hook)(exec))
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

/// The final result of a call whose pre-execute stage panicked (stage 9).
fn policy_panicked(exec: &ToolExecution, payload: &(dyn std::any::Any + Send)) -> Prepared {
    tracing::warn!(tool = %exec.name, call_id = %exec.call_id, "pre-execute policy panicked");
    Prepared::FinalResult(from_panic(payload))
}
