//! The policy matrix (`docs/CONTRACTS.md`, "Stages", stages 4–8): every pre-execute outcome × every
//! way of calling. The `Suspended` column calls the tool from a Code Mode program in a
//! suspendable run: an `ask` suspends it (the approval service is never asked) and the run
//! resumes with the row's answer as the decision.
//!
//! Each cell asserts the exact wire result, how often the tool body ran (0 on every denied cell,
//! 1 on allowed ones) and how often the approval service was asked. Rows are [`Policy`] values,
//! columns are [`Column`] values; a new column only needs a variant and an arm in [`execute_in`].

use crate::support;

use dsh_tools::exec::{PreToolDecision, ToolExecutionInput, ToolExecutionResult};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::approval::ApprovalOutcome;
use dsh_tools_runtime::hooks::pre_execute_fn;
use serde_json::{Value, json};
use support::{
    Script, ScriptedApproval, base, call_as, counted_with, deciding_pre, failure, nested, wire,
};

/// What decides the call.
#[derive(Debug, Clone, Copy)]
enum Policy {
    /// The pre-execute policy allows.
    Allow,
    /// The pre-execute policy denies with `policy says no`.
    Deny,
    /// The policy asks; the user allows this call once.
    AskAllowedOnce,
    /// The policy asks; the user rejects.
    AskRejected,
    /// The policy asks; the request is cancelled (the caller is not).
    AskCancelled,
    /// The policy asks; no approval channel exists.
    AskUnavailable,
    /// The policy allows; a guard denies with `guarded`.
    GuardDenial,
}

/// How the call is made.
#[derive(Debug, Clone, Copy)]
enum Column {
    /// A model-direct call.
    Direct,
    /// A nested call (it has a parent execution, as Code Mode sub-calls do).
    Nested,
    /// A model-direct call inside a batch of one model turn, between two parallel-safe calls.
    Batch,
    /// A sub-call of a Code Mode program in a suspendable run.
    #[cfg(feature = "code-mode")]
    Suspended,
}

impl Column {
    /// Whether an `ask` suspends the run in this column.
    fn suspends(self) -> bool {
        #[cfg(feature = "code-mode")]
        if let Column::Suspended = self {
            return true;
        }
        false
    }
}

/// The outcome of one cell.
struct Cell {
    result: ToolExecutionResult,
    body_runs: usize,
    approvals: usize,
    /// How often the run suspended (the `Suspended` column only).
    suspensions: usize,
}

/// The `Suspended` column: the probe called from a program in a suspendable run.
#[cfg(feature = "code-mode")]
mod suspendable {
    use std::sync::Arc;

    use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
    use dsh_tools_runtime::code::durable::{
        ContinuationKey, Decision, Durability, MemorySpentStore, Resume, RunOutcome,
    };
    use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
    use dsh_tools_runtime::code::{CodeMode, CodeModeExt};
    use dsh_tools_runtime::{Scope, ToolRegistry};
    use serde_json::json;

    use super::Policy;
    use super::support::ResultLog;

    /// The decision a resumption brings for a row that asks: the row's answer, where a person's
    /// answer exists (a cancelled request or a missing channel are the approval service's, not a
    /// person's: the person says no).
    pub(super) fn decision(policy: Policy) -> Decision {
        match policy {
            Policy::AskAllowedOnce => Decision::APPROVE,
            _ => Decision::Deny,
        }
    }

    /// Runs `probe` from a program in a suspendable run as `agent`, resuming any suspension with
    /// the row's decision; returns the probe sub-call's final result and the suspensions.
    pub(super) async fn execute_suspendable(
        policy: Policy,
        registry: &ToolRegistry,
        agent: &Scope,
    ) -> (ToolExecutionResult, usize) {
        CodeMode::new(Arc::new(QuickJsRuntime::default()))
            .install(registry)
            .unwrap();
        let (results, observing) = ResultLog::observe(registry);
        let durability = Durability::new(
            ContinuationKey::generate(),
            Arc::new(MemorySpentStore::default()),
        );
        let mut input = ToolExecutionInput::new(
            "run",
            "run_code",
            json!({"code": "return await tools.probe({});", "description": "Call the probe"}),
        );
        input.agent = Some(agent.id());
        let mut suspensions = 0;
        let mut outcome = registry.run_code_suspendable(input, &durability).await;
        while let RunOutcome::Suspended {
            continuation,
            pending,
        } = outcome
        {
            suspensions += 1;
            assert_eq!(pending.len(), 1);
            assert_eq!(pending[0].tool, "probe");
            assert_eq!(pending[0].reason.as_deref(), Some("needs a human"));
            let resume = Resume::new(decision(policy)).for_agent(agent.id());
            outcome = registry
                .resume_code(&continuation, resume, &durability)
                .await
                .expect("the continuation resumes");
        }
        assert!(matches!(outcome, RunOutcome::Completed(_)), "{outcome:?}");
        observing.dispose();
        // The probe's last final result (a suspended attempt is aborted first).
        let (_, result) = results
            .entries()
            .into_iter()
            .rev()
            .find(|(id, _)| id == "run:code:1")
            .expect("the probe was called");
        (result, suspensions)
    }
}

async fn execute_in(
    column: Column,
    registry: &ToolRegistry,
    input: ToolExecutionInput,
) -> ToolExecutionResult {
    match column {
        #[cfg(feature = "code-mode")]
        Column::Suspended => unreachable!("run by execute_suspendable"),
        Column::Direct => registry.execute(input).await,
        Column::Nested => registry.execute(nested(input)).await,
        Column::Batch => {
            let neighbour = |id: &str| ToolExecutionInput::new(id, "neighbour", json!({}));
            let mut results = registry
                .execute_batch(vec![neighbour("n1"), input, neighbour("n2")])
                .await;
            assert_eq!(results.len(), 3, "one result per call");
            assert!(results[0].value().is_some() && results[2].value().is_some());
            results.remove(1)
        }
    }
}

async fn run_cell(policy: Policy, column: Column) -> Cell {
    let registry = match column {
        #[cfg(feature = "code-mode")]
        Column::Suspended => ToolRegistry::with_config(dsh_tools_runtime::RegistryConfig {
            mode: dsh_tools_runtime::PresentationMode::Code,
            ..Default::default()
        }),
        _ => ToolRegistry::new(),
    };
    let builder = base("probe").presentation_meta(|_, _| json!({"card": "probe"}));
    let probe = counted_with(builder, |_| Ok(json!("probe ran")));
    registry.register(probe.def.clone()).unwrap().keep();
    registry
        .register(
            base("neighbour")
                .concurrency_safe(true)
                .execute(|_, _| async { Ok(json!("neighbour ran")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let agent = registry.new_scope();

    let decision = match policy {
        Policy::Allow | Policy::GuardDenial => PreToolDecision::Allow,
        Policy::Deny => PreToolDecision::Deny {
            reason: "policy says no".into(),
        },
        Policy::AskAllowedOnce
        | Policy::AskRejected
        | Policy::AskCancelled
        | Policy::AskUnavailable => PreToolDecision::Ask {
            reason: Some("needs a human".into()),
        },
    };
    // The policy decides the probe only; batch neighbours pass through to the default allow.
    let probe_policy = deciding_pre(decision);
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            let probe_policy = probe_policy.clone();
            async move {
                if &*exec.name == "probe" {
                    probe_policy(exec, next).await
                } else {
                    next.run().await
                }
            }
        }))
        .keep();
    if matches!(policy, Policy::GuardDenial) {
        // The probe only (a Code Mode run's `run_code` call is the agent's too).
        agent
            .guard(|exec| (&*exec.name == "probe").then(|| "guarded".into()))
            .keep();
    }
    let answer = match policy {
        Policy::AskRejected => ApprovalOutcome::Rejected,
        Policy::AskCancelled => ApprovalOutcome::Cancelled,
        Policy::AskUnavailable => ApprovalOutcome::Unavailable,
        _ => ApprovalOutcome::AllowedOnce,
    };
    let approval = ScriptedApproval::mount(&registry, Script::Answer(answer));

    let (result, suspensions) = match column {
        #[cfg(feature = "code-mode")]
        Column::Suspended => suspendable::execute_suspendable(policy, &registry, &agent).await,
        _ => (
            execute_in(column, &registry, call_as("probe", &agent)).await,
            0,
        ),
    };
    Cell {
        result,
        body_runs: probe.runs(),
        approvals: approval.requests().len(),
        suspensions,
    }
}

/// The exact wire result of a cell.
fn expected(policy: Policy, column: Column) -> Value {
    let allowed = || {
        let mut success = json!({
            "isError": false,
            "value": "probe ran",
            "content": [{"type": "text", "text": "probe ran"}],
        });
        // Presentation meta is computed for top-level calls only.
        if matches!(column, Column::Direct | Column::Batch) {
            success["meta"] = json!({"card": "probe"});
        }
        success
    };
    match policy {
        Policy::Allow | Policy::AskAllowedOnce => allowed(),
        Policy::Deny => failure("policy says no"),
        // A suspended run's ask is answered by the person resuming it.
        Policy::AskRejected | Policy::AskCancelled | Policy::AskUnavailable
            if column.suspends() =>
        {
            failure("the user rejected tool \"probe\"")
        }
        Policy::AskRejected => failure("the user rejected tool \"probe\""),
        Policy::AskCancelled => failure("approval for tool \"probe\" was cancelled"),
        Policy::AskUnavailable => {
            failure("tool \"probe\" requires approval, but no approval channel is available")
        }
        Policy::GuardDenial => failure("guarded"),
    }
}

async fn assert_cell(policy: Policy, column: Column) {
    let cell = run_cell(policy, column).await;
    assert_eq!(
        wire(&cell.result),
        expected(policy, column),
        "{policy:?} × {column:?}"
    );
    let allowed = matches!(policy, Policy::Allow | Policy::AskAllowedOnce);
    assert_eq!(
        cell.body_runs,
        usize::from(allowed),
        "body runs, {policy:?} × {column:?}"
    );
    let asked = matches!(
        policy,
        Policy::AskAllowedOnce
            | Policy::AskRejected
            | Policy::AskCancelled
            | Policy::AskUnavailable
    );
    let suspended = column.suspends();
    assert_eq!(
        cell.approvals,
        usize::from(asked && !suspended),
        "approvals, {policy:?} × {column:?}"
    );
    assert_eq!(
        cell.suspensions,
        usize::from(asked && suspended),
        "suspensions, {policy:?} × {column:?}"
    );
}

#[tokio::test]
async fn allow_direct() {
    assert_cell(Policy::Allow, Column::Direct).await;
}

#[tokio::test]
async fn allow_nested() {
    assert_cell(Policy::Allow, Column::Nested).await;
}

#[tokio::test]
async fn deny_direct() {
    assert_cell(Policy::Deny, Column::Direct).await;
}

#[tokio::test]
async fn deny_nested() {
    assert_cell(Policy::Deny, Column::Nested).await;
}

#[tokio::test]
async fn ask_allowed_once_direct() {
    assert_cell(Policy::AskAllowedOnce, Column::Direct).await;
}

#[tokio::test]
async fn ask_allowed_once_nested() {
    assert_cell(Policy::AskAllowedOnce, Column::Nested).await;
}

#[tokio::test]
async fn ask_rejected_direct() {
    assert_cell(Policy::AskRejected, Column::Direct).await;
}

#[tokio::test]
async fn ask_rejected_nested() {
    assert_cell(Policy::AskRejected, Column::Nested).await;
}

#[tokio::test]
async fn ask_cancelled_direct() {
    assert_cell(Policy::AskCancelled, Column::Direct).await;
}

#[tokio::test]
async fn ask_cancelled_nested() {
    assert_cell(Policy::AskCancelled, Column::Nested).await;
}

#[tokio::test]
async fn ask_unavailable_direct() {
    assert_cell(Policy::AskUnavailable, Column::Direct).await;
}

#[tokio::test]
async fn ask_unavailable_nested() {
    assert_cell(Policy::AskUnavailable, Column::Nested).await;
}

#[tokio::test]
async fn guard_denial_direct() {
    assert_cell(Policy::GuardDenial, Column::Direct).await;
}

#[tokio::test]
async fn guard_denial_nested() {
    assert_cell(Policy::GuardDenial, Column::Nested).await;
}

#[tokio::test]
async fn every_policy_in_a_batch() {
    for policy in [
        Policy::Allow,
        Policy::Deny,
        Policy::AskAllowedOnce,
        Policy::AskRejected,
        Policy::AskCancelled,
        Policy::AskUnavailable,
        Policy::GuardDenial,
    ] {
        assert_cell(policy, Column::Batch).await;
    }
}

#[cfg(feature = "code-mode")]
#[tokio::test]
async fn every_policy_in_a_suspended_run() {
    for policy in [
        Policy::Allow,
        Policy::Deny,
        Policy::AskAllowedOnce,
        Policy::AskRejected,
        Policy::AskCancelled,
        Policy::AskUnavailable,
        Policy::GuardDenial,
    ] {
        assert_cell(policy, Column::Suspended).await;
    }
}
