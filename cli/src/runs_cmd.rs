//! `runs list|show ID|resume ID --store URL`: the runs `run --store URL` journaled.
//!
//! `list` prints the unfinished runs, one a line, the id first (then when it began, its
//! language and description). `show ID` prints one run as JSON: its program, how many calls its
//! journal holds, and the calls whose outcome is unknown (a write-ahead intent without a
//! journaled result). `resume ID` continues a run whose process died: journaled calls are not
//! run again; a call whose outcome is unknown fails with `OUTCOME_UNKNOWN` unless
//! `--retry-unknown` says to run it again (with the same idempotency key). The outputs and
//! exit statuses of `resume` are `run`'s.

use std::time::UNIX_EPOCH;

use clap::{Args, Subcommand};
use dsh_tools_runtime::code::durable::OutcomeUnknownPolicy;
use serde_json::{Value, json};

use crate::mcp_flag::McpFlags;
use crate::run_cmd::{CodeHost, Durable, outcome_report};
use crate::store_flag::StoreFlag;
use crate::{CliError, Report};

/// Arguments of `runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: RunsCommand,
    /// The store the runs are journaled in (required).
    #[command(flatten)]
    pub store: StoreFlag,
}

/// A `runs` subcommand.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// The unfinished runs, one a line, the id first.
    List,
    /// One run, as JSON.
    Show {
        /// The run id.
        id: String,
    },
    /// Continue a run whose process died.
    Resume {
        /// The run id.
        id: String,
        /// Run again a call whose outcome is unknown. Without it, a terminal asks whether to;
        /// with no terminal, or with `--yes`, it fails with OUTCOME_UNKNOWN.
        #[arg(long)]
        retry_unknown: bool,
        /// Approve tool calls that ask for approval (not the re-run of a call whose outcome is
        /// unknown: that takes `--retry-unknown`).
        #[arg(long)]
        yes: bool,
        /// Print the whole outcome as JSON instead of the program's output.
        #[arg(long)]
        json: bool,
        /// The MCP servers the run was started with.
        #[command(flatten)]
        mcp: McpFlags,
    },
}

/// Runs `future` to its end on a runtime of its own.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> Result<T, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("runs: {e}")))?;
    Ok(runtime.block_on(future))
}

/// Runs the subcommand.
pub(super) fn run(args: RunsArgs) -> Result<Report, CliError> {
    if args.store.store.is_none() {
        return Err(CliError::new("runs: --store URL is required"));
    }
    let durability = args.store.durability()?;
    let Some(store) = durability.store().cloned() else {
        return Err(CliError::new("runs: --store URL is required"));
    };
    let failed = |e: dsh_tools_store::StoreError| CliError::new(format!("runs: {e}"));
    let output = match args.command {
        RunsCommand::List => {
            let runs = block_on(store.unfinished_runs())?;
            let lines: Vec<String> = runs
                .map_err(failed)?
                .iter()
                .map(|run| {
                    let began = run
                        .created_at
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs());
                    let text = |key: &str| run.meta[key].as_str().unwrap_or("?").to_owned();
                    format!(
                        "{}\t{began}\t{}\t{}",
                        run.id,
                        text("language"),
                        text("description")
                    )
                })
                .collect();
            lines.join("\n")
        }
        RunsCommand::Show { id } => {
            let shown = block_on(async {
                let Some(run) = store.run(&id).await? else {
                    return Ok(None);
                };
                let entries = store.entries(&id).await?;
                let unresolved = store.unresolved_intents(&id).await?;
                Ok(Some((run, entries, unresolved)))
            })?;
            let Some((run, entries, unresolved)) = shown.map_err(failed)? else {
                return Err(CliError::new(format!(
                    "runs: the store has no run \"{id}\""
                )));
            };
            let journaled: Vec<u64> = entries.iter().map(|e| e.index).collect();
            let unknown: Vec<Value> = unresolved
                .iter()
                .filter(|intent| {
                    !journaled
                        .iter()
                        .any(|n| intent.intent.call.ends_with(&format!(":code:{n}")))
                })
                .map(|intent| json!({"call": intent.intent.call, "tool": intent.intent.tool}))
                .collect();
            json!({
                "id": run.id,
                "program": run.meta["program"],
                "language": run.meta["language"],
                "description": run.meta["description"],
                "finished": run.finished.is_some(),
                "journaled": journaled.len(),
                "outcomeUnknown": unknown,
            })
            .to_string()
        }
        RunsCommand::Resume {
            id,
            retry_unknown,
            yes,
            json,
            mcp,
        } => {
            let info = block_on(store.run(&id))?.map_err(failed)?;
            let language = info
                .as_ref()
                .and_then(|run| run.meta["language"].as_str())
                .and_then(crate::Language::named)
                .unwrap_or(crate::Language::Typescript);
            let unknown = if retry_unknown {
                OutcomeUnknownPolicy::Retry
            } else if yes {
                OutcomeUnknownPolicy::Fail
            } else {
                OutcomeUnknownPolicy::Ask
            };
            let start = Durable::Stored {
                run: id.clone(),
                unknown,
            };
            // A store of its own: a server store's connection lives on the runtime that made
            // it, and the one above is gone.
            let durability = args.store.durability()?;
            let outcome = CodeHost::new(yes, &mcp, language)?
                .run_durable(start, &durability)
                .map_err(|e| CliError::new(format!("runs resume {id}: {e}")))?;
            return outcome_report(outcome, json);
        }
    };
    Ok(Report {
        output,
        passed: true,
        suspended: false,
    })
}
