//! Policy decisions and execution modes.

use serde_json::Value;

use crate::content::{ContentBlock, ContextMessage};

/// What a pre-execute policy decides (`docs/CONTRACTS.md`, "Tools and results").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolDecision {
    /// Proceed to the guards and dispatch.
    Allow,
    /// Refuse; the reason reaches the model as `Error: <reason>`.
    Deny {
        /// Why.
        reason: String,
    },
    /// Ask the host's approval service.
    Ask {
        /// Why approval is needed (shown to the user).
        reason: Option<String>,
    },
}

/// What a post-execute policy decides (`docs/CONTRACTS.md`, "Tools and results").
#[derive(Debug, Clone, PartialEq)]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing its model-facing content.
    Accept {
        /// Replacement content.
        content: Option<Vec<ContentBlock>>,
        /// Context messages to attach.
        additional_contexts: Vec<ContextMessage>,
    },
    /// Keep the call successful with a new canonical value (validated and re-rendered).
    AcceptValue {
        /// The replacement value.
        value: Value,
        /// Context messages to attach.
        additional_contexts: Vec<ContextMessage>,
    },
    /// Turn the result into a failure whose content is the corrective feedback.
    Block {
        /// The feedback shown to the model.
        feedback: Vec<ContentBlock>,
        /// Context messages to attach (the only contexts the blocked result keeps).
        additional_contexts: Vec<ContextMessage>,
    },
}

impl PostToolDecision {
    /// Accept unchanged.
    pub const fn accept() -> Self {
        Self::Accept {
            content: None,
            additional_contexts: Vec::new(),
        }
    }
}

/// How a call may be scheduled relative to other calls of the same turn.
///
/// Only an explicit [`ToolExecutionMode::Parallel`] overlaps; everything else is exclusive
/// (fail-closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolExecutionMode {
    /// May overlap with other parallel calls.
    Parallel,
    /// Runs alone.
    Exclusive,
}
