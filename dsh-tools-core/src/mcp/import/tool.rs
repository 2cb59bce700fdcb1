//! One listed MCP tool as a raw [`ToolDefinition`] (`docs/CONTRACTS.md`, "MCP").

use std::sync::Arc;

use dsh_tools::{ContentBlock, DefinitionError, ToolAnnotations, ToolDefinition, ToolError};
use serde_json::{Map, Value};

use super::call::CallLink;
use crate::mcp::render::{
    McpOutcome, interpret_call_result, mcp_output_schema, render_mcp_content,
};

/// What the sync knows about one listed tool.
pub(crate) struct RemoteTool {
    pub(crate) public_name: String,
    pub(crate) raw_name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) task_required: bool,
}

impl RemoteTool {
    /// Reads the fields the bridge uses from an rmcp tool.
    pub(crate) fn from_listing(
        server: &str,
        tool: &rmcp::model::Tool,
        task_required: bool,
    ) -> Self {
        let raw_name = tool.name.to_string();
        let annotations = tool
            .annotations
            .as_ref()
            .map(|a| ToolAnnotations {
                read_only_hint: a.read_only_hint,
                destructive_hint: a.destructive_hint,
                idempotent_hint: a.idempotent_hint,
                open_world_hint: a.open_world_hint,
            })
            .unwrap_or_default();
        Self {
            public_name: crate::mcp::public_tool_name(server, &raw_name),
            description: tool.description.as_deref().unwrap_or("").to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
            annotations,
            task_required,
            raw_name,
        }
    }

    /// The raw definition: the server's input schema verbatim, the output schema and the
    /// renderer of `docs/CONTRACTS.md`, "MCP", and a body that calls the server.
    pub(crate) fn definition(
        &self,
        link: Arc<CallLink>,
    ) -> Result<ToolDefinition, DefinitionError> {
        let raw = Arc::<str>::from(self.raw_name.as_str());
        let render_raw = Arc::clone(&raw);
        let task_required = self.task_required;
        ToolDefinition::builder(self.public_name.clone())
            .description(self.description.clone())
            .raw_parameters(self.input_schema.clone())
            .output_json(mcp_output_schema(self.output_schema.as_ref()))
            .annotations(self.annotations)
            .render(move |_args, value| {
                let content = value
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                vec![ContentBlock::text(render_mcp_content(&render_raw, content))]
            })
            .execute(move |args, ctx| {
                let link = Arc::clone(&link);
                let raw = Arc::clone(&raw);
                async move {
                    if task_required {
                        return Err(ToolError::msg(format!(
                            "Tool \"{raw}\" requires task-based execution, which this bridge does not support"
                        )));
                    }
                    let arguments = match &*args {
                        Value::Object(map) => map.clone(),
                        _ => Map::new(),
                    };
                    let result = link.call(&raw, arguments, &ctx).await?;
                    match interpret_call_result(&raw, &result) {
                        McpOutcome::Value(value) => Ok(value),
                        McpOutcome::Error(text) => Err(ToolError::msg(text)),
                    }
                }
            })
            .build()
    }
}
