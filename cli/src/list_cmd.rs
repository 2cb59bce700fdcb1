//! `list [--dialect D]`: the model-facing schemas of every tool linked into the binary.

use clap::Args;
use dsh_tools::{ToolDefinition, ToolSchemaWire};
use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_tool};
use serde_json::Value;

use crate::mcp_flag::{McpFlags, with_imported};
use crate::{CliError, Report};

/// Arguments of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print each tool in a provider's wire shape: `mcp`, `openai-strict`, `gemini` or
    /// `anthropic` (default: `{name, description, parameters}`).
    #[arg(long, value_name = "DIALECT")]
    pub dialect: Option<Dialect>,
    /// MCP servers whose tools are listed too.
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Prints `[{name, description, parameters}, …]` for every collected `#[tool]` (and every
/// imported MCP tool), sorted by name, or the provider wire shapes of the same tools.
pub(super) fn run(args: ListArgs) -> Result<Report, CliError> {
    let mut tools = dsh_tools::collected_tools()
        .map_err(|e| CliError::new(format!("cannot collect the tools: {e}")))?;
    tools.extend(with_imported(&args.mcp)?);
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let document = match args.dialect {
        None => {
            let schemas: Vec<ToolSchemaWire> = tools.iter().map(ToolDefinition::schema).collect();
            serde_json::to_value(schemas)
                .map_err(|e| CliError::new(format!("cannot serialize the tool schemas: {e}")))?
        }
        Some(dialect) => Value::Array(
            tools
                .iter()
                .map(|tool| render_tool(tool, dialect, &DialectOptions::default()).map(|r| r.wire))
                .collect::<Result<_, _>>()
                .map_err(|e| CliError::new(format!("cannot render the tools: {e}")))?,
        ),
    };
    Ok(Report::json(&document, true))
}
