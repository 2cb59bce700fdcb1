//! `tokens [TOOLS|-]`: what a tool set costs in the model's context — its native wire
//! definitions against `run_code` plus the SDK section — in tokens.

use std::path::PathBuf;

use clap::Args;
use dsh_tools_runtime::code::cost::tool_set_cost;
use dsh_tools_runtime::code::flavour::{PYTHON, TYPESCRIPT};
use dsh_tools_runtime::tokens::TOKENIZER;
use serde_json::json;

use crate::mcp_flag::McpFlags;
use crate::sdk_cmd::tool_set;
use crate::{CliError, Language, Report};

/// Arguments of `tokens`.
#[derive(Debug, Args)]
pub struct TokensArgs {
    /// The tools, in `sdk render`'s input form: JSON text, a file, or `-` for standard input
    /// (the example tools when left out).
    pub tools: Option<PathBuf>,
    /// MCP servers whose tools join the example tools.
    #[command(flatten)]
    pub mcp: McpFlags,
    /// The SDK's language (default typescript).
    #[arg(long, value_enum, default_value = "typescript")]
    pub language: Language,
}

/// Prints `{"native": N, "sdk": M, "ratio": M/N, "tokenizer": "o200k_base"}`; the ratio is
/// rounded to three decimals.
pub(super) fn run(args: TokensArgs) -> Result<Report, CliError> {
    let tools = tool_set(args.tools, &args.mcp)?;
    let flavour = match args.language {
        Language::Typescript => &TYPESCRIPT,
        Language::Python => &PYTHON,
    };
    let cost = tool_set_cost(&tools, flavour);
    let ratio = (cost.ratio() * 1000.0).round() / 1000.0;
    let document = json!({
        "native": cost.native,
        "sdk": cost.sdk,
        "ratio": ratio,
        "tokenizer": TOKENIZER,
    });
    Ok(Report::json(&document, true))
}
