//! Durable runs journaled as they go in the host's [`DurableStore`] (feature `store`): the run
//! begins in the store, each side-effecting sub-call records its write-ahead intent before it
//! is dispatched, each completed sub-call is appended to the run's journal before its result
//! reaches the program, and a run whose process died is resumed by id ([`resume_run`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use dsh_tools::exec::{ToolExecution, ToolExecutionResult};
use dsh_tools::{ErrorInfo, ToolDefinition, ToolError};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::hooks::{DispatchExecution, ExecuteNext, ExecuteWrapper};
use dsh_tools_store::{Approval, ArgsDigest, DurableStore, Intent, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::journal::{Journal, JournalEntry, Settled};
use super::{
    ContinuationError, Decision, Durability, DurableStart, PendingCall, Resume, RunOutcome,
};
use crate::record::RecordedRun;
use crate::state::{CodeModeState, code_runtime};

/// The stable code of a call whose outcome is unknown.
pub const OUTCOME_UNKNOWN: &str = "OUTCOME_UNKNOWN";

/// What a run resumed by id does with a side-effecting call that was in flight when its
/// process died (a write-ahead intent without a journaled result): it may or may not have taken
/// effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutcomeUnknownPolicy {
    /// The program sees the call fail with `OUTCOME_UNKNOWN` (the default: nothing runs twice
    /// unless someone says so). The decision is journaled: a later resumption keeps it.
    #[default]
    Fail,
    /// The call runs again, with the same idempotency key: for tools that use it (or hosts
    /// whose person, asked, said so — the CLI asks).
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

/// One durable run's link to the store.
#[derive(Debug)]
pub(crate) struct RunLink {
    store: Arc<dyn DurableStore>,
    run: String,
    /// Calls whose intent exists from an earlier process and which may run again.
    retry: HashSet<String>,
    /// The tools annotated read-only (no intent).
    read_only: OnceLock<HashSet<String>>,
    /// Sub-calls whose intent this process recorded (completed once journaled).
    intended: Mutex<HashSet<usize>>,
    /// Checkpoint steps.
    step: AtomicU64,
    /// The first store failure: the run stops and stays unfinished (resumable).
    failed: Mutex<Option<String>>,
    /// The calls of the run a person decided on (their decisions are in the store, bound to
    /// the arguments' digest): listed in every checkpoint.
    decided: Mutex<Vec<Decided>>,
    /// Those decisions, loaded from the store: a call reached again (after a crash) with the
    /// same arguments is not asked again.
    approvals: Mutex<HashMap<String, Approval>>,
}

/// A call a person decided on, and the digest of the arguments they saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Decided {
    call: String,
    args: ArgsDigest,
}

impl RunLink {
    pub(crate) fn new(store: Arc<dyn DurableStore>, run: &str, retry: HashSet<String>) -> Self {
        Self {
            store,
            run: run.to_owned(),
            retry,
            read_only: OnceLock::new(),
            intended: Mutex::default(),
            step: AtomicU64::new(0),
            failed: Mutex::default(),
            decided: Mutex::default(),
            approvals: Mutex::default(),
        }
    }

    /// The same, continuing the checkpoints of the run so far (their step, the decisions).
    async fn continuing(self) -> Result<Self, StoreError> {
        if let Some(checkpoint) = self.store.checkpoint(&self.run).await? {
            self.step.store(checkpoint.step, Ordering::SeqCst);
            let decided: Vec<Decided> =
                serde_json::from_value(checkpoint.state["decided"].clone()).unwrap_or_default();
            for decided in decided {
                // An expired decision, or one for other arguments, is asked again.
                if let Ok(Some(approval)) = self.store.approval(&decided.call, &decided.args).await
                {
                    self.approvals_mut().insert(decided.call.clone(), approval);
                }
                self.decided_mut().push(decided);
            }
        }
        Ok(self)
    }

    fn decided_mut(&self) -> std::sync::MutexGuard<'_, Vec<Decided>> {
        self.decided.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn approvals_mut(&self) -> std::sync::MutexGuard<'_, HashMap<String, Approval>> {
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a person's decision on `pending` (bound to its arguments' digest, by
    /// `approver`, until `ttl` from now).
    async fn record_decision(
        &self,
        pending: &PendingCall,
        approved: bool,
        approver: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let now = SystemTime::now();
        let approval = Approval {
            args_digest: ArgsDigest::of(&pending.arguments),
            approver: approver.to_owned(),
            approved,
            reason: None,
            decided_at: now,
            expires_at: now + ttl,
        };
        self.store.record_approval(&pending.id, &approval).await?;
        self.decided_mut().push(Decided {
            call: pending.id.clone(),
            args: approval.args_digest.clone(),
        });
        self.approvals_mut().insert(pending.id.clone(), approval);
        Ok(())
    }

    /// The recorded decision on call `call` when it was made for exactly `arguments` and has
    /// not expired: `Some(approved)`; otherwise the call is asked again.
    pub(crate) fn decision(&self, call: &str, arguments: &Value) -> Option<bool> {
        let approvals = self.approvals_mut();
        let approval = approvals.get(call)?;
        let current = approval.args_digest == ArgsDigest::of(arguments)
            && SystemTime::now() < approval.expires_at;
        current.then_some(approval.approved)
    }

    /// Learns which of the run's tools are read-only.
    pub(crate) fn know_tools(&self, tools: &[ToolDefinition]) {
        let read_only = tools
            .iter()
            .filter(|def| def.annotations().read_only_hint == Some(true))
            .map(|def| def.name().to_owned())
            .collect();
        let _ = self.read_only.set(read_only);
    }

    fn side_effecting(&self, tool: &str) -> bool {
        !self
            .read_only
            .get()
            .is_some_and(|names| names.contains(tool))
    }

    fn fail(&self, message: String) -> String {
        let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        failed.get_or_insert(message).clone()
    }

    /// The first store failure of the run, if any.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn number(&self, call: &str) -> Option<usize> {
        call.strip_prefix(&*self.run)?
            .strip_prefix(":code:")?
            .parse()
            .ok()
    }

    /// Records the write-ahead intent of `exec` before it is dispatched; an error refuses the
    /// dispatch.
    async fn intend(&self, exec: &ToolExecution) -> Result<(), ToolError> {
        let call = exec.call_id.to_string();
        let null = Value::Null;
        let intent = Intent {
            call: call.clone(),
            tool: exec.name.to_string(),
            args_digest: ArgsDigest::of(exec.arguments.as_deref().unwrap_or(&null)),
            idempotency_key: call.clone(),
        };
        let number = self.number(&call);
        match self.store.record_intent(&self.run, &intent).await {
            Ok(recorded) if recorded || self.retry.contains(&call) => {
                if let Some(number) = number {
                    self.intended
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(number);
                }
                Ok(())
            }
            Ok(_) => Err(outcome_unknown(
                &intent.tool,
                &call,
                "was already dispatched by another resumption of this run; it was not run again",
            )),
            Err(error) => {
                let message = self.fail(format!(
                    "tools.{} ({call}) was not dispatched: its write-ahead intent could not be recorded: {error}",
                    intent.tool
                ));
                Err(ToolError::with_info(
                    message,
                    ErrorInfo::new("DurableStoreError", error.code()),
                ))
            }
        }
    }

    /// Appends the journal entry of sub-call `number` (and the run's recorded sources so far),
    /// then completes its intent. An error is the message the program sees.
    pub(crate) async fn persist(
        &self,
        number: usize,
        entry: &JournalEntry,
        record: RecordedRun,
    ) -> Result<(), String> {
        let written = async {
            self.checkpoint(record).await?;
            let store = |error: StoreError| error.to_string();
            let entry = serde_json::to_value(entry).map_err(|e| e.to_string())?;
            self.store
                .append_entry(&self.run, number as u64, &entry)
                .await
                .map_err(store)?;
            let intended = self
                .intended
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&number);
            if intended {
                let call = format!("{}:code:{number}", self.run);
                let done = json!({ "journaled": number });
                self.store
                    .complete_intent(&self.run, &call, &done)
                    .await
                    .map_err(store)?;
            }
            Ok::<(), String>(())
        };
        written.await.map_err(|error| {
            self.fail(format!(
                "the run's journal could not be written (sub-call {}:code:{number}): {error}",
                self.run
            ))
        })
    }

    /// Saves the run's checkpoint: its recorded sources and the calls decided on.
    async fn checkpoint(&self, record: RecordedRun) -> Result<(), String> {
        let step = self.step.fetch_add(1, Ordering::SeqCst) + 1;
        let record = serde_json::to_value(record).map_err(|e| e.to_string())?;
        let decided = self.decided_mut().clone();
        let state = json!({ "record": record, "decided": decided });
        self.store
            .save_checkpoint(&self.run, step, &state)
            .await
            .map_err(|error| error.to_string())?;
        Ok(())
    }

    /// Marks the run finished (it ran to its end without a store failure).
    async fn finish(&self, result: &ToolExecutionResult) {
        let outcome = json!({ "isError": result.is_error() });
        if let Err(error) = self.store.finish_run(&self.run, &outcome).await {
            tracing::warn!(run = %self.run, %error, "the finished run could not be recorded");
        }
    }
}

/// The `OUTCOME_UNKNOWN` failure of `tools.<tool>` (`call`), `what` having happened.
fn outcome_unknown(tool: &str, call: &str, what: &str) -> ToolError {
    ToolError::with_info(
        outcome_unknown_message(tool, call, what),
        ErrorInfo::new("OutcomeUnknownError", OUTCOME_UNKNOWN),
    )
}

fn outcome_unknown_message(tool: &str, call: &str, what: &str) -> String {
    format!("{OUTCOME_UNKNOWN}: the outcome of tools.{tool} ({call}) is unknown: it {what}")
}

/// Installs, once per registry, the execute wrapper that records the write-ahead intent of a
/// side-effecting sub-call of a run journaled in a store.
pub(crate) fn install_intents(registry: &ToolRegistry) {
    let Some(code) = CodeModeState::of(registry) else {
        return;
    };
    if code.intents.set(()).is_err() {
        return;
    }
    let runs = Arc::clone(&code.runs);
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
    registry
        .add_hook::<ExecuteWrapper>(Arc::new(wrapper))
        .keep();
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
    install_intents(registry);
    Ok(Arc::new(RunLink::new(
        Arc::clone(store),
        run,
        HashSet::new(),
    )))
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
    install_intents(registry);
    Ok(Some(Arc::new(link)))
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
        match resume.outcome_unknown {
            OutcomeUnknownPolicy::Retry => {
                retry.insert(intent.call);
            }
            OutcomeUnknownPolicy::Fail => {
                let what = "was in flight when the run's process stopped; it may or may not have taken effect and was not run again";
                let entry = JournalEntry {
                    tool: intent.tool.clone(),
                    args: intent.args_digest.as_str().to_owned(),
                    settled: Settled::Err(outcome_unknown_message(
                        &intent.tool,
                        &intent.call,
                        what,
                    )),
                    contexts: Vec::new(),
                    concludes_turn: false,
                };
                let value = serde_json::to_value(&entry)
                    .map_err(|e| ContinuationError::Body(e.to_string()))?;
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
        }
    }
    install_intents(registry);
    let link = Arc::new(RunLink { retry, ..link });
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
