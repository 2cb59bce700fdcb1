//! The canonical value of an imported MCP tool, its output schema and its model-facing text
//! (`docs/CONTRACTS.md`, "MCP"). Everything here is a pure function of JSON, so the projection can
//! be replayed from a session log.

use serde_json::{Map, Value, json};

/// The reason every image block gives: this bridge keeps no durable image attachments
/// (`docs/CONTRACTS.md`, "MCP").
pub const IMAGE_NOT_ADMITTED: &str = "this result was not admitted to durable model context";

/// The output schema of an imported tool (`docs/CONTRACTS.md`, "MCP"):
/// `{type: object, properties: {content: {type: array, items: {}}, structuredContent: S},
/// required, additionalProperties: false}`, where `S` is the server's advertised output schema
/// when it is inside the supported subset (and then `structuredContent` is required), else `{}`.
///
/// ```
/// use dsh_tools_runtime::mcp::mcp_output_schema;
/// use serde_json::json;
/// let plain = mcp_output_schema(None);
/// assert_eq!(plain["required"], json!(["content"]));
/// let typed = mcp_output_schema(Some(&json!({"type": "object", "properties": {"n": {"type": "number"}}})));
/// assert_eq!(typed["required"], json!(["content", "structuredContent"]));
/// // `$schema` is outside the supported subset: the advertised schema is not used.
/// let zod = mcp_output_schema(Some(&json!({"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"})));
/// assert_eq!(zod["properties"]["structuredContent"], json!({}));
/// ```
pub fn mcp_output_schema(advertised: Option<&Value>) -> Value {
    let supported = advertised.filter(|s| dsh_tools::subset::assert_supported(s).is_ok());
    let required = match supported {
        Some(_) => json!(["content", "structuredContent"]),
        None => json!(["content"]),
    };
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": {}},
            "structuredContent": supported.cloned().unwrap_or_else(|| json!({})),
        },
        "required": required,
        "additionalProperties": false,
    })
}

/// What one MCP `tools/call` result means for the tool (`docs/CONTRACTS.md`, "MCP").
#[derive(Debug, Clone, PartialEq)]
pub enum McpOutcome {
    /// The canonical value `{content, structuredContent?}`.
    Value(Value),
    /// The server reported `isError`: the rendered text of its content.
    Error(String),
}

/// Interprets a raw `tools/call` result (the JSON object the server answered with).
///
/// `content` is kept as the server's blocks (missing → `[]`); `structuredContent` is kept when
/// present; `isError: true` becomes [`McpOutcome::Error`] with the rendered text; the legacy
/// `{toolResult}` shape becomes one text block holding the JSON of `toolResult`.
///
/// ```
/// use dsh_tools_runtime::mcp::{McpOutcome, interpret_call_result};
/// use serde_json::json;
/// let ok = interpret_call_result("t", &json!({"content": [{"type": "text", "text": "hi"}]}));
/// assert_eq!(ok, McpOutcome::Value(json!({"content": [{"type": "text", "text": "hi"}]})));
/// let failed = interpret_call_result("t", &json!({"content": [{"type": "text", "text": "no"}], "isError": true}));
/// assert_eq!(failed, McpOutcome::Error("no".into()));
/// let legacy = interpret_call_result("t", &json!({"toolResult": {"n": 1}}));
/// assert_eq!(legacy, McpOutcome::Value(json!({"content": [{"type": "text", "text": "{\"n\":1}"}]})));
/// ```
pub fn interpret_call_result(raw_name: &str, result: &Value) -> McpOutcome {
    let empty = Map::new();
    let object = result.as_object().unwrap_or(&empty);
    if !object.contains_key("content")
        && let Some(legacy) = object.get("toolResult")
    {
        let text = dsh_tools::json::js_stringify(legacy);
        let text = if text.is_empty() {
            "(no output)".to_owned()
        } else {
            text
        };
        return McpOutcome::Value(json!({"content": [{"type": "text", "text": text}]}));
    }
    let content = match object.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    if object.get("isError") == Some(&Value::Bool(true)) {
        return McpOutcome::Error(render_mcp_content(raw_name, &content));
    }
    let mut value = Map::new();
    value.insert("content".into(), Value::Array(content));
    if let Some(structured) = object.get("structuredContent") {
        value.insert("structuredContent".into(), structured.clone());
    }
    McpOutcome::Value(Value::Object(value))
}

/// The model-facing text of MCP content blocks (`docs/CONTRACTS.md`, "MCP").
///
/// Blocks render in order and the pieces are joined with `\n`: text as is; `resource_link` as
/// `Resource link: <name> (<uri>)`; image, audio, embedded resources, unknown types and
/// non-object blocks as bracketed diagnostics; no piece at all gives
/// `(<raw> returned no model-visible content)`.
///
/// ```
/// use dsh_tools_runtime::mcp::render_mcp_content;
/// use serde_json::json;
/// let text = render_mcp_content("pic", &[
///     json!({"type": "text", "text": "Here it is:"}),
///     json!({"type": "image", "data": "iVBO", "mimeType": "image/png"}),
/// ]);
/// assert_eq!(text, "Here it is:\n[image unavailable: image/png; this result was not admitted to durable model context; raw image data remains available to programmatic callers]");
/// assert_eq!(render_mcp_content("quiet", &[]), "(quiet returned no model-visible content)");
/// ```
pub fn render_mcp_content(raw_name: &str, content: &[Value]) -> String {
    let pieces: Vec<String> = content.iter().filter_map(render_block).collect();
    if pieces.is_empty() {
        return format!("({raw_name} returned no model-visible content)");
    }
    pieces.join("\n")
}

/// One block's text, or `None` for a text block without text.
fn render_block(block: &Value) -> Option<String> {
    let Value::Object(block) = block else {
        return Some("[unsupported MCP content block: expected an object]".to_owned());
    };
    let field = |key: &str| block.get(key).and_then(Value::as_str);
    let media_type = || field("mimeType").unwrap_or("unknown media type");
    let text = match block.get("type").and_then(Value::as_str) {
        Some("text") => return field("text").map(str::to_owned),
        Some("image") => format!(
            "[image unavailable: {}; {IMAGE_NOT_ADMITTED}; raw image data remains available to programmatic callers]",
            media_type()
        ),
        Some("resource_link") => match (field("name"), field("uri")) {
            (Some(name), Some(uri)) => format!("Resource link: {name} ({uri})"),
            _ => "[resource link unavailable: the MCP block is missing its name or URI]".to_owned(),
        },
        Some("audio") => format!(
            "[audio result unsupported: {}; raw audio data remains available to programmatic callers]",
            media_type()
        ),
        Some("resource") => "[embedded resource unsupported; raw resource data remains available to programmatic callers]".to_owned(),
        Some(other) => format!("[unsupported MCP content type: {other}]"),
        None => format!("[unsupported MCP content type: {}]", js_string(block.get("type"))),
    };
    Some(text)
}

/// JavaScript's `String(value)` for a JSON value (`undefined` when absent).
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => dsh_tools::json::js_number_of(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}
