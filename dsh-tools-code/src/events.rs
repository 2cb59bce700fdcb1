//! The durable trace of Code Mode sub-calls (`docs/CONTRACTS.md`, "Dispatch events"):
//! `tool/code-dispatch-start` and `tool/code-dispatch` events, delivered to a host-provided sink
//! (the host's session log).

use dsh_tools::ContentBlock;
use dsh_tools::exec::{ToolExecution, ToolExecutionResult};
use dsh_tools_core::extension::{CallInput, SharedStr};
use serde::Serialize;
use serde_json::Value;

use super::dispatch_log::{DispatchLogEntry, DispatchLogFn, shape};

/// One sub-call event. Only calls whose outer `run_code` call has an agent produce events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CodeDispatchEvent {
    /// A sub-call started (before its policies ran).
    #[serde(rename = "tool/code-dispatch-start", rename_all = "camelCase")]
    Start {
        /// The outermost call id.
        root_call_id: String,
        /// The `run_code` call id.
        parent_call_id: String,
        /// `<parent>:code:<n>`.
        sub_call_id: String,
        /// The tool.
        name: String,
        /// The arguments (a copy independent of the dispatched one).
        arguments: Value,
    },
    /// A started sub-call settled (exactly once per started call).
    #[serde(rename = "tool/code-dispatch", rename_all = "camelCase")]
    Settled {
        /// The outermost call id.
        root_call_id: String,
        /// The `run_code` call id.
        parent_call_id: String,
        /// `<parent>:code:<n>`.
        sub_call_id: String,
        /// The tool.
        name: String,
        /// The arguments.
        arguments: Value,
        /// Whether the sub-call failed.
        is_error: bool,
        /// Its final content.
        content: Vec<ContentBlock>,
    },
    /// A resumed run answered a sub-call from its journal: the call was not dispatched again
    /// (its `tool/code-dispatch` event was logged when it first settled).
    #[serde(rename = "tool/code-dispatch-replayed", rename_all = "camelCase")]
    Replayed {
        /// The outermost call id.
        root_call_id: String,
        /// The `run_code` call id.
        parent_call_id: String,
        /// `<parent>:code:<n>`.
        sub_call_id: String,
        /// The tool.
        name: String,
        /// The arguments.
        arguments: Value,
        /// Whether the journaled result is a failure.
        is_error: bool,
    },
    /// A suspendable run suspended: its pending calls await a decision (see
    /// `CodeModeExt::run_code_suspendable`).
    #[serde(rename = "tool/code-run-suspended", rename_all = "camelCase")]
    Suspended {
        /// The outermost call id.
        root_call_id: String,
        /// The `run_code` call id.
        parent_call_id: String,
        /// The sub-call ids awaiting a decision.
        pending: Vec<String>,
        /// How many completed sub-calls the continuation journals.
        journaled: usize,
    },
    /// A suspended run resumed (`CodeModeExt::resume_code`); its journaled calls replay.
    #[serde(rename = "tool/code-run-resumed", rename_all = "camelCase")]
    Resumed {
        /// The outermost call id.
        root_call_id: String,
        /// The `run_code` call id.
        parent_call_id: String,
        /// How many journaled sub-calls the replay answers.
        journaled: usize,
        /// The pending sub-calls approved.
        approved: Vec<String>,
        /// The pending sub-calls denied.
        denied: Vec<String>,
    },
}

impl CodeDispatchEvent {
    pub(crate) fn start(input: &CallInput, parent: &str) -> Self {
        let call_id = input.call_id.as_str();
        Self::Start {
            root_call_id: input
                .root_call_id
                .as_ref()
                .map_or(call_id, SharedStr::as_str)
                .to_owned(),
            parent_call_id: parent.to_owned(),
            sub_call_id: call_id.to_owned(),
            name: input.name.as_str().to_owned(),
            arguments: input.arguments.clone(),
        }
    }

    pub(crate) fn settled(
        outer: &ToolExecution,
        number: usize,
        name: &str,
        arguments: Value,
        result: &ToolExecutionResult,
    ) -> Self {
        Self::Settled {
            root_call_id: outer.root_call_id.to_string(),
            parent_call_id: outer.call_id.to_string(),
            sub_call_id: format!("{}:code:{number}", outer.call_id),
            name: name.to_owned(),
            arguments,
            is_error: result.is_error(),
            content: result.content().to_vec(),
        }
    }
}

impl CodeDispatchEvent {
    /// A settle event whose content the dispatch-log listeners have shaped.
    pub(crate) fn shaped(mut self, chain: &[DispatchLogFn]) -> Self {
        if let Self::Settled {
            root_call_id,
            parent_call_id,
            sub_call_id,
            name,
            arguments,
            is_error,
            content,
        } = &mut self
        {
            let entry = DispatchLogEntry {
                root_call_id,
                parent_call_id,
                sub_call_id,
                name,
                arguments,
                is_error: *is_error,
            };
            *content = shape(chain, &entry, content);
        }
        self
    }
}

/// Where sub-call events go (the host's session log). A panicking sink is contained.
pub trait CodeEventSink: Send + Sync {
    /// Appends one event.
    fn append(&self, event: CodeDispatchEvent);
}

pub(crate) fn emit(sink: &dyn CodeEventSink, event: CodeDispatchEvent) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.append(event))).is_err() {
        tracing::warn!("tool/code-dispatch event sink failed");
    }
}
