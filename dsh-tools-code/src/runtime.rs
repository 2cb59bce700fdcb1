//! The code-runtime seam (`docs/CONTRACTS.md`, "The runtime seam"): how a Code Mode program runs,
//! whatever the backend.

use std::fmt;
use std::sync::{Arc, Mutex};

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
    /// Where a runtime that [snapshots](CodeRuntime::snapshots) leaves the program's paused
    /// state when the run is stopped by its cancellation (see [`RunSnapshot`]).
    pub snapshot_to: Option<SnapshotSlot>,
    /// A paused state to continue instead of starting the program (only for runtimes that
    /// [snapshot](CodeRuntime::snapshots), and only authenticated state: a corrupted one may
    /// bring the interpreter down).
    pub resume_from: Option<RunSnapshot>,
}

/// A program paused by a runtime that [snapshots](CodeRuntime::snapshots): its state, and the
/// binding calls it still awaits.
///
/// ```
/// use dsh_tools_runtime::code::RunSnapshot;
/// let snapshot = RunSnapshot::new(vec![1, 2, 3], vec![2], 2);
/// let json = serde_json::to_string(&snapshot).unwrap();
/// assert_eq!(json, r#"{"state":"AQID","awaiting":[2],"calls":2}"#);
/// assert_eq!(serde_json::from_str::<RunSnapshot>(&json).unwrap(), snapshot);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct RunSnapshot {
    /// The runtime's paused state (opaque to the host; base64url in JSON).
    #[serde(with = "base64_bytes")]
    pub state: Vec<u8>,
    /// The binding calls the paused program still awaits, by ordinal (the n-th binding call of
    /// the run, counted from 1 across all its resumptions), in ascending order. Resuming, the
    /// runtime calls exactly these bindings again, in this order, before anything else.
    pub awaiting: Vec<usize>,
    /// The binding calls the run made so far (the next one is `calls + 1`).
    pub calls: usize,
}

impl RunSnapshot {
    /// A snapshot of `state`, awaiting the calls `awaiting`, after `calls` binding calls.
    pub fn new(state: Vec<u8>, awaiting: Vec<usize>, calls: usize) -> Self {
        Self {
            state,
            awaiting,
            calls,
        }
    }
}

/// Where a runtime leaves a paused program's [`RunSnapshot`].
pub type SnapshotSlot = Arc<Mutex<Option<RunSnapshot>>>;

mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&URL_SAFE_NO_PAD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        URL_SAFE_NO_PAD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
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
            snapshot_to: None,
            resume_from: None,
        }
    }

    /// The same request, leaving the program's paused state in `slot` when it is stopped by
    /// its cancellation (runtimes that [snapshot](CodeRuntime::snapshots)).
    pub fn with_snapshot_to(mut self, slot: SnapshotSlot) -> Self {
        self.snapshot_to = Some(slot);
        self
    }

    /// The same request, continuing `snapshot` instead of starting the program.
    pub fn resuming(mut self, snapshot: RunSnapshot) -> Self {
        self.resume_from = Some(snapshot);
        self
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

    /// Whether the runtime can pause a program and continue it later, in this process or
    /// another: a run whose request has a [`snapshot_to`](CodeRunRequest::snapshot_to) slot
    /// and is stopped by its cancellation leaves its paused state there (a [`RunSnapshot`],
    /// written before `run` resolves) instead of ending it, and a request
    /// [`resuming`](CodeRunRequest::resuming) a snapshot continues it — the runtime first
    /// calls the bindings the snapshot still awaits again, in order, then carries on with the
    /// program's captured output so far in front of its logs. A runtime that snapshots
    /// suspends runs without replaying them. When `false` (the default), it cannot.
    fn snapshots(&self) -> bool {
        false
    }
}
