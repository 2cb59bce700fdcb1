//! One durable run's link to the host's [`DurableStore`] (feature `store`): the write-ahead
//! intents of its side-effecting sub-calls, its journal appended as calls complete, its
//! checkpoints and the decisions made about it. Beginning, linking and resuming a run are
//! `durable/stored.rs`'s.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use dsh_tools::exec::{ToolExecution, ToolExecutionResult};
use dsh_tools::{ErrorInfo, ToolDefinition, ToolError};
use dsh_tools_core::Registration;
use dsh_tools_store::{Approval, ArgsDigest, DurableStore, Intent, StoreError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::PendingCall;
use super::journal::JournalEntry;
use crate::record::RecordedRun;

/// The stable code of a call whose outcome is unknown.
pub const OUTCOME_UNKNOWN: &str = "OUTCOME_UNKNOWN";

/// One durable run's link to the store.
#[derive(Debug)]
pub(crate) struct RunLink {
    pub(crate) store: Arc<dyn DurableStore>,
    pub(crate) run: String,
    /// Calls whose intent exists from an earlier process and which may run again.
    pub(crate) retry: HashSet<String>,
    /// The tools annotated read-only (no intent).
    pub(crate) read_only: OnceLock<HashSet<String>>,
    /// Sub-calls whose intent this process recorded (completed once journaled).
    pub(crate) intended: Mutex<HashSet<usize>>,
    /// Checkpoint steps.
    pub(crate) step: AtomicU64,
    /// The first store failure: the run stops and stays unfinished (resumable).
    pub(crate) failed: Mutex<Option<String>>,
    /// The calls of the run a person decided on (their decisions are in the store, bound to
    /// the arguments' digest): listed in every checkpoint.
    pub(crate) decided: Mutex<Vec<Decided>>,
    /// Those decisions, loaded from the store: a call reached again (after a crash) with the
    /// same arguments is not asked again.
    pub(crate) approvals: Mutex<HashMap<String, Approval>>,
    /// Keeps the write-ahead intent wrapper installed while the run is live.
    pub(crate) intents: Option<IntentsLease>,
}

/// The write-ahead intent wrapper of a registry (`durable/stored.rs` installs it): installed
/// while at least one run journaled in a store is live, and removed after the last one, so a
/// registry's later calls keep their unwrapped dispatch (the first-poll fast path).
#[derive(Debug, Default)]
pub(crate) struct IntentsWrapper {
    users: usize,
    registration: Option<Registration>,
}

/// One live run's hold on its registry's [`IntentsWrapper`].
#[derive(Debug)]
pub(crate) struct IntentsLease(Arc<Mutex<IntentsWrapper>>);

impl IntentsWrapper {
    /// Leases the wrapper of `shared`, installing it with `install` when no run holds it.
    pub(crate) fn lease(
        shared: &Arc<Mutex<Self>>,
        install: impl FnOnce() -> Registration,
    ) -> IntentsLease {
        let mut wrapper = shared.lock().unwrap_or_else(PoisonError::into_inner);
        if wrapper.registration.is_none() {
            wrapper.registration = Some(install());
        }
        wrapper.users += 1;
        IntentsLease(Arc::clone(shared))
    }
}

impl Drop for IntentsLease {
    fn drop(&mut self) {
        let mut wrapper = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        wrapper.users -= 1;
        if wrapper.users == 0
            && let Some(registration) = wrapper.registration.take()
        {
            registration.dispose();
        }
    }
}

/// A call a person decided on, and the digest of the arguments they saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Decided {
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
            intents: None,
        }
    }

    /// The same, holding `lease` on the intent wrapper while it lives.
    pub(crate) fn with_intents(mut self, lease: Option<IntentsLease>) -> Self {
        self.intents = lease;
        self
    }

    /// The same, continuing the checkpoints of the run so far (their step, the decisions).
    pub(crate) async fn continuing(self) -> Result<Self, StoreError> {
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

    pub(crate) fn decided_mut(&self) -> std::sync::MutexGuard<'_, Vec<Decided>> {
        self.decided.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn approvals_mut(&self) -> std::sync::MutexGuard<'_, HashMap<String, Approval>> {
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a person's decision on `pending` (bound to its arguments' digest, by
    /// `approver`, until `ttl` from now).
    pub(crate) async fn record_decision(
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

    pub(crate) fn side_effecting(&self, tool: &str) -> bool {
        !self
            .read_only
            .get()
            .is_some_and(|names| names.contains(tool))
    }

    pub(crate) fn fail(&self, message: String) -> String {
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

    pub(crate) fn number(&self, call: &str) -> Option<usize> {
        call.strip_prefix(&*self.run)?
            .strip_prefix(":code:")?
            .parse()
            .ok()
    }

    /// Records the write-ahead intent of `exec` before it is dispatched; an error refuses the
    /// dispatch.
    pub(crate) async fn intend(&self, exec: &ToolExecution) -> Result<(), ToolError> {
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
    pub(crate) async fn checkpoint(&self, record: RecordedRun) -> Result<(), String> {
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
    pub(crate) async fn finish(&self, result: &ToolExecutionResult) {
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

pub(crate) fn outcome_unknown_message(tool: &str, call: &str, what: &str) -> String {
    format!("{OUTCOME_UNKNOWN}: the outcome of tools.{tool} ({call}) is unknown: it {what}")
}
