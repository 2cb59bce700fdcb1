//! Progress reports of long tools (`docs/CONTRACTS.md`, "Progress").

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{ExecutionToken, ToolExecution};

/// One progress report: how much is done, of how much (when known), and what is happening.
///
/// ```
/// use dsh_tools::exec::Progress;
/// let p = Progress::new(3.0, Some(10.0), Some("indexing"));
/// assert_eq!(p.fraction(), Some(0.3));
/// assert!(!p.is_complete());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Units done so far (a count, bytes, a percentage: the tool's choice).
    pub done: f64,
    /// The units of the whole job, when known.
    pub total: Option<f64>,
    /// What the tool is doing now.
    pub message: Option<String>,
}

impl Progress {
    /// A report.
    pub fn new(done: f64, total: Option<f64>, message: Option<&str>) -> Self {
        Self {
            done,
            total,
            message: message.map(str::to_owned),
        }
    }

    /// `done / total`, when the total is known and positive.
    pub fn fraction(&self) -> Option<f64> {
        self.total.filter(|t| *t > 0.0).map(|t| self.done / t)
    }

    /// Whether the job is complete (`done >= total`).
    pub fn is_complete(&self) -> bool {
        self.total.is_some_and(|t| self.done >= t)
    }
}

type ObserveFn = dyn Fn(&ToolExecution, &Progress) + Send + Sync;

/// Where the progress of a call goes: a function of the execution and the report. A host puts
/// one on the calls it makes ([`ToolExecutionInput::progress`](super::ToolExecutionInput)); the
/// MCP server forwards to the client that asked; Code Mode hands a program's observer to the
/// tools the program calls.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use dsh_tools::exec::{ProgressObserver, ToolRunContext};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = Arc::clone(&seen);
/// let observer = ProgressObserver::new(move |exec, p| log.lock().unwrap().push((exec.call_id.to_string(), p.done)));
/// let ctx = ToolRunContext::detached("c1").with_progress(Some(observer));
/// ctx.progress(1.0, Some(2.0), None);
/// assert_eq!(*seen.lock().unwrap(), [("c1".to_string(), 1.0)]);
/// ```
#[derive(Clone)]
pub struct ProgressObserver(Arc<ObserveFn>);

impl ProgressObserver {
    /// An observer calling `f`.
    pub fn new(f: impl Fn(&ToolExecution, &Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Reports `progress` of `execution`.
    pub fn observe(&self, execution: &ToolExecution, progress: &Progress) {
        (self.0)(execution, progress);
    }

    /// This observer behind a rate limit, per execution: the first report, every report that
    /// completes the job, and otherwise at most one report per `interval` pass; a report whose
    /// `done` is not above the last one passed (progress must increase) is dropped.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// use dsh_tools::exec::{ProgressObserver, ToolRunContext};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// let observer = ProgressObserver::new(move |_, p| log.lock().unwrap().push(p.done))
    ///     .throttled(Duration::from_secs(3600));
    /// let ctx = ToolRunContext::detached("c1").with_progress(Some(observer));
    /// for done in 1..=100 {
    ///     ctx.progress(done as f64, Some(100.0), None);
    /// }
    /// assert_eq!(*seen.lock().unwrap(), [1.0, 100.0]);
    /// ```
    pub fn throttled(self, interval: Duration) -> Self {
        let last: Mutex<HashMap<ExecutionToken, (Instant, f64)>> = Mutex::default();
        Self::new(move |execution, progress| {
            let now = Instant::now();
            let pass = {
                let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
                let pass = match last.get(&execution.token) {
                    None => true,
                    Some((_, done)) if progress.done <= *done => false,
                    Some(_) if progress.is_complete() => true,
                    Some((at, _)) => now.duration_since(*at) >= interval,
                };
                if pass {
                    if progress.is_complete() {
                        last.remove(&execution.token);
                        // A completed job reports nothing more that could pass the check.
                        last.insert(execution.token, (now, f64::INFINITY));
                    } else {
                        last.insert(execution.token, (now, progress.done));
                    }
                }
                pass
            };
            if pass {
                self.observe(execution, progress);
            }
        })
    }
}

impl fmt::Debug for ProgressObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressObserver(..)")
    }
}
