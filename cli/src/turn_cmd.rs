//! `turn --provider P [RESPONSE|-] [--yes]`: run the tool calls of one provider response against
//! the example tools and print what to send back (`docs/CONTRACTS.md`, "Provider turns").
//! The response is JSON text, a file, or standard input ([`Input::json`]).
//!
//! The output is a JSON array of messages (items) for `openai-chat` and `openai-responses`; for
//! `anthropic` and `gemini` it is the one message, or an array when context messages follow it.
//! Exit status 0 whenever the turn ran (failed calls are in the messages, for the model); 2 when
//! the body is not the provider's shape or two calls share an id.

use std::path::PathBuf;

use clap::Args;
use dsh_tools_runtime::provider::{Provider, ProviderTurn};

use crate::call_cmd::host_registry;
use crate::mcp_flag::McpFlags;
use crate::{CliError, Input, Report};

/// Arguments of `turn`.
#[derive(Debug, Args)]
pub struct TurnArgs {
    /// The API the response comes from: openai-chat, openai-responses, anthropic or gemini.
    #[arg(long, value_parser = parse_provider)]
    pub provider: Provider,
    /// The response body: JSON text, a file, or `-` / nothing for standard input.
    pub response: Option<PathBuf>,
    /// Approve every call that asks for approval (for scripting).
    #[arg(long)]
    pub yes: bool,
    /// MCP servers whose tools can be called too (`mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
}

fn parse_provider(name: &str) -> Result<Provider, String> {
    name.parse()
}

/// Runs the turn and prints the messages to send back.
pub(super) fn run(args: TurnArgs) -> Result<Report, CliError> {
    let input = Input::json(args.response);
    let response = input.read_json()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    let registry = host_registry(args.yes)?;
    let outcome = runtime.block_on(async {
        let _imports = args.mcp.import(&registry).await?;
        let agent = registry.new_scope();
        ProviderTurn::new(&registry, args.provider)
            .agent(agent.id())
            .run_response(&response)
            .await
            .map_err(|e| CliError::input(&input, e))
    })?;
    Ok(Report::json(&outcome.to_wire(), true))
}
