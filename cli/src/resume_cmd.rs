//! `resume [CONTINUATION|-] --approve|--deny [--json] [--suspend] [--yes]`: continue a run that
//! `run --suspend` suspended, in this process, with the decision about its pending calls.
//!
//! The outputs and exit statuses are `run`'s (3 when the run suspends again, with `--suspend`).
//! A continuation that is not one, was altered or truncated, was sealed with another key, or was
//! already resumed is exit status 2 with a one-line reason, and nothing runs.

use clap::{ArgGroup, Args};
use dsh_tools_runtime::code::durable::Decision;

use crate::mcp_flag::McpFlags;
use crate::run_cmd::{CodeHost, Durable, outcome_report};
use crate::store_flag::StoreFlag;
use crate::{CliError, Input, Report};

/// Arguments of `resume`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("decision").required(true).args(["approve", "deny"])))]
pub struct ResumeArgs {
    /// The continuation `run --suspend` printed, or `-` / nothing for stdin.
    pub continuation: Option<String>,
    /// Run the pending calls.
    #[arg(long)]
    pub approve: bool,
    /// Refuse the pending calls: the program sees a `ToolCallError`.
    #[arg(long)]
    pub deny: bool,
    /// Print the whole outcome as JSON instead of the program's output.
    #[arg(long)]
    pub json: bool,
    /// Suspend again at the next call that asks for approval (otherwise it is asked about).
    #[arg(long)]
    pub suspend: bool,
    /// Approve later tool calls that ask for approval (without `--suspend`).
    #[arg(long)]
    pub yes: bool,
    /// The MCP servers the run was started with (the program must see the same tools).
    #[command(flatten)]
    pub mcp: McpFlags,
    /// The store the run was journaled in (`run --store`): it goes on journaling there.
    #[command(flatten)]
    pub store: StoreFlag,
}

/// Resumes the continuation.
pub(super) fn run(args: ResumeArgs) -> Result<Report, CliError> {
    let input = match args.continuation {
        None => Input::Stdin,
        Some(text) if text == "-" => Input::Stdin,
        Some(text) => Input::Inline(text),
    };
    let continuation = input.read_text()?;
    let durability = args.store.durability()?;
    let decision = if args.approve {
        Decision::APPROVE
    } else {
        Decision::Deny
    };
    // The continuation names its language (it is authenticated first; nothing is spent).
    let language = durability
        .language_of(&continuation)
        .map_err(|e| CliError::input(&input, e))?;
    let language = crate::Language::named(&language).ok_or_else(|| {
        CliError::new(format!(
            "the continuation is of a {language} program: this build resumes typescript and python"
        ))
    })?;
    let start = Durable::Resume {
        continuation,
        decision,
        suspend: args.suspend,
    };
    let outcome = CodeHost::new(args.yes, &args.mcp, language)?
        .run_durable(start, &durability)
        .map_err(|e| CliError::input(&input, e))?;
    outcome_report(outcome, args.json)
}
