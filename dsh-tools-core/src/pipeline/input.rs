//! A call's input as the pipeline takes it: a [`ToolExecutionInput`] whose ids may already be
//! shared strings. A Code Mode sub-call names its run, its tool and its root call with strings
//! the run already holds; handing them over shared spares each sub-call the copies that
//! [`ToolExecutionInput`]'s owned `String`s would take (and the conversions back into the
//! execution record's `Arc<str>`s).

use std::sync::Arc;

use dsh_tools::exec::{
    ExecutionToken, InputChannel, ProgressObserver, ScopeId, ToolExecutionInput,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A string of a call's input: owned as a caller gave it, or already shared.
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools_runtime::extension::SharedStr;
/// let name: Arc<str> = "read".into();
/// assert_eq!(SharedStr::Shared(name).as_str(), "read");
/// ```
pub enum SharedStr {
    /// Owned (from a [`ToolExecutionInput`]).
    Owned(String),
    /// Shared with whoever made the call.
    Shared(Arc<str>),
}

impl SharedStr {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Owned(text) => text,
            Self::Shared(text) => text,
        }
    }

    /// The text as the execution record keeps it (a copy only when it was owned).
    #[inline]
    pub fn into_shared(self) -> Arc<str> {
        match self {
            Self::Owned(text) => text.into(),
            Self::Shared(text) => text,
        }
    }
}

/// The caller's cancellation token: the call's own (from a [`ToolExecutionInput`]), or one many
/// calls share (a Code Mode run's, for its sub-calls), held without a per-call clone of the
/// token (each clone takes the token tree's lock, and so does its drop).
#[derive(Clone)]
pub enum CallerCancel {
    /// The call's own.
    Own(CancellationToken),
    /// Shared with other calls.
    Shared(Arc<CancellationToken>),
}

impl std::ops::Deref for CallerCancel {
    type Target = CancellationToken;

    #[inline]
    fn deref(&self) -> &CancellationToken {
        match self {
            Self::Own(token) => token,
            Self::Shared(token) => token,
        }
    }
}

/// A call's input inside the pipeline: the fields of [`ToolExecutionInput`], whose strings and
/// cancellation token may be shared (what a [`Lane`](crate::extension::Lane) takes).
pub struct CallInput {
    /// The call's id.
    pub call_id: SharedStr,
    /// The id of the top-level call this one runs under, if any.
    pub root_call_id: Option<SharedStr>,
    /// The tool's name.
    pub name: SharedStr,
    /// The arguments.
    pub arguments: Value,
    /// The caller's cancellation.
    pub cancel: CallerCancel,
    /// The calling agent's scope.
    pub agent: Option<ScopeId>,
    /// The execution this call runs inside (a Code Mode sub-call's `run_code`).
    pub parent: Option<ExecutionToken>,
    /// Where the call's progress goes.
    pub progress: Option<ProgressObserver>,
    /// Who answers the call's questions.
    pub caller: Option<InputChannel>,
}

impl From<ToolExecutionInput> for CallInput {
    fn from(input: ToolExecutionInput) -> Self {
        let ToolExecutionInput {
            call_id,
            root_call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
            progress,
            caller,
        } = input;
        Self {
            call_id: SharedStr::Owned(call_id),
            root_call_id: root_call_id.map(SharedStr::Owned),
            name: SharedStr::Owned(name),
            arguments,
            cancel: CallerCancel::Own(cancel),
            agent,
            parent,
            progress,
            caller,
        }
    }
}
