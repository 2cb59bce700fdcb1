//! A call's input as the pipeline takes it: a [`ToolExecutionInput`] whose ids may already be
//! shared strings. A Code Mode sub-call names its run, its tool and its root call with strings
//! the run already holds; handing them over shared spares each sub-call the copies that
//! [`ToolExecutionInput`]'s owned `String`s would take (and the conversions back into the
//! execution record's `Arc<str>`s).

use std::sync::Arc;

use dsh_tools::exec::{ExecutionToken, ProgressObserver, ScopeId, ToolExecutionInput};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A string of a call's input: owned as a caller gave it, or already shared.
pub(crate) enum SharedStr {
    /// Owned (from a [`ToolExecutionInput`]).
    Owned(String),
    /// Shared with whoever made the call.
    #[allow(
        dead_code,
        reason = "a seam for the presentation compiled in (Code Mode); unused in a build without one"
    )]
    Shared(Arc<str>),
}

impl SharedStr {
    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Owned(text) => text,
            Self::Shared(text) => text,
        }
    }

    /// The text as the execution record keeps it (a copy only when it was owned).
    pub(crate) fn into_shared(self) -> Arc<str> {
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
pub(crate) enum CallerCancel {
    /// The call's own.
    Own(CancellationToken),
    /// Shared with other calls.
    #[allow(
        dead_code,
        reason = "a seam for the presentation compiled in (Code Mode); unused in a build without one"
    )]
    Shared(Arc<CancellationToken>),
}

impl std::ops::Deref for CallerCancel {
    type Target = CancellationToken;

    fn deref(&self) -> &CancellationToken {
        match self {
            Self::Own(token) => token,
            Self::Shared(token) => token,
        }
    }
}

/// A call's input inside the pipeline (the fields of [`ToolExecutionInput`]).
pub(crate) struct CallInput {
    pub(crate) call_id: SharedStr,
    pub(crate) root_call_id: Option<SharedStr>,
    pub(crate) name: SharedStr,
    pub(crate) arguments: Value,
    pub(crate) cancel: CallerCancel,
    pub(crate) agent: Option<ScopeId>,
    pub(crate) parent: Option<ExecutionToken>,
    pub(crate) progress: Option<ProgressObserver>,
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
        }
    }
}
