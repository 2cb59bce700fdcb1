//! The `run_code` executions in progress, by execution token: what a sub-call's approval wait
//! (the run's clock) and approval gate (the run's durable side) find through its `parent`, and
//! the durable starts waiting for their execution.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::exec::{ExecutionToken, ToolExecution};

use super::clock::RunClock;
use super::durable_run::{DurableRun, RunGrants};
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
