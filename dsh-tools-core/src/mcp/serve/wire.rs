//! Our definitions and results in MCP's vocabulary: tool listings and `tools/call` results.

use std::sync::Arc;

use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::{ContentBlock, ToolDefinition};
use rmcp::model::{CallToolResult, ContentBlock as McpBlock, Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// A parameter schema in the MCP dialect: the root `$schema` and `title` are dropped (MCP
/// clients and model providers reject or ignore them); everything else is kept as it is.
///
/// ```
/// use dsh_tools_runtime::mcp::mcp_input_schema;
/// use serde_json::json;
/// let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Args",
///     "type": "object", "properties": {"path": {"type": "string", "title": "Path"}}});
/// assert_eq!(mcp_input_schema(&schema), json!({"type": "object", "properties": {"path": {"type": "string", "title": "Path"}}}).as_object().unwrap().clone());
/// ```
pub fn mcp_input_schema(parameters: &Value) -> Map<String, Value> {
    let mut schema = match parameters {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    schema.shift_remove("$schema");
    schema.shift_remove("title");
    if !schema.contains_key("type") {
        schema.insert("type".into(), Value::String("object".into()));
    }
    schema
}

/// Whether the tool's output schema can be advertised as an MCP `outputSchema` (MCP requires
/// an object root; then `structuredContent` carries the value).
pub(crate) fn declares_object_output(def: &ToolDefinition) -> bool {
    def.output_schema().get("type").and_then(Value::as_str) == Some("object")
}

/// The MCP listing of one definition.
pub(crate) fn mcp_tool(def: &ToolDefinition) -> Tool {
    let mut tool = Tool::default();
    tool.name = def.name().to_owned().into();
    tool.description = Some(def.description().to_owned().into());
    tool.input_schema = Arc::new(mcp_input_schema(def.parameters()));
    if declares_object_output(def) {
        tool.output_schema = Some(Arc::new(mcp_input_schema(def.output_schema())));
    }
    let hints = def.annotations();
    if hints != dsh_tools::ToolAnnotations::default() {
        let mut annotations = ToolAnnotations::default();
        annotations.read_only_hint = hints.read_only_hint;
        annotations.destructive_hint = hints.destructive_hint;
        annotations.idempotent_hint = hints.idempotent_hint;
        annotations.open_world_hint = hints.open_world_hint;
        tool.annotations = Some(annotations);
    }
    tool
}

/// The MCP result of one execution: the model-facing content as MCP blocks, `isError` for
/// failures, and `structuredContent` (the canonical value) for successes of tools with an
/// object output schema.
pub(crate) fn mcp_result(result: &ToolExecutionResult, structured: bool) -> CallToolResult {
    let content = result.content().iter().map(mcp_block).collect();
    match result {
        ToolExecutionResult::Success(success) => {
            let mut out = CallToolResult::success(content);
            if structured {
                out.structured_content = Some(success.value.clone());
            }
            out
        }
        ToolExecutionResult::Failure(_) => CallToolResult::error(content),
    }
}

/// One content block in MCP's vocabulary. Text stays text; a block that already has MCP's
/// shape (e.g. relayed from an imported tool) passes through; anything else is described as
/// text (an image attachment holds no bytes to send).
fn mcp_block(block: &ContentBlock) -> McpBlock {
    match block {
        ContentBlock::Text { text } | ContentBlock::Reasoning { text } => McpBlock::text(text),
        ContentBlock::Image { attachment } => McpBlock::text(format!(
            "[image attachment {} ({}, {}x{})]",
            attachment.attachment_id, attachment.media_type, attachment.width, attachment.height
        )),
        ContentBlock::Unknown(map) => {
            serde_json::from_value::<McpBlock>(Value::Object(map.clone())).unwrap_or_else(|_| {
                McpBlock::text(dsh_tools::json::js_stringify(&Value::Object(map.clone())))
            })
        }
        other => McpBlock::text(
            serde_json::to_value(other)
                .map(|v| dsh_tools::json::js_stringify(&v))
                .unwrap_or_default(),
        ),
    }
}
