//! The caller's side of a run: hands the run to a sandbox thread; the sandbox layer's
//! supervision enforces the wall clock and cancellation and assembles the result.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::oneshot;

use crate::runtime::{CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult};

use super::config::QuickJsConfig;
use super::worker::{Job, Pool};
use crate::sandbox::shared::{Outcome, Shared, Stop};
use crate::sandbox::supervise::{StopLimits, StopOnDrop, WallClock, finish, supervise};

/// The limits a stopped run's error names.
fn stop_limits(config: &QuickJsConfig) -> StopLimits {
    StopLimits {
        wall_clock: config.wall_clock,
        cpu_budget: config.cpu_budget,
        cpu_measure: "CPU time",
        max_output_bytes: config.max_output_bytes,
    }
}

/// Runs one program (the bindings are already validated).
pub(crate) async fn run(
    pool: Pool,
    config: Arc<QuickJsConfig>,
    request: CodeRunRequest,
) -> CodeRunResult {
    let limits = stop_limits(&config);
    let shared = Arc::new(Shared::new(config.max_output_bytes));
    if request.cancel.is_cancelled() {
        shared.stop(Stop::Cancel);
        return finish(&limits, &shared, Outcome::Stopped);
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
        return finish(&limits, &shared, Outcome::Error(error));
    }
    let outcome = supervise(&shared, &wall, request.cancel, outcome).await;
    // After a normal end the flag is moot; after an abandoned one it is already set.
    drop(guard);
    finish(&limits, &shared, outcome)
}
