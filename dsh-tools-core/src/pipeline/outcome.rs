//! Result constructors shared by the stages: cancellations, denials, contained failures, and the
//! success builder (`docs/CONTRACTS.md`, "Building a success").

use std::panic::{AssertUnwindSafe, catch_unwind};

use dsh_tools::exec::{ToolExecution, ToolExecutionResult, ToolSuccess};
use dsh_tools::json::{ResultJson, is_lossless};
use dsh_tools::{
    ContentBlock, ContextMessage, ErrorInfo, ToolDefinition, ToolError, ToolOutputError,
};
use serde_json::Value;

use crate::error::panic_message;

/// `ABORTED_BEFORE_DISPATCH`: cancelled before the body was invoked.
pub(crate) fn aborted_before_dispatch() -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::with_info(
        "tool call aborted before dispatch",
        ErrorInfo::new("AbortError", "ABORTED_BEFORE_DISPATCH"),
    ))
}

/// `ABORTED`: cancelled after the body was invoked.
pub(crate) fn aborted() -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::with_info(
        "tool call aborted",
        ErrorInfo::new("AbortError", "ABORTED"),
    ))
}

/// The cancellation result for a success cancelled late, keeping its contexts.
pub(crate) fn cancelled(body_invoked: bool, contexts: Vec<ContextMessage>) -> ToolExecutionResult {
    let mut result = if body_invoked {
        aborted()
    } else {
        aborted_before_dispatch()
    };
    if let ToolExecutionResult::Failure(failure) = &mut result {
        failure.additional_contexts = contexts;
    }
    result
}

/// A policy denial: `Error: <reason>`, no `info`.
pub(crate) fn denied(reason: String) -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::msg(reason))
}

/// A contained panic of a hook or of the pipeline's own callbacks.
pub(crate) fn from_panic(payload: &(dyn std::any::Any + Send)) -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::msg(panic_message(payload)))
}

/// Whether the model-facing parts of a result are lossless JSON (`docs/CONTRACTS.md`, "Stages",
/// stage 18).
///
/// Walks the typed result directly: only JSON values (the value, meta and unknown content
/// blocks) can hold a number that is not lossless, so nothing is serialised.
pub(crate) fn result_is_lossless(result: &ToolExecutionResult) -> bool {
    let (value, content, meta, contexts) = match result {
        ToolExecutionResult::Success(s) => {
            (Some(&s.value), &s.content, &s.meta, &s.additional_contexts)
        }
        ToolExecutionResult::Failure(f) => (None, &f.content, &f.meta, &f.additional_contexts),
    };
    value.is_none_or(is_lossless)
        && meta.as_ref().is_none_or(is_lossless)
        && content_is_lossless(content)
        && contexts.iter().all(|c| content_is_lossless(&c.content))
}

/// Whether content blocks are lossless JSON (iterative over nested tool-result blocks; flat
/// content, the common case, allocates nothing).
pub(crate) fn content_is_lossless(content: &[ContentBlock]) -> bool {
    let mut nested: Vec<&[ContentBlock]> = Vec::new();
    let mut blocks = content;
    loop {
        for block in blocks {
            match block {
                ContentBlock::Unknown(map) if !map.values().all(is_lossless) => return false,
                ContentBlock::ToolResult { content, .. } => nested.push(content),
                _ => {}
            }
        }
        match nested.pop() {
            Some(next) => blocks = next,
            None => return true,
        }
    }
}

fn output_error(tool: &str, violation: String) -> ToolError {
    ToolOutputError {
        tool: tool.to_owned(),
        violations: vec![violation],
    }
    .into()
}

/// Builds a success from a candidate value (`docs/CONTRACTS.md`, "Building a success"). A violated
/// output contract is the error: core dispatch turns it into the call's failure, while
/// normalisation (stage 14) and post-execute (stage 17) turn it into an error result that drops
/// every context.
pub(crate) fn try_success(
    def: &ToolDefinition,
    exec: &ToolExecution,
    value: Value,
    contexts: Vec<ContextMessage>,
    concludes_turn: bool,
    json: ResultJson,
) -> Result<ToolExecutionResult, ToolError> {
    let (value, content, meta) = try_build_success(def, exec, value, json)?;
    Ok(ToolExecutionResult::Success(ToolSuccess {
        value,
        content,
        meta,
        additional_contexts: contexts,
        concludes_turn,
    }))
}

/// Core dispatch's success (stage 10d): a violated output contract is the call's failure.
pub(crate) fn build_success(
    def: &ToolDefinition,
    exec: &ToolExecution,
    value: Value,
    concludes_turn: bool,
    json: ResultJson,
) -> ToolExecutionResult {
    try_success(def, exec, value, Vec::new(), concludes_turn, json)
        .unwrap_or_else(ToolExecutionResult::failure)
}

type Built = (Value, Vec<ContentBlock>, Option<Value>);

fn try_build_success(
    def: &ToolDefinition,
    exec: &ToolExecution,
    value: Value,
    json: ResultJson,
) -> Result<Built, ToolError> {
    let name = def.name();
    if !is_lossless(&value) {
        return Err(output_error(name, "value is not lossless JSON".into()));
    }
    let violations = def.output_validator().validate(&value, "value");
    if !violations.is_empty() {
        return Err(ToolOutputError {
            tool: name.to_owned(),
            violations,
        }
        .into());
    }
    let empty = Value::Object(serde_json::Map::new());
    let args = exec.arguments.as_deref().unwrap_or(&empty);
    let content =
        catch_unwind(AssertUnwindSafe(|| def.render_with(args, &value, json))).map_err(|p| {
            output_error(
                name,
                format!("output.render failed: {}", panic_message(&*p)),
            )
        })?;
    if !content_is_lossless(&content) {
        return Err(output_error(
            name,
            "output.render returned non-lossless JSON".into(),
        ));
    }
    let meta = if exec.parent.is_none() && def.has_presentation_meta() {
        let meta = catch_unwind(AssertUnwindSafe(|| def.presentation_meta(args, &value))).map_err(
            |p| {
                output_error(
                    name,
                    format!("output.presentationMeta failed: {}", panic_message(&*p)),
                )
            },
        )?;
        if meta.as_ref().is_some_and(|m| !is_lossless(m)) {
            return Err(output_error(
                name,
                "output.presentationMeta returned non-lossless JSON".into(),
            ));
        }
        meta
    } else {
        None
    };
    Ok((value, content, meta))
}

/// The message a block decision carries: text blocks' text, other blocks as `[<type> content]`.
pub(crate) fn block_message(feedback: &[ContentBlock]) -> String {
    let message = feedback
        .iter()
        .map(|block| match block.as_text() {
            Some(text) if matches!(block, ContentBlock::Text { .. }) => text.to_owned(),
            _ => format!("[{} content]", block.type_name()),
        })
        .collect::<Vec<_>>()
        .join("\n");
    if message.is_empty() {
        "tool result blocked by post-execute policy".to_owned()
    } else {
        message
    }
}
