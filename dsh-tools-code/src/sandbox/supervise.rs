//! The caller's side of a run on a sandbox thread, the same for every backend: the wall clock
//! and cancellation enforced from outside the engine, the grace a stopped thread has to notice,
//! and the result assembled through the ledger.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::clock::RunClock;
use crate::runtime::{CodeErrorKind, CodeRunError, CodeRunResult};

use super::ledger::Ledger;
use super::shared::{Outcome, Shared, Stop};

/// How long a stopped sandbox thread may take to notice before its run is abandoned (a native
/// operation the interrupt handler does not reach, e.g. a huge `Array.prototype.join`). The
/// thread ends on its own; its memory is bounded by the memory limit.
///
/// An interruptible program notices within microseconds. 150 ms keeps an abandoned run's end
/// within its limit + 250 ms (the reliability bar, checked by `tests/hostile.rs`), with 100 ms
/// left for the host's own scheduling on a busy machine (at 200 ms, a quiet 2-core machine
/// already measured +207 ms; at 250 ms the grace alone used the whole margin).
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(150);

/// The wall-clock ceiling of a run: `budget` from `start`, not counting the time the host kept
/// the run's clock paused (a sub-call waiting for a person's approval).
#[derive(Clone)]
pub(crate) struct WallClock {
    pub(crate) start: Instant,
    pub(crate) budget: Duration,
    pub(crate) clock: RunClock,
}

impl WallClock {
    pub(crate) fn expired(&self) -> bool {
        self.clock.expired(self.start, self.budget)
    }

    /// Completes when the ceiling is reached.
    pub(crate) async fn elapsed(&self) {
        self.clock.elapsed(self.start, self.budget).await;
    }
}

/// Stops the program when the run future is dropped before it finished (harmless after).
pub(crate) struct StopOnDrop(pub(crate) Arc<Shared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop_and_wake(Stop::Cancel);
    }
}

/// The limits a stopped run's error names.
pub(crate) struct StopLimits {
    pub(crate) wall_clock: Duration,
    pub(crate) cpu_budget: Duration,
    /// What the compute budget counts (`CPU time`, `interpreter time`).
    pub(crate) cpu_measure: &'static str,
    pub(crate) max_output_bytes: usize,
}

/// The error of a run stopped for `reason`.
pub(crate) fn stop_error(limits: &StopLimits, reason: Stop) -> CodeRunError {
    let (kind, message) = match reason {
        Stop::Cancel => (CodeErrorKind::Abort, crate::texts::CANCELLED.to_owned()),
        Stop::Wall => (
            CodeErrorKind::Timeout,
            format!(
                "wall-clock ceiling reached ({}ms)",
                limits.wall_clock.as_millis()
            ),
        ),
        Stop::Cpu => (
            CodeErrorKind::Timeout,
            format!(
                "compute budget exhausted ({}ms of {})",
                limits.cpu_budget.as_millis(),
                limits.cpu_measure
            ),
        ),
        Stop::Output => (
            CodeErrorKind::OutputLimit,
            format!("outer output exceeded {} bytes", limits.max_output_bytes),
        ),
    };
    CodeRunError { kind, message }
}

/// The result of a run, through the ledger.
pub(crate) fn finish(limits: &StopLimits, shared: &Shared, outcome: Outcome) -> CodeRunResult {
    let ledger = std::mem::replace(&mut *shared.ledger(), Ledger::new(limits.max_output_bytes));
    match outcome {
        Outcome::Value(value) => ledger.finish(value, None),
        Outcome::Error(error) => ledger.finish(None, Some(error)),
        Outcome::Stopped => {
            let reason = shared.stopped().unwrap_or(Stop::Cancel);
            ledger.finish(None, Some(stop_error(limits, reason)))
        }
    }
}

/// Waits for the sandbox thread's `outcome`, stopping the program when `cancel` fires or the
/// `wall` clock runs out; a stopped thread that does not answer within [`STOP_GRACE`] is
/// abandoned.
pub(crate) async fn supervise(
    shared: &Shared,
    wall: &WallClock,
    cancel: CancellationToken,
    mut outcome: oneshot::Receiver<Outcome>,
) -> Outcome {
    let elapsed = wall.elapsed();
    tokio::pin!(elapsed);
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        tokio::select! {
            biased;
            outcome = &mut outcome => break outcome.unwrap_or_else(|_| Outcome::Error(CodeRunError {
                kind: CodeErrorKind::WorkerExit,
                message: "the sandbox thread ended without an outcome".to_owned(),
            })),
            () = cancel.cancelled(), if grace.is_none() => {
                shared.stop_and_wake(Stop::Cancel);
                grace = Some(Box::pin(tokio::time::sleep(STOP_GRACE)));
            }
            () = &mut elapsed, if grace.is_none() => {
                shared.stop_and_wake(Stop::Wall);
                grace = Some(Box::pin(tokio::time::sleep(STOP_GRACE)));
            }
            () = async { grace.as_mut().expect("checked").await }, if grace.is_some() => {
                break Outcome::Stopped;
            }
        }
    }
}
