//! The caller's side of a run: hands the run to a sandbox thread, enforces the wall clock and
//! cancellation from outside the engine, and assembles the result through the ledger.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::runtime::{CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult};

use super::CANCELLED_MESSAGE;
use super::config::QuickJsConfig;
use super::drive::WallClock;
use super::worker::{Job, Pool};
use crate::sandbox::ledger::Ledger;
use crate::sandbox::shared::{Outcome, Shared, Stop};

/// How long a stopped sandbox thread may take to notice before its run is abandoned (a native
/// operation the interrupt handler does not reach, e.g. a huge `Array.prototype.join`). The
/// thread ends on its own; its memory is bounded by the memory limit.
///
/// An interruptible program notices within microseconds. 150 ms keeps an abandoned run's end
/// within its limit + 250 ms (the reliability bar, checked by `tests/hostile.rs`), with 100 ms
/// left for the host's own scheduling on a busy machine (at 200 ms, a quiet 2-core machine
/// already measured +207 ms; at 250 ms the grace alone used the whole margin).
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(150);

/// Stops the program when the run future is dropped before it finished (harmless after).
struct StopOnDrop(Arc<Shared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop_and_wake(Stop::Cancel);
    }
}

fn stop_error(config: &QuickJsConfig, reason: Stop) -> CodeRunError {
    let (kind, message) = match reason {
        Stop::Cancel => (CodeErrorKind::Abort, CANCELLED_MESSAGE.to_owned()),
        Stop::Wall => (
            CodeErrorKind::Timeout,
            format!(
                "wall-clock ceiling reached ({}ms)",
                config.wall_clock.as_millis()
            ),
        ),
        Stop::Cpu => (
            CodeErrorKind::Timeout,
            format!(
                "compute budget exhausted ({}ms of CPU time)",
                config.cpu_budget.as_millis()
            ),
        ),
        Stop::Output => (
            CodeErrorKind::OutputLimit,
            format!("outer output exceeded {} bytes", config.max_output_bytes),
        ),
    };
    CodeRunError { kind, message }
}

fn finish(config: &QuickJsConfig, shared: &Shared, outcome: Outcome) -> CodeRunResult {
    let ledger = std::mem::replace(&mut *shared.ledger(), Ledger::new(config.max_output_bytes));
    match outcome {
        Outcome::Value(value) => ledger.finish(value, None),
        Outcome::Error(error) => ledger.finish(None, Some(error)),
        Outcome::Stopped => {
            let reason = shared.stopped().unwrap_or(Stop::Cancel);
            ledger.finish(None, Some(stop_error(config, reason)))
        }
    }
}

/// Runs one program (the bindings are already validated).
pub(crate) async fn run(
    pool: Pool,
    config: Arc<QuickJsConfig>,
    request: CodeRunRequest,
) -> CodeRunResult {
    let shared = Arc::new(Shared::new(config.max_output_bytes));
    if request.cancel.is_cancelled() {
        shared.stop(Stop::Cancel);
        return finish(&config, &shared, Outcome::Stopped);
    }
    let wall = WallClock {
        start: Instant::now(),
        budget: config.wall_clock,
        clock: request.clock,
    };
    let (done, mut outcome) = oneshot::channel();
    let job = Job {
        program: request.program,
        bindings: request.bindings,
        shared: shared.clone(),
        wall: wall.clone(),
        tokio: tokio::runtime::Handle::try_current().ok(),
        host_work: request.host_work,
        record: request.record,
        done,
    };
    let guard = StopOnDrop(shared.clone());
    if let Err(error) = pool.submit(job) {
        let error = CodeRunError {
            kind: CodeErrorKind::WorkerExit,
            message: format!("could not start a sandbox thread: {error}"),
        };
        drop(guard);
        return finish(&config, &shared, Outcome::Error(error));
    }
    let wall = wall.elapsed();
    tokio::pin!(wall);
    let cancel = request.cancel;
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    let outcome = loop {
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
            () = &mut wall, if grace.is_none() => {
                shared.stop_and_wake(Stop::Wall);
                grace = Some(Box::pin(tokio::time::sleep(STOP_GRACE)));
            }
            () = async { grace.as_mut().expect("checked").await }, if grace.is_some() => {
                break Outcome::Stopped;
            }
        }
    };
    // After a normal end the flag is moot; after an abandoned one it is already set.
    drop(guard);
    finish(&config, &shared, outcome)
}
