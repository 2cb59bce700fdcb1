//! The worker wire protocol: one JSON document per line on the worker's stdin and stdout.
//!
//! ```text
//! worker → parent  {"t":"ready","version":"0.1.0","error":null}        once, at start
//! parent → worker  {"t":"run","run":7,"program":"…","namespaces":[…],"limits":{…},"thread_stack_bytes":…}
//! worker → parent  {"t":"call","run":7,"id":0,"ns":0,"fn":3,"args":{…}}   a tool call starts
//! worker → parent  {"t":"log","run":7,"line":"…"}                       a printed line
//! parent → worker  {"t":"reply","run":7,"id":0,"result":{"Ok":…}}        a tool call settles ({"Err":"…"})
//! worker → parent  {"t":"done","run":7,"value":…,"error":null}          the program ended
//! parent → worker  {"t":"pause","run":7}                                 pause (a durable run's suspension)
//! worker → parent  {"t":"paused","run":7,"snapshot":{…}}                 its paused state
//! ```
//!
//! A `run` may carry `"pausable":true` (the parent may pause it) and `"resume":{…}` (a paused
//! state to continue, authenticated by the parent, instead of starting the program).
//!
//! One program at a time per worker; `run` numbers a program so that a reply still travelling
//! when its program ended is never taken for the next program's. The parent stops a program by
//! killing its worker. Every message is validated on arrival; anything else ends the worker.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::session::{Limits, Namespace};
use crate::runtime::{CodeErrorKind, CodeRunError, RunSnapshot};

/// A message from the parent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ToWorker {
    /// Run a program.
    Run {
        run: u64,
        program: String,
        namespaces: Vec<Namespace>,
        limits: Limits,
        thread_stack_bytes: usize,
        /// The run may be paused (a durable run): the worker keeps what it needs.
        #[serde(default)]
        pausable: bool,
        /// A paused run to continue instead of starting the program.
        #[serde(default)]
        resume: Option<RunSnapshot>,
    },
    /// Pause the program at its next suspension point and send its state.
    Pause { run: u64 },
    /// A tool call settled.
    Reply {
        run: u64,
        id: u32,
        result: Result<Value, String>,
    },
}

/// A message from a worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum FromWorker {
    /// The worker started; `error` when it cannot run programs (no memory limit possible).
    Ready {
        version: String,
        error: Option<String>,
    },
    /// A tool call starts.
    Call {
        run: u64,
        id: u32,
        ns: usize,
        #[serde(rename = "fn")]
        function: usize,
        args: Value,
    },
    /// A printed line.
    Log { run: u64, line: String },
    /// The program ended.
    /// The program paused: its state.
    Paused { run: u64, snapshot: RunSnapshot },
    Done {
        run: u64,
        value: Option<Value>,
        error: Option<WireError>,
    },
}

/// A run error on the wire.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WireError {
    pub(crate) kind: String,
    pub(crate) message: String,
}

impl From<CodeRunError> for WireError {
    fn from(error: CodeRunError) -> Self {
        Self {
            kind: error.kind.as_str().to_owned(),
            message: error.message,
        }
    }
}

impl WireError {
    /// Back to a run error (an unknown kind is the worker's failure).
    pub(crate) fn into_error(self) -> CodeRunError {
        let kind = [
            CodeErrorKind::Exception,
            CodeErrorKind::Timeout,
            CodeErrorKind::InvalidOutput,
            CodeErrorKind::MemoryLimit,
            CodeErrorKind::StackOverflow,
            CodeErrorKind::SourceLimit,
            CodeErrorKind::CallLimit,
        ]
        .into_iter()
        .find(|k| k.as_str() == self.kind);
        match kind {
            Some(kind) => CodeRunError {
                kind,
                message: self.message,
            },
            None => CodeRunError {
                kind: CodeErrorKind::WorkerExit,
                message: format!("worker reported an unknown outcome kind \"{}\"", self.kind),
            },
        }
    }
}

/// The protocol version: workers and parents of the same build only.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One message as a line (with its newline).
pub(crate) fn line(message: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
