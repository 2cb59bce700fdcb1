//! Execution-side types: what a pipeline hands to hooks and tool bodies, and what it returns.
//!
//! The pipeline itself lives in `dsh-tools-runtime`; these types are here so that tool
//! libraries (which depend on this crate alone) can name them in presenters, finalisers and
//! tool bodies, and unit-test their tools without a runtime.

mod ask;
mod context;
mod decision;
mod progress;
mod result;
mod state;

use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use ask::{
    AskError, AskFuture, CallerInput, Elicited, HostInput, InputChannel, InputKind, InputRequest,
    Root,
};
pub use context::{RunContextHandle, ToolRunContext};
pub use decision::{PostToolDecision, PreToolDecision, ToolExecutionMode};
pub use progress::{Progress, ProgressObserver};
pub use result::{ToolExecutionResult, ToolFailure, ToolSuccess};
pub use state::{State, StateMap, StateNeed};

/// An opaque per-execution identity. Two executions never share a token; it carries nothing
/// readable and is compared by identity only.
///
/// ```
/// use dsh_tools::exec::ExecutionToken;
/// let a = ExecutionToken::mint();
/// let b = ExecutionToken::mint();
/// assert_ne!(a, b);
/// assert_eq!(a, a);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionToken(NonZeroU64);

impl ExecutionToken {
    /// Mints a fresh, never-before-seen token. Pipelines call this; callers of a pipeline never
    /// choose a token.
    pub fn mint() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        // A u64 counter starting at 1 cannot reach 0 within the lifetime of a process.
        Self(NonZeroU64::new(id).unwrap_or(NonZeroU64::MIN))
    }
}

impl std::fmt::Debug for ExecutionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExecutionToken(..)")
    }
}

/// The opaque key of an agent scope (the runtime's `Scope` handles carry one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeId(pub u64);

/// A call as the caller describes it (`docs/CONTRACTS.md`, "Tools and results").
#[derive(Debug, Clone)]
pub struct ToolExecutionInput {
    /// The model's call id.
    pub call_id: String,
    /// The id of the outermost call (defaults to `call_id`).
    pub root_call_id: Option<String>,
    /// The tool name the model asked for.
    pub name: String,
    /// The model-written arguments (untrusted).
    pub arguments: Value,
    /// Cancellation of the call.
    pub cancel: CancellationToken,
    /// The calling agent's scope, if any.
    pub agent: Option<ScopeId>,
    /// The enclosing execution (Code Mode sub-calls).
    pub parent: Option<ExecutionToken>,
    /// Where the tool body's progress reports go (`None`: nowhere).
    pub progress: Option<ProgressObserver>,
    /// Who answers the tool body's questions (`None`: the host's [`HostInput`], if any).
    pub caller: Option<InputChannel>,
}

impl ToolExecutionInput {
    /// A top-level call with a fresh cancellation token, no agent and no parent.
    ///
    /// ```
    /// use dsh_tools::exec::ToolExecutionInput;
    /// let input = ToolExecutionInput::new("call-1", "read_file", serde_json::json!({"path": "/tmp/x"}));
    /// assert_eq!(input.name, "read_file");
    /// assert!(input.parent.is_none());
    /// ```
    pub fn new(call_id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            call_id: call_id.into(),
            root_call_id: None,
            name: name.into(),
            arguments,
            cancel: CancellationToken::new(),
            agent: None,
            parent: None,
            progress: None,
            caller: None,
        }
    }

    /// The same input with a progress observer.
    pub fn with_progress(mut self, observer: ProgressObserver) -> Self {
        self.progress = Some(observer);
        self
    }
}

/// The pipeline-owned, read-only view of one execution (`docs/CONTRACTS.md`, "Tools and results").
///
/// Arguments are the immutable snapshot taken once when the execution was created; every stage
/// sees the same `Arc`.
#[derive(Debug, Clone)]
pub struct ToolExecution {
    /// This execution's identity.
    pub token: ExecutionToken,
    /// The model's call id.
    pub call_id: Arc<str>,
    /// The outermost call id (`call_id` for top-level calls).
    pub root_call_id: Arc<str>,
    /// The requested tool name.
    pub name: Arc<str>,
    /// The argument snapshot (`None` when the arguments were not lossless JSON).
    pub arguments: Option<Arc<Value>>,
    /// The calling agent's scope.
    pub agent: Option<ScopeId>,
    /// The enclosing execution, for nested calls.
    pub parent: Option<ExecutionToken>,
    /// Where the body's progress reports go (the caller's observer).
    pub progress: Option<ProgressObserver>,
    /// Who answers the body's questions (the caller's channel).
    pub caller: Option<InputChannel>,
}

impl ToolExecution {
    /// A detached execution (fresh token, no agent, no parent), for tests and for calling a
    /// tool's body outside any pipeline.
    pub fn detached(call_id: &str, name: &str, arguments: Value) -> Self {
        Self {
            token: ExecutionToken::mint(),
            call_id: call_id.into(),
            root_call_id: call_id.into(),
            name: name.into(),
            arguments: Some(Arc::new(arguments)),
            agent: None,
            parent: None,
            progress: None,
            caller: None,
        }
    }
}
