//! Results as the messages a provider expects after its tool calls.

use dsh_tools::ContextMessage;
use dsh_tools::exec::ToolExecutionResult;
use serde_json::{Map, Value, json};

use super::content::{ImageSource, Piece, has_images, joined_text, pieces};
use super::{Provider, ProviderCall};

/// Image media types Anthropic accepts in a base64 image block.
const ANTHROPIC_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Renders the results of a turn's calls as `provider`'s next input, one per call, in call order,
/// each paired with its call's id (`docs/CONTRACTS.md`, "Provider turns"):
///
/// - OpenAI Chat Completions: one `{"role": "tool", "tool_call_id", "content"}` message per call
///   (tool messages carry text only: images follow all of them in one `user` message with
///   `image_url` parts, each introduced by the call id it came from);
/// - OpenAI Responses: one `{"type": "function_call_output", "call_id", "output"}` item per call
///   (`output` a string, or `input_text` / `input_image` items when the result has images);
/// - Anthropic Messages: one `user` message whose content is one `tool_result` block per call
///   (`is_error: true` on failures, image blocks where the tool returned images);
/// - Gemini: one `user` content of `functionResponse` parts (`response.output` on success,
///   `response.error` on failure, images as the response's `inlineData` parts, the call's `id`
///   echoed when it had one).
///
/// The calls' additional contexts (deferred by tools, attached by post-execute policies) follow
/// after all results, one user message each, in call order. An empty turn renders nothing.
///
/// `calls` and `results` pair up by position; a missing result renders as an error naming the
/// gap (never a missing reply, which every provider rejects).
///
/// ```
/// use dsh_tools::ToolError;
/// use dsh_tools::exec::ToolExecutionResult;
/// use dsh_tools_runtime::provider::{CallArguments, Provider, ProviderCall, render_results};
/// use serde_json::json;
///
/// let call = ProviderCall { id: Some("toolu_1".into()), name: "bash".into(), arguments: CallArguments::Json(json!({})) };
/// let failed = ToolExecutionResult::failure(ToolError::msg("no shell here"));
/// let messages = render_results(Provider::Anthropic, &[call], &[failed], None);
/// assert_eq!(messages, [json!({"role": "user", "content": [
///     {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Error: no shell here", "is_error": true}
/// ]})]);
/// ```
pub fn render_results(
    provider: Provider,
    calls: &[ProviderCall],
    results: &[ToolExecutionResult],
    images: Option<&dyn ImageSource>,
) -> Vec<Value> {
    if calls.is_empty() {
        return Vec::new();
    }
    let replies: Vec<Reply<'_>> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| match results.get(i) {
            Some(result) => Reply {
                call,
                is_error: result.is_error(),
                pieces: pieces(result.content(), images),
            },
            None => Reply {
                call,
                is_error: true,
                pieces: vec![Piece::Text(format!(
                    "Error: no result was produced for call {i} ({})",
                    call.name
                ))],
            },
        })
        .collect();
    let mut messages = match provider {
        Provider::OpenAiChat => chat(&replies),
        Provider::OpenAiResponses => responses(&replies),
        Provider::Anthropic => vec![anthropic(&replies)],
        Provider::Gemini => vec![gemini(&replies)],
    };
    let contexts = results
        .iter()
        .flat_map(ToolExecutionResult::additional_contexts);
    messages.extend(contexts.map(|context| context_message(provider, context, images)));
    messages
}

/// One call's reply, ready to render.
struct Reply<'a> {
    call: &'a ProviderCall,
    is_error: bool,
    pieces: Vec<Piece>,
}

impl Reply<'_> {
    fn id(&self) -> &str {
        self.call.id.as_deref().unwrap_or("")
    }
}

fn chat(replies: &[Reply<'_>]) -> Vec<Value> {
    let mut messages: Vec<Value> = replies
        .iter()
        .map(|reply| {
            json!({"role": "tool", "tool_call_id": reply.id(), "content": joined_text(&reply.pieces)})
        })
        .collect();
    // Tool messages take text only; images follow every tool message (the assistant's calls
    // must all be answered first), each batch introduced by its call.
    let mut parts = Vec::new();
    for reply in replies.iter().filter(|r| has_images(&r.pieces)) {
        let intro = format!(
            "Images returned by tool call {} ({}):",
            reply.id(),
            reply.call.name
        );
        parts.push(json!({"type": "text", "text": intro}));
        parts.extend(reply.pieces.iter().filter_map(chat_image));
    }
    if !parts.is_empty() {
        messages.push(json!({"role": "user", "content": parts}));
    }
    messages
}

fn chat_image(piece: &Piece) -> Option<Value> {
    match piece {
        Piece::Image { media_type, base64 } => Some(
            json!({"type": "image_url", "image_url": {"url": Piece::data_url(media_type, base64)}}),
        ),
        Piece::Text(_) => None,
    }
}

fn chat_parts(pieces: &[Piece]) -> Vec<Value> {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => json!({"type": "text", "text": text}),
            image => chat_image(image).unwrap_or(Value::Null),
        })
        .collect()
}

fn responses(replies: &[Reply<'_>]) -> Vec<Value> {
    replies
        .iter()
        .map(|reply| {
            let output = if has_images(&reply.pieces) {
                Value::Array(responses_parts(&reply.pieces))
            } else {
                Value::String(joined_text(&reply.pieces))
            };
            json!({"type": "function_call_output", "call_id": reply.id(), "output": output})
        })
        .collect()
}

fn responses_parts(pieces: &[Piece]) -> Vec<Value> {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => json!({"type": "input_text", "text": text}),
            Piece::Image { media_type, base64 } => json!({
                "type": "input_image",
                "image_url": Piece::data_url(media_type, base64),
                "detail": "auto",
            }),
        })
        .collect()
}

fn anthropic(replies: &[Reply<'_>]) -> Value {
    let blocks: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), reply.id().into());
            if has_images(&reply.pieces) {
                block.insert("content".into(), anthropic_blocks(&reply.pieces).into());
            } else {
                // Anthropic refuses empty text: an empty result sends no content.
                let text = joined_text(&reply.pieces);
                if !text.is_empty() {
                    block.insert("content".into(), text.into());
                }
            }
            if reply.is_error {
                block.insert("is_error".into(), true.into());
            }
            Value::Object(block)
        })
        .collect();
    json!({"role": "user", "content": blocks})
}

fn anthropic_blocks(pieces: &[Piece]) -> Vec<Value> {
    pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Text(text) if text.is_empty() => None,
            Piece::Text(text) => Some(json!({"type": "text", "text": text})),
            Piece::Image { media_type, base64 }
                if ANTHROPIC_IMAGE_TYPES.contains(&media_type.as_str()) =>
            {
                Some(json!({"type": "image", "source": {
                    "type": "base64", "media_type": media_type, "data": base64,
                }}))
            }
            Piece::Image { media_type, .. } => Some(json!({
                "type": "text",
                "text": format!("[image ({media_type}): Anthropic accepts only JPEG, PNG, GIF and WebP images]"),
            })),
        })
        .collect()
}

fn gemini(replies: &[Reply<'_>]) -> Value {
    let parts: Vec<Value> = replies
        .iter()
        .map(|reply| {
            let mut response = Map::new();
            let text = joined_text(&reply.pieces);
            let key = if reply.is_error { "error" } else { "output" };
            response.insert(key.into(), text.into());
            let mut function = Map::new();
            if let Some(id) = &reply.call.id {
                function.insert("id".into(), id.clone().into());
            }
            function.insert("name".into(), reply.call.name.clone().into());
            function.insert("response".into(), Value::Object(response));
            let inline: Vec<Value> = reply.pieces.iter().filter_map(gemini_inline).collect();
            if !inline.is_empty() {
                function.insert("parts".into(), inline.into());
            }
            json!({"functionResponse": function})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}

fn gemini_inline(piece: &Piece) -> Option<Value> {
    match piece {
        Piece::Image { media_type, base64 } => {
            Some(json!({"inlineData": {"mimeType": media_type, "data": base64}}))
        }
        Piece::Text(_) => None,
    }
}

/// An additional context as the provider's user message.
fn context_message(
    provider: Provider,
    context: &ContextMessage,
    images: Option<&dyn ImageSource>,
) -> Value {
    let pieces = pieces(&context.content, images);
    match provider {
        Provider::OpenAiChat if has_images(&pieces) => {
            json!({"role": "user", "content": chat_parts(&pieces)})
        }
        Provider::OpenAiChat => json!({"role": "user", "content": joined_text(&pieces)}),
        Provider::OpenAiResponses => {
            json!({"type": "message", "role": "user", "content": responses_parts(&pieces)})
        }
        Provider::Anthropic => {
            let mut blocks = anthropic_blocks(&pieces);
            if blocks.is_empty() {
                blocks.push(json!({"type": "text", "text": "(empty context)"}));
            }
            json!({"role": "user", "content": blocks})
        }
        Provider::Gemini => {
            let parts: Vec<Value> = pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => json!({"text": text}),
                    image => gemini_inline(image).unwrap_or(Value::Null),
                })
                .collect();
            json!({"role": "user", "parts": parts})
        }
    }
}
