//! The code-runtime seam (`docs/CONTRACTS.md`, "The runtime seam"): how a Code Mode program runs,
//! whatever the backend.

use std::fmt;
use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::clock::RunClock;
use super::host_work::HostWork;
use super::record::RunRecord;

/// One host function callable from a program: lossless JSON arguments in, the resolved value or
/// a failure message out (the program sees a rejection).
pub type BindingFn = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// An error class materialised in the program for failed binding calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorClass {
    /// The constructor's global name, e.g. `ToolCallError`.
    pub name: String,
    /// The own property carrying the member (binding) name, e.g. `toolName`.
    pub member_name_property: String,
}

/// A namespace of bindings: one global object (e.g. `tools`) with one async function per name.
#[derive(Clone)]
pub struct BindingNamespace {
    /// The global's name.
    pub global: String,
    /// The functions, in order. Names are own properties only (`__proto__` is an ordinary name).
    pub functions: Vec<(String, BindingFn)>,
    /// The error class failed calls reject with (a plain `Error` without one).
    pub error_class: Option<ErrorClass>,
}

impl fmt::Debug for BindingNamespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingNamespace")
            .field("global", &self.global)
            .field(
                "functions",
                &self.functions.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("error_class", &self.error_class)
            .finish()
    }
}

/// What to run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CodeRunRequest {
    /// The program: the body of an async function (top-level `await` and `return` work).
    pub program: String,
    /// The binding namespaces.
    pub bindings: Vec<BindingNamespace>,
    /// Cancels the run (outcome `abort`).
    pub cancel: CancellationToken,
    /// The run's wall clock: the host pauses it while a binding call waits for a person (an
    /// approval prompt), and the runtime's wall-clock budget does not run while it is paused.
    pub clock: RunClock,
    /// Work the host needs polled while the program runs (see [`HostWork`]); only set for
    /// runtimes that [poll it](CodeRuntime::polls_host_work).
    pub host_work: Option<HostWork>,
    /// The run's record of its non-deterministic sources and delivery order (see
    /// [`RunRecord`]); only set for runtimes that [replay](CodeRuntime::replays).
    pub record: Option<RunRecord>,
}

impl CodeRunRequest {
    /// A request to run `program` with `bindings`, a fresh cancellation token and a running
    /// clock.
    pub fn new(program: impl Into<String>, bindings: Vec<BindingNamespace>) -> Self {
        Self {
            program: program.into(),
            bindings,
            cancel: CancellationToken::new(),
            clock: RunClock::new(),
            host_work: None,
            record: None,
        }
    }

    /// The same request, cancelled by `cancel`.
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The same request, timed by `clock`.
    pub fn with_clock(mut self, clock: RunClock) -> Self {
        self.clock = clock;
        self
    }

    /// The same request, with host work for the runtime to poll while the program waits.
    pub fn with_host_work(mut self, work: HostWork) -> Self {
        self.host_work = Some(work);
        self
    }

    /// The same request, recorded (and replayed) through `record`.
    pub fn with_record(mut self, record: RunRecord) -> Self {
        self.record = Some(record);
        self
    }
}

/// How a program run failed. The first six are the reference's kinds; the rest name the extra
/// limits of our sandboxes precisely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodeErrorKind {
    /// The program threw, or did not parse / strip.
    Exception,
    /// A time budget ran out (CPU or wall clock).
    Timeout,
    /// The run was cancelled.
    Abort,
    /// The substrate died.
    WorkerExit,
    /// The completion value is not lossless JSON.
    InvalidOutput,
    /// Console output plus the result exceeded the output budget.
    OutputLimit,
    /// The memory limit was reached.
    MemoryLimit,
    /// The JS stack limit was reached.
    StackOverflow,
    /// The source is larger than the configured size, or nested deeper than the configured depth.
    SourceLimit,
    /// The program made more tool calls than allowed.
    CallLimit,
}

impl CodeErrorKind {
    /// The wire name (`exception`, `timeout`, `abort`, `worker-exit`, `invalid-output`,
    /// `output-limit`, `memory-limit`, `stack-overflow`, `source-limit`, `call-limit`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Exception => "exception",
            Self::Timeout => "timeout",
            Self::Abort => "abort",
            Self::WorkerExit => "worker-exit",
            Self::InvalidOutput => "invalid-output",
            Self::OutputLimit => "output-limit",
            Self::MemoryLimit => "memory-limit",
            Self::StackOverflow => "stack-overflow",
            Self::SourceLimit => "source-limit",
            Self::CallLimit => "call-limit",
        }
    }
}

impl fmt::Display for CodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed run's kind and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRunError {
    /// What failed.
    pub kind: CodeErrorKind,
    /// The message (for exceptions: the stack or message, with line:column in the program).
    pub message: String,
}

/// The outcome of a run: programs always resolve to one of these.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodeRunResult {
    /// The completion value (absent when the program returned nothing).
    pub value: Option<Value>,
    /// Captured console output, one entry per call.
    pub logs: Vec<String>,
    /// Set when the run failed.
    pub error: Option<CodeRunError>,
}

/// Contract misuse (`run` rejects only for these; program failures are results).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeRuntimeError {
    /// A binding namespace is unusable (bad or reserved global, duplicate names...).
    #[error("{0}")]
    InvalidBinding(String),
    /// The runtime was disposed.
    #[error("run() after disposal")]
    Disposed,
}

/// A code runtime backend (`docs/CONTRACTS.md`, "The runtime seam"). Every run is fresh: nothing
/// survives between runs.
pub trait CodeRuntime: Send + Sync {
    /// The program language (`typescript`).
    fn language(&self) -> &str;
    /// An isolation label (not a security claim).
    fn isolation(&self) -> &str;
    /// Runs a program.
    fn run(
        &self,
        request: CodeRunRequest,
    ) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>>;

    /// Whether [`run`](Self::run) polls the request's [`HostWork`] on the runtime's own thread
    /// whenever the program waits for its bindings, and leaves it in place when the run ends.
    /// The host then hands its sub-call lane over, and a binding call that completes at once
    /// costs no cross-thread hand-off. When `false` (the default), the host polls it itself.
    fn polls_host_work(&self) -> bool {
        false
    }

    /// Whether [`run`](Self::run) honours the request's [`RunRecord`]: the program's `Date`
    /// reads and `Math.random` go through it, and binding results reach the program in the
    /// recorded delivery rounds first, so a re-run of the same program with the same binding
    /// results takes the same path (what suspending and resuming a run needs). When `false`
    /// (the default), runs cannot be suspended.
    fn replays(&self) -> bool {
        false
    }
}
