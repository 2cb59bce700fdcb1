//! The durable side of one `run_code` execution: which sub-calls a replay answers from the
//! journal, which diverge, the journal of the calls that complete ([`journal`]), and the
//! suspension a sub-call's `ask` starts (its pending calls and their decision: `pending.rs`);
//! with the feature `store`, the run's link to the durable store ([`link`]). The registry's
//! state holds it; `durable/` drives durable runs and re-exports the public items.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dsh_tools::ContextMessage;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{ToolExecution, ToolExecutionResult, ToolRunContext};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub(crate) mod journal;
#[cfg(feature = "store")]
pub(crate) mod link;
mod pending;

pub use pending::{Decision, PendingCall};

use crate::events::{CodeDispatchEvent, CodeEventSink, emit};
use crate::record::{RecordedRun, RunRecord};
use crate::runtime::RunSnapshot;
use dsh_tools_core::approval::ApprovalOutcome;
use dsh_tools_core::hooks::Ask;
use journal::{Journal, JournalEntry, Settled, arguments_digest, digest_matches};

/// How a durable `run_code` execution starts: fresh, or resuming a continuation.
#[derive(Debug, Default)]
pub(crate) struct DurableStart {
    /// Whether an `ask` suspends the run (otherwise it goes to the approval service).
    pub(crate) suspend: bool,
    /// The journal to replay (empty for a fresh run; a run recovered from a store may have
    /// gaps: calls that completed out of order).
    pub(crate) journal: Journal,
    /// The recorded sources to replay (`None`: a fresh record).
    pub(crate) record: Option<RecordedRun>,
    /// The calls the continuation left pending, with the decision made about each.
    pub(crate) decided: Vec<(PendingCall, Decision)>,
    /// The tools approved for the rest of the run so far.
    pub(crate) grants: Vec<String>,
    /// The paused program to continue (a runtime that snapshots), instead of a replay.
    pub(crate) snapshot: Option<RunSnapshot>,
    /// Where the bridge leaves the suspension, if the run suspends.
    pub(crate) suspension: Arc<Mutex<Option<Suspension>>>,
    /// The store the run is journaled in as it goes.
    #[cfg(feature = "store")]
    pub(crate) link: Option<Arc<link::RunLink>>,
}

/// What a suspended run leaves behind (sealed into a continuation by the caller).
#[derive(Debug, Clone)]
pub(crate) struct Suspension {
    pub(crate) journal: Vec<JournalEntry>,
    pub(crate) record: RecordedRun,
    pub(crate) pending: Vec<PendingCall>,
    pub(crate) grants: Vec<String>,
    /// The paused program (a runtime that snapshots); `None` for a replaying runtime.
    pub(crate) snapshot: Option<RunSnapshot>,
}

impl Suspension {
    /// Attaches the paused program and empties the journal entries it no longer needs: the
    /// calls it already received are never asked for again (their places stay, so numbers
    /// keep their meaning).
    pub(crate) fn paused(&mut self, snapshot: RunSnapshot) {
        for (index, entry) in self.journal.iter_mut().enumerate() {
            if !snapshot.awaiting.contains(&(index + 1)) {
                *entry = JournalEntry {
                    tool: String::new(),
                    args: String::new(),
                    settled: Settled::Ok(Value::Null),
                    contexts: Vec::new(),
                    concludes_turn: false,
                };
            }
        }
        self.snapshot = Some(snapshot);
    }
}

/// What the binding does with sub-call `n`.
pub(crate) enum Check {
    /// Answer it from the journal (no dispatch).
    Replay(JournalEntry),
    /// Dispatch it.
    Live,
    /// The replay diverged here: stop, dispatch nothing (the message says how).
    Diverged(String),
}

/// How a durable execution ended.
pub(crate) enum Ending {
    /// The run suspended.
    Suspended(Suspension),
    /// The replay diverged (or the suspension could not be recorded): the run fails.
    Failed(String),
    /// The run ran to its end.
    Completed,
}

/// Durable runs alive right now (see [`super::live_durable_runs`]).
/// The tools approved for the rest of one run (a durable run's continuation carries them).
pub(crate) type RunGrants = Arc<Mutex<BTreeSet<String>>>;

pub(crate) static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The durable state of one `run_code` execution.
pub(crate) struct DurableRun {
    run_id: Arc<str>,
    suspend: bool,
    record: RunRecord,
    replay: Journal,
    decided: Vec<(PendingCall, Decision)>,
    /// The numbers of the calls a resumed snapshot awaits: the runtime makes them again first.
    renumbered: Mutex<VecDeque<usize>>,
    /// Sub-calls the run made before this resumption (a resumed snapshot).
    calls_before: usize,
    /// The bridge's "run is over" token.
    over: CancellationToken,
    /// Stops the program (the runtime's cancellation).
    stop: CancellationToken,
    ctx: ToolRunContext,
    sink: Option<Arc<dyn CodeEventSink>>,
    /// The run's approvals (shared with its entry among the runs in progress).
    grants: RunGrants,
    state: Mutex<State>,
    #[cfg(feature = "store")]
    link: Option<Arc<link::RunLink>>,
}

#[derive(Default)]
struct State {
    journal: Journal,
    /// Sub-calls numbered so far.
    made: usize,
    /// The run is over: no more suspension.
    ended: bool,
    suspended: Vec<(usize, PendingCall)>,
    divergence: Option<String>,
    /// The cancellation of each live sub-call (a suspended one is aborted, not denied).
    cancels: HashMap<usize, CancellationToken>,
}

impl Drop for DurableRun {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl DurableRun {
    pub(crate) fn new(
        start: &DurableStart,
        ctx: &ToolRunContext,
        sink: Option<Arc<dyn CodeEventSink>>,
        over: CancellationToken,
        stop: CancellationToken,
        grants: RunGrants,
    ) -> Self {
        let record = match &start.record {
            Some(recorded) => RunRecord::replaying(recorded.clone()),
            None => RunRecord::new(),
        };
        let replay = start.journal.clone();
        let state = State {
            journal: replay.clone(),
            ..State::default()
        };
        LIVE.fetch_add(1, Ordering::SeqCst);
        Self {
            run_id: Arc::clone(&ctx.execution().call_id),
            suspend: start.suspend,
            record,
            replay,
            decided: start.decided.clone(),
            renumbered: Mutex::new(
                start
                    .snapshot
                    .iter()
                    .flat_map(|s| s.awaiting.iter().copied())
                    .collect(),
            ),
            calls_before: start.snapshot.as_ref().map_or(0, |s| s.calls),
            over,
            stop,
            ctx: ctx.clone(),
            sink,
            grants,
            state: Mutex::new(state),
            #[cfg(feature = "store")]
            link: start.link.clone(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run's record (what the runtime reads its sources through).
    pub(crate) fn record(&self) -> &RunRecord {
        &self.record
    }

    /// How many journaled calls the replay answers.
    pub(crate) fn replayed(&self) -> usize {
        self.replay.len()
    }

    /// Sub-calls made before this resumption: the next new call is numbered after them.
    pub(crate) fn calls_before(&self) -> usize {
        self.calls_before
    }

    /// The number of the next call when it is one a resumed snapshot awaits again (calls
    /// keep their numbers across a snapshot); `None` for a new call.
    pub(crate) fn renumbered(&self) -> Option<usize> {
        self.renumbered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }

    /// The decisions this resumption carries.
    pub(crate) fn decided(&self) -> &[(PendingCall, Decision)] {
        &self.decided
    }

    fn sub_call_id(&self, number: usize) -> String {
        format!("{}:code:{number}", self.run_id)
    }

    /// Sub-call `number` (numbered by the bridge, in submission order) is `tool(arguments)`.
    pub(crate) fn check(&self, number: usize, tool: &str, arguments: &Value) -> Check {
        let mut state = self.state();
        state.made = state.made.max(number);
        if state.divergence.is_some() {
            return Check::Diverged("run_code run diverged from its journal".to_owned());
        }
        let id = self.sub_call_id(number);
        let expected = match self.replay.get(number) {
            Some(entry) => Some((
                entry.tool.as_str(),
                entry.args.clone(),
                "the journal recorded",
            )),
            None => self
                .decided
                .iter()
                .find(|(pending, _)| pending.id == id)
                .map(|(pending, _)| {
                    let digest = arguments_digest(&pending.arguments);
                    (pending.tool.as_str(), digest, "the decision was made for")
                }),
        };
        let Some((expected_tool, expected_args, what)) = expected else {
            return Check::Live;
        };
        let message = if expected_tool != tool {
            format!(
                "call {id} diverged from its journal: the program called tools.{tool}, {what} tools.{expected_tool}; nothing was dispatched"
            )
        } else if !digest_matches(&expected_args, arguments) {
            format!(
                "call {id} diverged from its journal: tools.{tool} was called with other arguments than {what}; nothing was dispatched"
            )
        } else {
            return match self.replay.get(number) {
                Some(entry) => Check::Replay(entry.clone()),
                None => Check::Live,
            };
        };
        state.divergence = Some(message.clone());
        drop(state);
        self.stop.cancel();
        Check::Diverged(message)
    }

    /// The effects of a replayed call on the outer call (its deferred contexts) and its
    /// dispatch-log event.
    pub(crate) fn replay_effects(&self, number: usize, arguments: &Value, entry: &JournalEntry) {
        for context in &entry.contexts {
            self.ctx.defer_context(context.clone());
        }
        if entry.concludes_turn {
            self.ctx.conclude_turn();
        }
        if let Some(sink) = &self.sink {
            let outer = self.ctx.execution();
            let event = CodeDispatchEvent::Replayed {
                root_call_id: outer.root_call_id.to_string(),
                parent_call_id: outer.call_id.to_string(),
                sub_call_id: self.sub_call_id(number),
                name: entry.tool.clone(),
                arguments: arguments.clone(),
                is_error: matches!(entry.settled, Settled::Err(_)),
            };
            emit(&**sink, event);
        }
    }

    /// The cancellation of live sub-call `number`: a child of the run's.
    pub(crate) fn live_cancel(&self, number: usize, run: &CancellationToken) -> CancellationToken {
        let token = run.child_token();
        self.state().cancels.insert(number, token.clone());
        token
    }

    /// The store the run is journaled in as it goes.
    #[cfg(feature = "store")]
    pub(crate) fn link(&self) -> Option<&Arc<link::RunLink>> {
        self.link.as_ref()
    }

    /// Writes the journal entry of committed sub-call `number` to the run's store (nothing
    /// without one, or for a call not journaled): before its result reaches the program. An
    /// error is the message the program sees instead; the run stops.
    #[cfg(feature = "store")]
    pub(crate) async fn persist(&self, number: usize) -> Result<(), String> {
        let Some(link) = &self.link else {
            return Ok(());
        };
        let entry = self.state().journal.get(number).cloned();
        let Some(entry) = entry else {
            return Ok(());
        };
        let written = link.persist(number, &entry, self.record.snapshot()).await;
        if written.is_err() {
            self.stop.cancel();
        }
        written
    }

    /// Whether sub-call `number` is the one the run suspended on.
    pub(crate) fn is_suspended_call(&self, number: usize) -> bool {
        self.state().suspended.iter().any(|(n, _)| *n == number)
    }

    /// Journals a committed live sub-call (the suspended one excepted).
    pub(crate) fn committed(
        &self,
        number: usize,
        tool: &str,
        arguments: &Value,
        result: &ToolExecutionResult,
        contexts: Vec<ContextMessage>,
    ) {
        let mut state = self.state();
        state.cancels.remove(&number);
        if state.suspended.iter().any(|(n, _)| *n == number) {
            return;
        }
        let (settled, concludes_turn) = match result {
            ToolExecutionResult::Success(success) => {
                (Settled::Ok(success.value.clone()), success.concludes_turn)
            }
            ToolExecutionResult::Failure(failure) => {
                (Settled::Err(failure.error.message().to_owned()), false)
            }
        };
        let entry = JournalEntry {
            tool: tool.to_owned(),
            args: arguments_digest(arguments),
            settled,
            contexts,
            concludes_turn,
        };
        state.journal.record(number, entry);
    }

    /// The approval gate of this run's sub-calls: the decision a resumption carries, or the
    /// run's suspension. `None` passes the `ask` on to the approval service.
    pub(crate) fn gate(&self, ask: &Ask<'_>) -> Option<BoxFuture<'static, ApprovalOutcome>> {
        let call_id = &*ask.exec.call_id;
        if let Some((_, decision)) = self.decided.iter().find(|(p, _)| p.id == call_id) {
            let outcome = decision.outcome();
            return Some(Box::pin(std::future::ready(outcome)));
        }
        let number = call_id
            .strip_prefix(&*self.run_id)?
            .strip_prefix(":code:")?
            .parse::<usize>()
            .ok()?;
        // A decision recorded in the run's store for exactly these arguments (the call is
        // reached again after a crash): not asked again.
        #[cfg(feature = "store")]
        if let Some(link) = &self.link {
            let null = Value::Null;
            let arguments = ask.exec.arguments.as_deref().unwrap_or(&null);
            if let Some(approved) = link.decision(call_id, arguments) {
                let outcome = if approved {
                    ApprovalOutcome::AllowedOnce
                } else {
                    ApprovalOutcome::Rejected
                };
                return Some(Box::pin(std::future::ready(outcome)));
            }
        }
        if !self.suspend {
            return None;
        }
        let mut state = self.state();
        if state.ended {
            return Some(Box::pin(std::future::ready(ApprovalOutcome::Cancelled)));
        }
        let null = Value::Null;
        let arguments = ask.exec.arguments.as_deref().unwrap_or(&null);
        let pending = PendingCall {
            id: call_id.to_owned(),
            tool: ask.exec.name.to_string(),
            arguments: arguments.clone(),
            reason: ask.reason.map(str::to_owned),
            card: ask.view.clone(),
            widest_scope: ask.widest,
        };
        state.suspended.push((number, pending));
        let cancel = state.cancels.get(&number).cloned();
        drop(state);
        tracing::info!(call_id, "run_code run suspends: the call awaits a decision");
        self.stop.cancel();
        let over = self.over.clone();
        Some(Box::pin(async move {
            over.cancelled().await;
            // Not dispatched: the call is aborted (its decision comes with the resumption).
            if let Some(cancel) = cancel {
                cancel.cancel();
            }
            ApprovalOutcome::Cancelled
        }))
    }

    /// Marks the run over (no suspension starts after this); `true` if it had suspended.
    pub(crate) fn end_program(&self) -> bool {
        let mut state = self.state();
        state.ended = true;
        !state.suspended.is_empty()
    }

    /// How the execution ended, once every sub-call has committed.
    pub(crate) fn ending(&self) -> Ending {
        let state = self.state();
        if let Some(divergence) = &state.divergence {
            return Ending::Failed(divergence.clone());
        }
        let expected = self.replay.len() + self.decided.len();
        if state.made < expected {
            let message = format!(
                "the replay diverged from its journal: the program made {} calls, the journal recorded {} and {} awaited a decision; nothing was dispatched",
                state.made,
                self.replay.len(),
                self.decided.len()
            );
            return Ending::Failed(message);
        }
        if state.suspended.is_empty() {
            return Ending::Completed;
        }
        let journal = match state.journal.complete() {
            Ok(journal) => journal,
            Err(missing) => {
                return Ending::Failed(format!(
                    "the run could not suspend: sub-call {} did not complete",
                    self.sub_call_id(missing)
                ));
            }
        };
        // Every call before the first pending one completed (they were all started before it);
        // none after it was started.
        let before = state.suspended.iter().map(|(n, _)| *n).min().unwrap_or(1) - 1;
        if journal.len() < before {
            return Ending::Failed(format!(
                "the run could not suspend: sub-call {} did not complete",
                self.sub_call_id(journal.len() + 1)
            ));
        }
        let journal: Vec<JournalEntry> = journal.into_iter().take(before).collect();
        Ending::Suspended(Suspension {
            journal,
            record: self.record.snapshot(),
            pending: state.suspended.iter().map(|(_, p)| p.clone()).collect(),
            grants: self
                .grants
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .cloned()
                .collect(),
            snapshot: None,
        })
    }
}

impl CodeDispatchEvent {
    pub(crate) fn suspended(outer: &ToolExecution, suspension: &Suspension) -> Self {
        Self::Suspended {
            root_call_id: outer.root_call_id.to_string(),
            parent_call_id: outer.call_id.to_string(),
            pending: suspension.pending.iter().map(|p| p.id.clone()).collect(),
            journaled: suspension.journal.len(),
        }
    }

    pub(crate) fn resumed(outer: &ToolExecution, run: &DurableRun) -> Self {
        let ids = |approve: bool| {
            run.decided()
                .iter()
                .filter(|(_, decision)| decision.approves() == approve)
                .map(|(pending, _)| pending.id.clone())
                .collect()
        };
        Self::Resumed {
            root_call_id: outer.root_call_id.to_string(),
            parent_call_id: outer.call_id.to_string(),
            journaled: run.replayed(),
            approved: ids(true),
            denied: ids(false),
        }
    }
}
