//! The `run_code` executions in progress, by execution token: what a sub-call's approval wait
//! (the run's clock) and approval gate (the run's durable side) find through its `parent`, and
//! the durable starts waiting for their execution.

use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dsh_tools::exec::{ExecutionToken, ToolExecution};

use super::CodeModeState;
use super::clock::RunClock;
use super::durable::{DurableRun, DurableStart};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::approval::{ApprovalOutcome, ApprovalScope};
use dsh_tools_core::hooks::{ApprovalGate, ApprovalWait, Ask, RunApproval};

/// The executions in progress of one registry, by token.
pub(super) type Runs = Arc<Mutex<HashMap<ExecutionToken, LiveRun>>>;

/// Registers, for every sub-call of a run in `runs`: the approval-wait hook (a sub-call
/// waiting for a person pauses its run's clock), the approval gate (a tool approved for the
/// run is not asked about again; a durable run's sub-call is answered by the resumption's
/// decision, or suspends the run) and the run-approval listener (remembers those tools).
pub(super) fn install_hooks(registry: &ToolRegistry, runs: &Runs) {
    let clocks = Arc::clone(runs);
    registry
        .add_hook::<ApprovalWait>(Arc::new(move |exec: &ToolExecution| {
            let clock = live(&clocks, exec.parent?)?.clock.clone();
            Some(Box::new(clock.pause()) as Box<dyn Any + Send>)
        }))
        .keep();
    let gates = Arc::clone(runs);
    registry
        .add_hook::<ApprovalGate>(Arc::new(move |ask: &Ask<'_>| {
            let (grants, durable) = {
                let runs = gates.lock().unwrap_or_else(PoisonError::into_inner);
                let run = runs.get(&ask.exec.parent?)?;
                (Arc::clone(&run.grants), run.durable.clone())
            };
            let granted = ask.widest >= ApprovalScope::Run
                && grants
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&*ask.exec.name);
            if granted {
                return Some(Box::pin(std::future::ready(ApprovalOutcome::AllowedOnce)));
            }
            durable?.gate(ask)
        }))
        .keep();
    let approvals = Arc::clone(runs);
    registry
        .add_hook::<RunApproval>(Arc::new(move |exec: &ToolExecution| {
            let grants = exec
                .parent
                .and_then(|parent| live(&approvals, parent))
                .map(|run| run.grants);
            if let Some(grants) = grants {
                grants
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(exec.name.to_string());
            }
        }))
        .keep();
}

/// What a hook needs of the run `token`, if it is in progress.
fn live(runs: &Runs, token: ExecutionToken) -> Option<LiveRun> {
    runs.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&token)
        .cloned()
}

/// A `run_code` execution in progress.
#[derive(Clone)]
pub(super) struct LiveRun {
    /// Its clock (a sub-call's approval wait pauses it).
    pub(super) clock: RunClock,
    /// Its durable side, when it is suspendable or resumed.
    pub(super) durable: Option<Arc<DurableRun>>,
    /// The tools approved for the rest of the run.
    pub(super) grants: RunGrants,
}

/// The tools approved for the rest of one run (a durable run's continuation carries them).
pub(crate) type RunGrants = Arc<Mutex<BTreeSet<String>>>;

impl CodeModeState {
    pub(super) fn runs(&self) -> MutexGuard<'_, HashMap<ExecutionToken, LiveRun>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn durable_starts(&self) -> MutexGuard<'_, HashMap<String, DurableStart>> {
        self.durable_starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `start` for the `run_code` execution with call id `run` (its body takes it);
    /// `None` when one is already registered under that id (or the registry has no Code Mode).
    pub(crate) fn register_durable(
        registry: &ToolRegistry,
        run: &str,
        start: DurableStart,
    ) -> Option<RegisteredStart> {
        let code = CodeModeState::of(registry)?;
        let mut starts = code.durable_starts();
        if starts.contains_key(run) {
            return None;
        }
        starts.insert(run.to_owned(), start);
        drop(starts);
        Some(RegisteredStart {
            code,
            run: run.to_owned(),
        })
    }
}

/// A durable start waiting for its execution; whatever the execution did not take is removed
/// on drop (a `run_code` call refused before its body ran).
pub(crate) struct RegisteredStart {
    code: Arc<CodeModeState>,
    run: String,
}

impl Drop for RegisteredStart {
    fn drop(&mut self) {
        self.code.durable_starts().remove(&self.run);
    }
}

/// One `run_code` execution registered as in progress; unregistered on drop.
pub(crate) struct OpenRun {
    code: Option<Arc<CodeModeState>>,
    token: ExecutionToken,
    clock: RunClock,
}

impl OpenRun {
    pub(crate) fn clock(&self) -> &RunClock {
        &self.clock
    }
}

impl Drop for OpenRun {
    fn drop(&mut self) {
        if let Some(code) = &self.code {
            code.runs().remove(&self.token);
        }
    }
}

/// Registers the `run_code` execution `token` of `registry` as in progress, with a fresh run
/// clock (a clock nobody pauses when the registry has no Code Mode state), its durable side and
/// its approvals.
pub(crate) fn open_run(
    registry: &ToolRegistry,
    token: ExecutionToken,
    durable: Option<Arc<DurableRun>>,
    grants: RunGrants,
) -> OpenRun {
    let code = CodeModeState::of(registry);
    let clock = RunClock::new();
    if let Some(code) = &code {
        let run = LiveRun {
            clock: clock.clone(),
            durable,
            grants,
        };
        code.runs().insert(token, run);
    }
    OpenRun { code, token, clock }
}

/// Takes the durable start registered for the `run_code` call `call_id` of `registry`, if any.
pub(crate) fn durable_start(registry: &ToolRegistry, call_id: &str) -> Option<DurableStart> {
    CodeModeState::of(registry)?
        .durable_starts()
        .remove(call_id)
}
