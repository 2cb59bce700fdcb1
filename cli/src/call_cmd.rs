//! `call NAME [ARGS_FILE|-] [--yes]`: run one example tool through the full pipeline.
//!
//! Tools that can change the machine (those declared `destructive`: `write_file`, `edit_file`,
//! `bash`) go through `ask`: the approval service asks on the terminal (`y/N`); with no terminal
//! the call is refused with the reference's "no approval channel" message; `--yes` approves.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};

use crate::mcp_flag::McpFlags;
use crate::{CliError, Input, Report};

/// Arguments of `call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call (see `dsh-tools list`).
    pub name: String,
    /// The arguments object: a JSON file, or `-` / nothing for standard input.
    pub args: Option<PathBuf>,
    /// Approve every call that asks for approval (for scripting).
    #[arg(long)]
    pub yes: bool,
    /// MCP servers whose tools can be called too (`mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Asks on the terminal; with no terminal there is no channel to a user.
struct TerminalApproval {
    yes: bool,
}

impl ApprovalService for TerminalApproval {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        let yes = self.yes;
        Box::pin(async move {
            if yes {
                return ApprovalOutcome::AllowedOnce;
            }
            if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
                return ApprovalOutcome::Unavailable;
            }
            let question = format!(
                "dsh-tools: allow tool \"{}\"{}? [y/N] ",
                request.tool_name,
                request
                    .reason
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            );
            let answer = tokio::task::spawn_blocking(move || {
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(question.as_bytes());
                let _ = stderr.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|_| line)
            })
            .await;
            match answer {
                Ok(Ok(line)) if matches!(line.trim(), "y" | "Y" | "yes") => {
                    ApprovalOutcome::AllowedOnce
                }
                Ok(Ok(_)) => ApprovalOutcome::Rejected,
                _ => ApprovalOutcome::Cancelled,
            }
        })
    }
}

/// Builds the CLI's registry: every collected tool, the timeout policy, `ask` for tools that
/// can change the machine, and the terminal approval service.
pub fn host_registry(yes: bool) -> Result<ToolRegistry, CliError> {
    host_registry_in(PresentationMode::Native, yes)
}

/// [`host_registry`] in a presentation mode (Code Mode hosts also mount the QuickJS runtime).
pub fn host_registry_in(mode: PresentationMode, yes: bool) -> Result<ToolRegistry, CliError> {
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
    registry.set_approval(Arc::new(TerminalApproval { yes }));
    Ok(registry)
}

/// Executes the tool and prints the result (`{isError, value|error, content, …}`).
pub(super) fn run(args: CallArgs) -> Result<Report, CliError> {
    let arguments = Input::new(args.args).read_json()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    let registry = host_registry(args.yes)?;
    let result = runtime.block_on(async {
        let _imports = args.mcp.import(&registry).await?;
        let agent = registry.scope();
        let mut input = ToolExecutionInput::new("cli-1", args.name, arguments);
        input.agent = Some(agent.id());
        let bars = crate::progress::ProgressBars::on_terminal();
        input.progress = bars.as_ref().map(crate::progress::ProgressBars::observer);
        Ok::<_, CliError>(registry.execute(input).await)
    })?;
    let document = serde_json::to_value(&result)
        .map_err(|e| CliError::new(format!("cannot serialize the result: {e}")))?;
    Ok(Report::json(&document, !result.is_error()))
}
