//! Tool calls accumulated from streaming responses.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::quoted;
use super::parse::{At, check_unique};
use super::{CallArguments, Provider, ProviderCall, ProviderError};

/// Accumulates the `tool_calls` deltas of an OpenAI Chat Completions stream
/// (`chat.completion.chunk` objects, `stream: true`) into complete calls.
///
/// Each chunk's `choices[].delta.tool_calls[]` entry names the call it continues by `index`;
/// the first delta of a call brings its `id` and `function.name`, later ones append to
/// `function.arguments`. Only choice 0 is read (the others are alternative turns).
///
/// ```
/// use dsh_tools_runtime::provider::{CallArguments, ChatStream};
/// use serde_json::json;
///
/// let mut stream = ChatStream::new();
/// for chunk in [
///     json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
///         {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
///     json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}}]}),
///     json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"a.rs\"}"}}]}}]}),
///     json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
/// ] {
///     stream.push(&chunk).unwrap();
/// }
/// let calls = stream.finish().unwrap();
/// assert_eq!(calls[0].id.as_deref(), Some("call_1"));
/// assert_eq!(calls[0].arguments, CallArguments::Json(json!({"path": "a.rs"})));
/// ```
#[derive(Debug, Default, Clone)]
pub struct ChatStream {
    calls: BTreeMap<u64, Partial>,
}

#[derive(Debug, Default, Clone)]
struct Partial {
    id: Option<String>,
    name: String,
    arguments: String,
    /// Anthropic: the `input` of `content_block_start`, used when no delta follows.
    start_input: Option<Value>,
}

impl ChatStream {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chunk (the JSON of one `data:` line of the stream).
    pub fn push(&mut self, chunk: &Value) -> Result<(), ProviderError> {
        let provider = Provider::OpenAiChat;
        let root = At::root(provider, chunk);
        for choice in root.field("choices")?.array()? {
            let index = choice.field("index")?;
            if index.value().as_u64() != Some(0) {
                continue;
            }
            let Some(delta) = choice.optional("delta")? else {
                continue;
            };
            let Some(tool_calls) = delta.optional("tool_calls")? else {
                continue;
            };
            for call in tool_calls.array()? {
                let at = call.field("index")?;
                let Some(index) = at.value().as_u64() else {
                    return Err(at.problem("must be a non-negative integer"));
                };
                let partial = self.calls.entry(index).or_default();
                if let Some(id) = call.optional("id")? {
                    partial.id = Some(id.string()?.to_owned());
                }
                if let Some(function) = call.optional("function")? {
                    if let Some(name) = function.optional("name")? {
                        partial.name.push_str(name.string()?);
                    }
                    if let Some(arguments) = function.optional("arguments")? {
                        partial.arguments.push_str(arguments.string()?);
                    }
                }
            }
        }
        Ok(())
    }

    /// The complete calls, in `index` order. A call that never received its id or name is an
    /// error; arguments that do not parse are [`CallArguments::Malformed`].
    pub fn finish(self) -> Result<Vec<ProviderCall>, ProviderError> {
        finish(Provider::OpenAiChat, self.calls)
    }
}

/// Accumulates the `tool_use` blocks of an Anthropic Messages stream (the JSON `data` of its
/// server-sent events) into complete calls: `content_block_start` opens a `tool_use` block
/// (its `id` and `name`), `input_json_delta` events append to its input text.
///
/// ```
/// use dsh_tools_runtime::provider::{AnthropicStream, CallArguments};
/// use serde_json::json;
///
/// let mut stream = AnthropicStream::new();
/// for event in [
///     json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
///     json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
///     json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading."}}),
///     json!({"type": "content_block_stop", "index": 0}),
///     json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
///     json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
///     json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ".rs\"}"}}),
///     json!({"type": "content_block_stop", "index": 1}),
///     json!({"type": "message_stop"}),
/// ] {
///     stream.push(&event).unwrap();
/// }
/// let calls = stream.finish().unwrap();
/// assert_eq!(calls[0].arguments, CallArguments::Json(json!({"path": "a.rs"})));
/// ```
#[derive(Debug, Default, Clone)]
pub struct AnthropicStream {
    calls: BTreeMap<u64, Partial>,
}

impl AnthropicStream {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one event. An `error` event is a [`ProviderError::Stream`] carrying its message.
    pub fn push(&mut self, event: &Value) -> Result<(), ProviderError> {
        let provider = Provider::Anthropic;
        let root = At::root(provider, event);
        match root.field("type")?.string()? {
            "content_block_start" => {
                let block = root.field("content_block")?;
                if block.field("type")?.string()? != "tool_use" {
                    return Ok(());
                }
                let index = block_index(&root)?;
                self.calls.insert(
                    index,
                    Partial {
                        id: Some(block.field("id")?.string()?.to_owned()),
                        name: block.field("name")?.string()?.to_owned(),
                        arguments: String::new(),
                        start_input: block.optional("input")?.map(|i| i.value().clone()),
                    },
                );
            }
            "content_block_delta" => {
                let delta = root.field("delta")?;
                if delta.field("type")?.string()? != "input_json_delta" {
                    return Ok(());
                }
                let index = block_index(&root)?;
                let partial_json = delta.field("partial_json")?.string()?;
                let Some(partial) = self.calls.get_mut(&index) else {
                    return Err(ProviderError::Stream {
                        provider,
                        problem: format!(
                            "input_json_delta for content block {index}, which is not a tool_use block"
                        ),
                    });
                };
                partial.arguments.push_str(partial_json);
            }
            "error" => {
                let error = root.field("error")?;
                let message = match error.optional("message")? {
                    Some(message) => message.string()?.to_owned(),
                    None => error.value().to_string(),
                };
                return Err(ProviderError::Stream {
                    provider,
                    problem: format!("the stream reported an error: {}", quoted(&message)),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// The complete calls, in block order.
    pub fn finish(self) -> Result<Vec<ProviderCall>, ProviderError> {
        finish(Provider::Anthropic, self.calls)
    }
}

fn block_index(root: &At<'_>) -> Result<u64, ProviderError> {
    let at = root.field("index")?;
    at.value()
        .as_u64()
        .ok_or_else(|| at.problem("must be a non-negative integer"))
}

fn finish(
    provider: Provider,
    calls: BTreeMap<u64, Partial>,
) -> Result<Vec<ProviderCall>, ProviderError> {
    let mut out = Vec::with_capacity(calls.len());
    for (index, partial) in calls {
        let Some(id) = partial.id else {
            return Err(ProviderError::Stream {
                provider,
                problem: format!("tool call {index} never received its \"id\""),
            });
        };
        if partial.name.is_empty() {
            return Err(ProviderError::Stream {
                provider,
                problem: format!(
                    "tool call {index} ({}) never received its name",
                    quoted(&id)
                ),
            });
        }
        let arguments = match partial.start_input {
            Some(input) if partial.arguments.is_empty() => CallArguments::Json(input),
            _ => CallArguments::from_text(&partial.arguments),
        };
        out.push((
            format!("tool call {index}"),
            ProviderCall {
                id: Some(id),
                name: partial.name,
                arguments,
            },
        ));
    }
    check_unique(provider, &out)?;
    Ok(out.into_iter().map(|(_, call)| call).collect())
}
