//! `call NAME [ARGS] [--json] [--yes]`: run one example tool through the full pipeline.
//!
//! `ARGS` is the arguments object: JSON text (`'{"path":"README.md"}'`), a file, or `-` /
//! nothing for standard input (see [`Input::json`]). When stdout is a terminal the call is shown
//! as cards: the pending card first, then the result card (`--json` prints the result document
//! instead, as without a terminal). Ctrl-C cancels the call.
//!
//! Tools that can change the machine (those declared `destructive`: `write_file`, `edit_file`,
//! `bash`) go through `ask`: the approval service shows the card and asks on the terminal
//! (`y/N/a`); with no terminal the call is refused with the reference's "no approval channel"
//! message; `--yes` approves.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::present::fallback_result_view;
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::approval::TerminalApproval;
use crate::ask::TerminalInput;
use crate::cards::{self, Palette};
use crate::interrupt;
use crate::mcp_flag::McpFlags;
use crate::{CliError, Input, Report};

/// The call id of `call`'s one call.
const CALL_ID: &str = "cli-1";

/// Arguments of `call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call (see `dsh-tools list`).
    pub name: String,
    /// The arguments object: JSON text, a file, or `-` / nothing for standard input.
    pub args: Option<PathBuf>,
    /// Print the result as JSON even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,
    /// Approve every call that asks for approval (for scripting).
    #[arg(long)]
    pub yes: bool,
    /// MCP servers whose tools can be called too (`mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Builds the CLI's registry: every collected tool, the timeout policy, `ask` for tools that
/// can change the machine, and the terminal approval service.
pub fn host_registry(yes: bool) -> Result<ToolRegistry, CliError> {
    host_registry_in(PresentationMode::Native, yes)
}

/// [`host_registry`] in a presentation mode (a Code Mode host then installs Code Mode on it).
pub fn host_registry_in(mode: PresentationMode, yes: bool) -> Result<ToolRegistry, CliError> {
    host_registry_with(mode, TerminalApproval::new(yes))
}

/// [`host_registry_in`] with an approval service of the caller's.
pub(crate) fn host_registry_with(
    mode: PresentationMode,
    approval: TerminalApproval,
) -> Result<ToolRegistry, CliError> {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    registry
        .register_collected()
        .map_err(|e| CliError::new(format!("cannot register the tools: {e}")))?
        .keep();
    registry.install_timeout_policy().keep();
    let lookup = registry.clone();
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            let changes_machine = lookup
                .get(&exec.name, exec.agent)
                .is_some_and(|def| def.annotations().destructive_hint == Some(true));
            async move {
                if changes_machine {
                    PreToolDecision::Ask {
                        reason: Some("it can change files or run commands".into()),
                    }
                } else {
                    next.run().await
                }
            }
        }))
        .keep();
    registry.set_approval(Arc::new(approval));
    // A tool's questions are answered on the terminal.
    registry.set_input_service(Arc::new(TerminalInput));
    Ok(registry)
}

/// Executes the tool and prints the result: cards on a terminal, else the result document
/// (`{isError, value|error, content, …}`).
pub(super) fn run(args: CallArgs) -> Result<Report, CliError> {
    let arguments = Input::json(args.args).read_json()?;
    let stdout_is_terminal = std::io::stdout().is_terminal();
    let show_cards = !args.json && stdout_is_terminal;
    let palette = Palette::for_terminal(stdout_is_terminal);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    let mut approval = TerminalApproval::new(args.yes);
    if show_cards {
        approval = approval.with_card_shown_for(CALL_ID);
    }
    let registry = host_registry_with(PresentationMode::Native, approval)?;
    let (result, definition) = runtime.block_on(async {
        let _imports = args.mcp.import(&registry).await?;
        let agent = registry.new_scope();
        let definition = registry.get(&args.name, Some(agent.id()));
        if show_cards {
            let view = cards::call_view(definition.as_ref(), &args.name, &arguments);
            let card = cards::render_call(&cards::against_current_files(view), palette);
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(card.as_bytes());
            let _ = stdout.flush();
        }
        let cancel = CancellationToken::new();
        let mut input = ToolExecutionInput::new(CALL_ID, args.name, arguments.clone());
        input.agent = Some(agent.id());
        input.cancel = cancel.clone();
        let bars = crate::progress::ProgressBars::on_terminal();
        input.progress = bars.as_ref().map(crate::progress::ProgressBars::observer);
        let result = interrupt::cancellable(&cancel, registry.execute(input)).await;
        drop(bars);
        Ok::<_, CliError>((result, definition))
    })?;
    let passed = !result.is_error();
    if show_cards {
        let durable = result.to_tool_result();
        let view = definition
            .and_then(|def| def.present_result(&arguments, &durable))
            .unwrap_or_else(|| fallback_result_view(&durable));
        let card = cards::render_result(&view, result.is_error(), palette);
        return Ok(Report {
            output: card.trim_end_matches('\n').to_owned(),
            passed,
            suspended: false,
        });
    }
    let document = serde_json::to_value(&result)
        .map_err(|e| CliError::new(format!("cannot serialize the result: {e}")))?;
    Ok(Report::json(&document, passed))
}
