//! [`provider`](super) on async-openai's Chat Completions types (feature `async-openai`): the
//! same conversions as on JSON, typed — tool definitions to [`ChatCompletionTools`] (OpenAI
//! strict dialect), the model's [`ChatCompletionMessageToolCalls`] to [`ProviderCall`]s, results
//! to the [`ChatCompletionRequestMessage`]s of the next request, and streamed
//! [`CreateChatCompletionStreamResponse`] chunks into a [`ChatStream`].
//!
//! ```
//! use async_openai::types::chat::{ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, FunctionCall};
//! use dsh_tools_runtime::provider::{CallArguments, async_openai::chat_calls};
//! use serde_json::json;
//!
//! let call = ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
//!     id: "call_1".into(),
//!     function: FunctionCall { name: "read_file".into(), arguments: r#"{"path": "a.rs"}"#.into() },
//! });
//! let calls = chat_calls(&[call]);
//! assert_eq!(calls[0].arguments, CallArguments::Json(json!({"path": "a.rs"})));
//! ```

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestMessage, ChatCompletionTools,
    CreateChatCompletionStreamResponse,
};
use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::{ToolDefinition, ToolSchemaWire};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{
    CallArguments, ChatStream, ImageSource, Provider, ProviderCall, ProviderError, render_results,
    request_tools,
};
use crate::dialect::{DialectError, DialectOptions};

/// Why a conversion to async-openai's types failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AsyncOpenAiError {
    /// A tool's schema has no OpenAI strict-mode form.
    #[error(transparent)]
    Dialect(#[from] DialectError),
    /// Our JSON does not fit their type (a version of async-openai that changed shape).
    #[error("async-openai does not accept the {what}: {source}")]
    Shape {
        /// What was converted.
        what: &'static str,
        /// serde's error.
        source: serde_json::Error,
    },
}

/// The request's `tools`: the shown tools in OpenAI strict mode (with `tool_search` when tools
/// are deferred), as [`request_tools`] renders them for [`Provider::OpenAiChat`].
pub fn chat_tools(
    shown: &[ToolSchemaWire],
    deferred: &[ToolDefinition],
    options: &DialectOptions,
) -> Result<Vec<ChatCompletionTools>, AsyncOpenAiError> {
    request_tools(Provider::OpenAiChat, shown, deferred, options)?
        .into_iter()
        .map(|tool| typed(tool, "tool definition"))
        .collect()
}

/// The calls of an assistant message, in order. A custom (free-form) tool call has its input
/// text as its arguments, parsed like a function's.
pub fn chat_calls(calls: &[ChatCompletionMessageToolCalls]) -> Vec<ProviderCall> {
    calls
        .iter()
        .map(|call| match call {
            ChatCompletionMessageToolCalls::Function(call) => ProviderCall {
                id: Some(call.id.clone()),
                name: call.function.name.clone(),
                arguments: CallArguments::from_text(&call.function.arguments),
            },
            ChatCompletionMessageToolCalls::Custom(call) => ProviderCall {
                id: Some(call.id.clone()),
                name: call.custom_tool.name.clone(),
                arguments: CallArguments::from_text(&call.custom_tool.input),
            },
        })
        .collect()
}

/// The next request's messages for `calls`' `results`: one tool message per call, then the
/// calls' additional contexts as user messages (see [`render_results`]).
pub fn chat_messages(
    calls: &[ProviderCall],
    results: &[ToolExecutionResult],
    images: Option<&dyn ImageSource>,
) -> Result<Vec<ChatCompletionRequestMessage>, AsyncOpenAiError> {
    render_results(Provider::OpenAiChat, calls, results, images)
        .into_iter()
        .map(|message| typed(message, "tool result message"))
        .collect()
}

impl ChatStream {
    /// Adds one streamed chunk as async-openai parsed it (see [`ChatStream::push`]).
    pub fn push_chunk(
        &mut self,
        chunk: &CreateChatCompletionStreamResponse,
    ) -> Result<(), ProviderError> {
        let chunk = serde_json::to_value(chunk).unwrap_or(Value::Null);
        self.push(&chunk)
    }
}

fn typed<T: DeserializeOwned>(value: Value, what: &'static str) -> Result<T, AsyncOpenAiError> {
    serde_json::from_value(value).map_err(|source| AsyncOpenAiError::Shape { what, source })
}
