//! The `run_code` transport definition (`docs/CONTRACTS.md`, "The run_code tool") and its
//! rendering ("Sub-calls", rule 8).

use dsh_tools::json::render_pretty;
use dsh_tools::present::{ToolCallView, ToolKind};
use dsh_tools::{ContentBlock, ToolDefinition, ToolError};
use serde_json::{Value, json};

use dsh_tools_core::extension::WeakRegistry;

use super::texts::{CODE_PARAMETER_DESCRIPTION, DESCRIPTION_PARAMETER_DESCRIPTION, RUN_CODE_NAME};

/// The wire parameter schema of `run_code` (TypeScript flavour).
pub fn run_code_parameters() -> Value {
    run_code_parameters_for(CODE_PARAMETER_DESCRIPTION)
}

/// The wire parameter schema of `run_code` with the `code` parameter described by
/// `code_description` (see [`Flavour`](super::flavour::Flavour)).
pub fn run_code_parameters_for(code_description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": code_description},
            "description": {"type": "string", "description": DESCRIPTION_PARAMETER_DESCRIPTION}
        },
        "required": ["code", "description"]
    })
}

/// The output schema of `run_code`: `{logs: string[], result?: json}`, closed.
pub fn run_code_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "logs": {"type": "array", "items": {"type": "string"}},
            "result": {}
        },
        "required": ["logs"]
    })
}

/// The model-facing text of a `run_code` value: the logs, then the returned value (strings raw,
/// other values as pretty JSON), or `(run_code completed with no output)`.
pub fn render_run_code(value: &Value) -> String {
    let logs = value["logs"]
        .as_array()
        .map(|logs| {
            logs.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let result = match value.get("result") {
        None => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => render_pretty(other),
    };
    let parts: Vec<&str> = [logs.as_str(), result.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    if parts.is_empty() {
        "(run_code completed with no output)".to_owned()
    } else {
        parts.join("\n")
    }
}

/// Builds the shared transport of one registry. It holds the registry weakly (the registry owns
/// it), and resolves the code runtime when called.
pub(crate) fn run_code_definition(
    registry: WeakRegistry,
    flavour: &super::flavour::Flavour,
) -> Result<ToolDefinition, dsh_tools::DefinitionError> {
    ToolDefinition::builder(RUN_CODE_NAME)
        .description(flavour.run_code_description)
        .parameters_json(run_code_parameters_for(flavour.code_parameter_description))
        .output_json(run_code_output_schema())
        .render(|_args, value| vec![ContentBlock::text(render_run_code(value))])
        .present_call(|args| {
            let title = args["description"].as_str()?.to_owned();
            Some(
                ToolCallView::generic(title)
                    .with_kind(ToolKind::Execute)
                    .with_raw_input(args["code"].clone()),
            )
        })
        .execute(move |args, ctx| {
            let registry = registry.upgrade();
            async move {
                match registry {
                    Some(registry) => super::bridge::run_code(registry, args, ctx).await,
                    None => Err(ToolError::msg("the tool registry was disposed")),
                }
            }
        })
        .build()
}
