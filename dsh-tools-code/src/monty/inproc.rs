//! In-process runs: the program runs on a pooled thread with a large stack; its tool calls'
//! futures (and the host's work) are polled on that thread, woken by unparking it; the caller's
//! side enforces the wall clock and cancellation and assembles the result through the ledger.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::oneshot;

use super::config::MontyConfig;
use super::pause::Paused;
use super::session::{self, Ending, Host, Limits, Namespace};
use super::threads::Threads;
use crate::HostWork;
use crate::runtime::{
    BindingNamespace, CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult, RunSnapshot,
    SnapshotSlot,
};
use crate::sandbox::calls::{CallRequest, Calls, ThreadWaker};
use crate::sandbox::shared::{Outcome, Shared, Stop};
use crate::sandbox::supervise::{StopLimits, StopOnDrop, WallClock, finish, supervise};

/// The message of the `abort` outcome.
pub const CANCELLED_MESSAGE: &str = crate::texts::CANCELLED;

/// The binding namespaces by name.
pub(crate) fn namespaces(bindings: &[BindingNamespace]) -> Vec<Namespace> {
    bindings
        .iter()
        .map(|n| Namespace {
            global: n.global.clone(),
            functions: n.functions.iter().map(|(name, _)| name.clone()).collect(),
            error_class: n.error_class.as_ref().map(|c| c.name.clone()),
        })
        .collect()
}

/// The interpreter limits of a run.
pub(crate) fn limits(config: &MontyConfig, memory: Option<usize>) -> Limits {
    Limits {
        cpu_budget: config.cpu_budget,
        max_recursion_depth: config.max_recursion_depth,
        max_value_depth: config.max_value_depth,
        max_source_bytes: config.max_source_bytes,
        max_tool_calls: config.max_tool_calls,
        memory_limit_bytes: memory.unwrap_or(config.max_allocation_bytes),
        memory_enforced: memory.is_some(),
    }
}

/// The limits a stopped run's error names.
pub(crate) fn stop_limits(config: &MontyConfig) -> StopLimits {
    StopLimits {
        wall_clock: config.wall_clock,
        cpu_budget: config.cpu_budget,
        cpu_measure: "interpreter time",
        max_output_bytes: config.max_output_bytes,
    }
}

impl From<Ending> for Outcome {
    fn from(ending: Ending) -> Self {
        match ending {
            Ending::Value(value) => Outcome::Value(value),
            Ending::Error(error) => Outcome::Error(error),
            Ending::Stopped | Ending::Paused(_) => Outcome::Stopped,
        }
    }
}

/// One run on a pooled thread.
struct Job {
    program: String,
    bindings: Vec<BindingNamespace>,
    shared: Arc<Shared>,
    limits: Limits,
    max_calls_in_flight: usize,
    tokio: Option<tokio::runtime::Handle>,
    host_work: Option<HostWork>,
    /// Where a paused run's state goes (a suspendable run).
    snapshot_to: Option<SnapshotSlot>,
    /// The paused run to continue.
    resume_from: Option<RunSnapshot>,
    done: oneshot::Sender<Outcome>,
}

/// Runs one program in process (the bindings are validated).
pub(crate) async fn run(
    threads: Threads,
    config: Arc<MontyConfig>,
    request: CodeRunRequest,
) -> CodeRunResult {
    let stops = stop_limits(&config);
    let shared = Arc::new(Shared::new(config.max_output_bytes));
    if request.cancel.is_cancelled() {
        shared.stop(Stop::Cancel);
        return finish(&stops, &shared, Outcome::Stopped);
    }
    let wall = WallClock {
        start: Instant::now(),
        budget: config.wall_clock,
        clock: request.clock,
    };
    let (done, outcome) = oneshot::channel();
    let job = Job {
        program: request.program,
        bindings: request.bindings,
        shared: shared.clone(),
        limits: limits(&config, None),
        max_calls_in_flight: config.max_calls_in_flight,
        tokio: tokio::runtime::Handle::try_current().ok(),
        host_work: request.host_work,
        snapshot_to: request.snapshot_to,
        resume_from: request.resume_from,
        done,
    };
    let guard = StopOnDrop(shared.clone());
    if let Err(error) = threads.submit(move || run_job(job)) {
        drop(guard);
        let error = CodeRunError {
            kind: CodeErrorKind::WorkerExit,
            message: format!("could not start a sandbox thread: {error}"),
        };
        return finish(&stops, &shared, Outcome::Error(error));
    }
    let outcome = supervise(&shared, &wall, request.cancel, outcome).await;
    drop(guard);
    finish(&stops, &shared, outcome)
}

/// The sandbox thread's side of a run.
fn run_job(job: Job) {
    let Job {
        program,
        bindings,
        shared,
        limits,
        max_calls_in_flight,
        tokio,
        host_work,
        snapshot_to,
        resume_from,
        done,
    } = job;
    shared.set_worker(std::thread::current());
    let _tokio = tokio.as_ref().map(tokio::runtime::Handle::enter);
    let waker = ThreadWaker::current();
    let namespaces = namespaces(&bindings);
    let mut host = ThreadHost {
        calls: Calls::new(
            bindings,
            max_calls_in_flight,
            waker.clone().into(),
            host_work,
        ),
        shared: &shared,
        waker,
        made: 0,
        max_calls: limits.max_tool_calls,
        call_limit_message: limits.call_limit_message(),
        ready: Vec::new(),
        pausable: snapshot_to.is_some(),
    };
    let ending = match resume_from.as_ref().map(Paused::from_snapshot) {
        None => session::run(&program, &namespaces, &limits, &mut host),
        Some(Err(message)) => Ending::Error(CodeRunError {
            kind: CodeErrorKind::Exception,
            message,
        }),
        Some(Ok(paused)) => {
            // The output captured before the pause comes first (and counts against the budget).
            for line in &paused.driver.logs {
                host.log(line.clone());
            }
            host.made = paused
                .driver
                .calls
                .saturating_sub(paused.driver.awaited.len());
            session::resume(&program, &paused, &namespaces, &limits, &mut host)
        }
    };
    let ending = match (ending, &snapshot_to) {
        (Ending::Paused(mut paused), Some(slot)) => {
            paused.driver.logs = shared.ledger().logs().to_vec();
            match paused.into_snapshot() {
                Ok(snapshot) => {
                    *slot
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(snapshot);
                    Ending::Stopped
                }
                Err(message) => Ending::Error(CodeRunError {
                    kind: CodeErrorKind::Exception,
                    message,
                }),
            }
        }
        (ending, _) => ending,
    };
    // Binding futures still in flight go before the reply (as in the QuickJS runtime).
    drop(host);
    let _ = done.send(ending.into());
}

/// The host of an in-process run: the binding futures, polled right here.
struct ThreadHost<'a> {
    calls: Calls,
    shared: &'a Shared,
    waker: Arc<ThreadWaker>,
    made: usize,
    max_calls: usize,
    call_limit_message: String,
    ready: Vec<(u64, Result<Value, String>)>,
    /// The run may be paused (its request has a snapshot slot).
    pausable: bool,
}

impl Host for ThreadHost<'_> {
    fn start(
        &mut self,
        id: u32,
        namespace: usize,
        function: usize,
        args: Value,
    ) -> Result<(), String> {
        if self.made >= self.max_calls {
            return Err(self.call_limit_message.clone());
        }
        self.made += 1;
        self.calls.submit(CallRequest {
            id: u64::from(id),
            namespace,
            function,
            args,
        });
        Ok(())
    }

    fn wait(&mut self) -> Option<Vec<(u32, Result<Value, String>)>> {
        loop {
            if self.shared.stopped().is_some() {
                return None;
            }
            self.calls.poll_ready(&mut self.ready);
            if !self.ready.is_empty() {
                return Some(
                    self.ready
                        .drain(..)
                        .filter_map(|(id, result)| Some((u32::try_from(id).ok()?, result)))
                        .collect(),
                );
            }
            self.waker.park();
        }
    }

    fn log(&mut self, line: String) -> bool {
        if self.shared.ledger().push(line) {
            true
        } else {
            self.shared.stop(Stop::Output);
            false
        }
    }

    fn stopped(&self) -> bool {
        self.shared.stopped().is_some()
    }

    fn pausable(&self) -> bool {
        self.pausable
    }

    /// A pausable run stopped by its cancellation pauses (a durable run's suspension); every
    /// other stop ends it.
    fn pausing(&self) -> bool {
        self.pausable && self.shared.stopped() == Some(Stop::Cancel)
    }
}
