//! `search QUERY [TOOLS|-] [--limit K]`: the tools of a set that best match a request in plain
//! words (BM25 over names, descriptions and parameters; `dsh_tools_runtime::search`).

use std::path::PathBuf;

use clap::Args;
use dsh_tools_runtime::search::ToolIndex;

use crate::mcp_flag::McpFlags;
use crate::sdk_cmd::tool_set;
use crate::{CliError, Report};

/// Arguments of `search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The request, in plain words.
    pub query: String,
    /// The tools, in `sdk render`'s input form: JSON text, a file, or `-` for standard input
    /// (the example tools when left out).
    pub tools: Option<PathBuf>,
    /// MCP servers whose tools join the example tools.
    #[command(flatten)]
    pub mcp: McpFlags,
    /// How many matches to print at most.
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
}

/// Prints `[{"name": …, "score": …}, …]`, best first (an empty list when nothing matches).
pub(super) fn run(args: SearchArgs) -> Result<Report, CliError> {
    let tools = tool_set(args.tools, &args.mcp)?;
    let index = ToolIndex::new(tools.iter().map(|tool| {
        (
            tool.name.as_str(),
            tool.description.as_str(),
            &tool.parameters,
        )
    }));
    let hits = index.search(&args.query, args.limit);
    let document = serde_json::to_value(&hits)
        .map_err(|e| CliError::new(format!("cannot print the matches: {e}")))?;
    Ok(Report::json(&document, true))
}
