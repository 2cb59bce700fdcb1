//! `list`: the model-facing schemas of every tool linked into the binary.

use clap::Args;
use dsh_tools::{ToolDefinition, ToolSchemaWire};

use super::{CliError, Report};

/// Arguments of `list` (none yet).
#[derive(Debug, Args)]
pub struct ListArgs {}

/// Prints `[{name, description, parameters}, …]` for every collected `#[tool]`, sorted by name.
pub(super) fn run(_args: ListArgs) -> Result<Report, CliError> {
    let tools = dsh_tools::collected_tools()
        .map_err(|e| CliError::new(format!("cannot collect the tools: {e}")))?;
    let schemas: Vec<ToolSchemaWire> = tools.iter().map(ToolDefinition::schema).collect();
    let document = serde_json::to_value(schemas)
        .map_err(|e| CliError::new(format!("cannot serialize the tool schemas: {e}")))?;
    Ok(Report::json(&document, true))
}
