//! `list`: the model-facing schemas of every tool linked into the binary.

use clap::Args;
use dsh_tools::{ToolDefinition, ToolSchemaWire};

use super::mcp_flag::{McpFlags, with_imported};
use super::{CliError, Report};

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// MCP servers whose tools are listed too.
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Prints `[{name, description, parameters}, …]` for every collected `#[tool]` (and every
/// imported MCP tool), sorted by name.
pub(super) fn run(args: ListArgs) -> Result<Report, CliError> {
    let mut tools = dsh_tools::collected_tools()
        .map_err(|e| CliError::new(format!("cannot collect the tools: {e}")))?;
    tools.extend(with_imported(&args.mcp)?);
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let schemas: Vec<ToolSchemaWire> = tools.iter().map(ToolDefinition::schema).collect();
    let document = serde_json::to_value(schemas)
        .map_err(|e| CliError::new(format!("cannot serialize the tool schemas: {e}")))?;
    Ok(Report::json(&document, true))
}
