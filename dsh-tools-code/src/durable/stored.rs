//! Durable runs journaled as they go in the host's [`DurableStore`] (feature `store`): the run
//! begins in the store, each side-effecting sub-call records its write-ahead intent before it
//! is dispatched, each completed sub-call is appended to the run's journal before its result
//! reaches the program, and a run whose process died is resumed by id ([`resume_run`]).

use std::collections::HashSet;
use std::sync::{Arc, PoisonError};

use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::present::ToolCallView;
use dsh_tools::{ErrorInfo, ToolError};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::approval::{ApprovalRequest, ApprovalScope};
use dsh_tools_core::hooks::{DispatchExecution, ExecuteNext, ExecuteWrapper};
use dsh_tools_store::{DurableStore, Intent, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    ContinuationError, Decision, Durability, DurableStart, PendingCall, Resume, RunOutcome,
};
use crate::durable_run::journal::{Journal, JournalEntry, Settled};
use crate::durable_run::link::{IntentsLease, IntentsWrapper, RunLink, outcome_unknown_message};
use crate::record::RecordedRun;
use crate::state::{CodeModeState, code_runtime};

/// What a run resumed by id does with a side-effecting call that was in flight when its
/// process died (a write-ahead intent without a journaled result): it may or may not have taken
/// effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutcomeUnknownPolicy {
    /// The registry's approval service ([`ToolRegistry::approval`]) is asked, once per such
    /// call, whether to run it again (the default): allowed, it runs again as with
    /// [`Retry`](Self::Retry); rejected, cancelled, or with no approval service mounted, it
    /// fails as with [`Fail`](Self::Fail). Nothing runs twice unless someone says so.
    #[default]
    Ask,
    /// The program sees the call fail with `OUTCOME_UNKNOWN`, no one asked. The decision is
    /// journaled: a later resumption keeps it.
    Fail,
    /// The call runs again, with the same idempotency key: for tools that use it.
    Retry,
}

/// What a run's store needs to resume it, recorded when it begins.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunMeta {
    program: String,
    description: String,
    language: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    root: Option<String>,
}

/// Leases the execute wrapper that records the write-ahead intent of a side-effecting sub-call
/// of a run journaled in a store: installed while such a run is live ([`IntentsWrapper`]).
pub(crate) fn install_intents(registry: &ToolRegistry) -> Option<IntentsLease> {
    let code = CodeModeState::of(registry)?;
    let runs = Arc::clone(&code.runs);
    let install = move || {
        let wrapper = move |dispatch: DispatchExecution, next: ExecuteNext| {
            let exec = Arc::clone(dispatch.execution());
            let link = exec.parent.and_then(|parent| {
                let runs = runs.lock().unwrap_or_else(PoisonError::into_inner);
                runs.get(&parent)?.durable.as_ref()?.link().cloned()
            });
            let Some(link) = link.filter(|link| link.side_effecting(&exec.name)) else {
                return next.run(dispatch);
            };
            Box::pin(async move {
                match link.intend(&exec).await {
                    Ok(()) => next.run(dispatch).await,
                    Err(error) => ToolExecutionResult::failure(error),
                }
            }) as dsh_tools::definition::BoxFuture<'static, ToolExecutionResult>
        };
        registry.add_hook::<ExecuteWrapper>(Arc::new(wrapper))
    };
    Some(IntentsWrapper::lease(&code.intents, install))
}

/// Begins run `run` in the store: what [`resume_run`] needs to run it again.
pub(crate) async fn begin(
    store: &Arc<dyn DurableStore>,
    registry: &ToolRegistry,
    run: &str,
    arguments: &Value,
    root: Option<&str>,
) -> Result<Arc<RunLink>, String> {
    let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_owned();
    let meta = RunMeta {
        program: text("code"),
        description: text("description"),
        language: code_runtime(registry)
            .map_or_else(String::new, |runtime| runtime.language().to_owned()),
        root: root.map(str::to_owned),
    };
    let meta = serde_json::to_value(meta).map_err(|e| e.to_string())?;
    store
        .begin_run(run, &meta)
        .await
        .map_err(|error| format!("the durable store refused run \"{run}\": {error}"))?;
    let link = RunLink::new(Arc::clone(store), run, HashSet::new());
    Ok(Arc::new(link.with_intents(install_intents(registry))))
}

/// Links a resumed continuation's run to the store (it began when the run did) and records
/// the decisions the resumption carries, bound to their arguments' digest.
pub(crate) async fn link(
    registry: &ToolRegistry,
    durability: &Durability,
    run: &str,
    decided: &[(PendingCall, Decision)],
    resume: &Resume,
    record: &RecordedRun,
) -> Result<Option<Arc<RunLink>>, ContinuationError> {
    let Some(store) = durability.store.as_ref() else {
        return Ok(None);
    };
    let store_error = |error: StoreError| ContinuationError::Store(error.to_string());
    let link = RunLink::new(Arc::clone(store), run, HashSet::new())
        .continuing()
        .await
        .map_err(store_error)?;
    let approver = resume.approver.as_deref().unwrap_or(UNNAMED_APPROVER);
    for (pending, decision) in decided {
        link.record_decision(pending, decision.approves(), approver, resume.approval_ttl)
            .await
            .map_err(store_error)?;
    }
    if !decided.is_empty() {
        link.checkpoint(record.clone())
            .await
            .map_err(ContinuationError::Store)?;
    }
    Ok(Some(Arc::new(link.with_intents(install_intents(registry)))))
}

/// The approver recorded when the host names none.
pub const UNNAMED_APPROVER: &str = "unnamed";

/// Finishes a run that ran to its end; a run whose store failed stays unfinished (resumable)
/// and fails with what went wrong.
pub(crate) async fn finish(link: Option<&Arc<RunLink>>, outcome: RunOutcome) -> RunOutcome {
    let Some(link) = link else {
        return outcome;
    };
    if let Some(failure) = link.failure() {
        let message = format!(
            "code run failed: {failure}; run \"{}\" stays unfinished in the store: resume it by id",
            link.run
        );
        let error =
            ToolError::with_info(message, ErrorInfo::new("DurableStoreError", "STORE_FAILED"));
        return RunOutcome::Completed(ToolExecutionResult::failure(error));
    }
    if let RunOutcome::Completed(result) = &outcome {
        link.finish(result).await;
    }
    outcome
}

/// Resumes run `run` from the durability's store after the process running it died (or on
/// another machine sharing the store): the program runs again by replay, every journaled call
/// answered from the journal (nothing re-run), and continues live. A side-effecting call that
/// was in flight (its intent has no journaled result) is handled by `resume.outcome_unknown`
/// ([`OutcomeUnknownPolicy`]).
///
/// Refused before anything runs when the durability has no store, the store has no such run,
/// the run is finished, or it is in another language than the registry's runtime.
pub async fn resume_run(
    registry: &ToolRegistry,
    run: &str,
    resume: Resume,
    durability: &Durability,
) -> Result<RunOutcome, ContinuationError> {
    let store = durability
        .store
        .as_ref()
        .ok_or_else(|| ContinuationError::Store("the durability has no durable store".into()))?;
    let store_error = |error: StoreError| ContinuationError::Store(error.to_string());
    let info = store.run(run).await.map_err(store_error)?;
    let info = info.ok_or_else(|| ContinuationError::NoRun {
        run: run.to_owned(),
    })?;
    if info.finished.is_some() {
        return Err(ContinuationError::RunFinished {
            run: run.to_owned(),
        });
    }
    let meta: RunMeta = serde_json::from_value(info.meta)
        .map_err(|e| ContinuationError::Body(format!("run {run}'s metadata: {e}")))?;
    if let Some(runtime) = code_runtime(registry)
        && runtime.language() != meta.language
    {
        return Err(ContinuationError::Language {
            found: meta.language,
            expected: runtime.language().to_owned(),
        });
    }
    let mut journal = Journal::default();
    for record in store.entries(run).await.map_err(store_error)? {
        let entry: JournalEntry = serde_json::from_value(record.entry).map_err(|e| {
            ContinuationError::Body(format!("run {run}'s journal entry {}: {e}", record.index))
        })?;
        journal.record(record.index as usize, entry);
    }
    let record = match store.checkpoint(run).await.map_err(store_error)? {
        Some(checkpoint) => Some(
            serde_json::from_value::<RecordedRun>(checkpoint.state["record"].clone())
                .map_err(|e| ContinuationError::Body(format!("run {run}'s checkpoint: {e}")))?,
        ),
        None => None,
    };
    let link = RunLink::new(Arc::clone(store), run, HashSet::new())
        .continuing()
        .await
        .map_err(store_error)?;
    let mut retry = HashSet::new();
    for unresolved in store.unresolved_intents(run).await.map_err(store_error)? {
        let intent = unresolved.intent;
        let Some(number) = link.number(&intent.call) else {
            continue;
        };
        if journal.get(number).is_some() {
            // Journaled, the process died before completing the intent: the outcome is known.
            let done = json!({ "journaled": number });
            store
                .complete_intent(run, &intent.call, &done)
                .await
                .map_err(store_error)?;
            continue;
        }
        if runs_again(registry, run, &intent, &resume).await {
            retry.insert(intent.call);
            continue;
        }
        let what = "was in flight when the run's process stopped; it may or may not have taken effect and was not run again";
        let entry = JournalEntry {
            tool: intent.tool.clone(),
            args: intent.args_digest.as_str().to_owned(),
            settled: Settled::Err(outcome_unknown_message(&intent.tool, &intent.call, what)),
            contexts: Vec::new(),
            concludes_turn: false,
        };
        let value =
            serde_json::to_value(&entry).map_err(|e| ContinuationError::Body(e.to_string()))?;
        store
            .append_entry(run, number as u64, &value)
            .await
            .map_err(store_error)?;
        let done = json!({ "outcomeUnknown": true });
        store
            .complete_intent(run, &intent.call, &done)
            .await
            .map_err(store_error)?;
        journal.record(number, entry);
    }
    let link = Arc::new(RunLink { retry, ..link }.with_intents(install_intents(registry)));
    let input = super::resumed_input(
        run.to_owned(),
        &meta.program,
        &meta.description,
        meta.root,
        &resume,
    );
    let start = DurableStart {
        suspend: resume.suspend,
        journal,
        record,
        link: Some(Arc::clone(&link)),
        ..DurableStart::default()
    };
    let outcome = super::run_durable(registry, input, start, durability).await;
    Ok(finish(Some(&link), outcome).await)
}

/// Whether the call of `intent`, in flight when run `run`'s process stopped, runs again: by
/// `resume`'s [`OutcomeUnknownPolicy`], asking the registry's approval service under
/// [`OutcomeUnknownPolicy::Ask`].
async fn runs_again(registry: &ToolRegistry, run: &str, intent: &Intent, resume: &Resume) -> bool {
    match resume.outcome_unknown {
        OutcomeUnknownPolicy::Retry => true,
        OutcomeUnknownPolicy::Fail => false,
        OutcomeUnknownPolicy::Ask => {
            let Some(service) = registry.approval() else {
                return false;
            };
            let (tool, call) = (&intent.tool, &intent.call);
            let reason = format!(
                "the outcome of tools.{tool} ({call}) is unknown: it was in flight when run \"{run}\"'s process stopped and may or may not have taken effect; allowing it runs it again with the same idempotency key ({})",
                intent.idempotency_key
            );
            let request = ApprovalRequest {
                agent: resume.agent,
                tool_name: tool.clone(),
                call_id: call.clone(),
                reason: Some(reason),
                arguments: None,
                view: ToolCallView::generic(tool),
                annotations: registry
                    .get(tool, resume.agent)
                    .map(|def| def.annotations())
                    .unwrap_or_default(),
                widest_scope: ApprovalScope::Once,
                cancel: resume.cancel.clone(),
            };
            service.request(request).await.scope().is_some()
        }
    }
}
