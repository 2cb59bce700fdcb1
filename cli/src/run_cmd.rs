//! `run [PROGRAM|-] [--language L] [--json] [--yes] [--suspend]`: run a Code Mode program against
//! the example tools — TypeScript in the embedded QuickJS sandbox, Python on the Monty interpreter.
//!
//! Stdout gets what the model would see (the program's printed and returned output); stderr gets
//! a compact dispatch log, one line per tool call. `--json` prints the whole `run_code` result.
//! Ctrl-C cancels the program (its in-flight tools are cancelled too).
//!
//! With `--suspend`, a call that asks for approval suspends the run instead of prompting: the
//! command prints the pending calls and the continuation (with `--json`:
//! `{"suspended": {"continuation": "...", "pending": [...]}}`) and exits with status 3;
//! `dsh-tools resume` continues it (see [`crate::resume_cmd`]). A TypeScript run resumes by
//! replay; a Python run's paused interpreter (paused in its worker process) travels in the
//! continuation.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::PresentationMode;
use dsh_tools_runtime::code::durable::{
    self, ContinuationError, Decision, Durability, OutcomeUnknownPolicy, Resume, RunOutcome,
};
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeEventSink, CodeMode, CodeModeExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::call_cmd::host_registry_in;
use crate::mcp_flag::McpFlags;
use crate::store_flag::StoreFlag;
use crate::{CliError, Input, Language, Report};
use crate::{cards, interrupt};

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program (the body of an async function), or `-` / nothing for stdin.
    pub program: Option<PathBuf>,
    /// The program's language (default: python for a `.py` file, else typescript).
    #[arg(long, value_enum)]
    pub language: Option<Language>,
    /// Print the whole outcome as JSON instead of the program's output.
    #[arg(long)]
    pub json: bool,
    /// Approve tool calls that ask for approval (writes, shell commands).
    #[arg(long)]
    pub yes: bool,
    /// Suspend the run at a call that asks for approval: print its continuation and exit 3.
    #[arg(long)]
    pub suspend: bool,
    /// MCP servers whose tools programs can call too (`tools.mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
    /// The store the run is journaled in as it goes.
    #[command(flatten)]
    pub store: StoreFlag,
}

/// Collects the settled sub-calls for the dispatch log.
#[derive(Default)]
struct DispatchLog(Mutex<Vec<String>>);

impl CodeEventSink for DispatchLog {
    fn append(&self, event: CodeDispatchEvent) {
        let line = match event {
            CodeDispatchEvent::Settled {
                sub_call_id,
                name,
                is_error,
                ..
            } => {
                let status = if is_error { "error" } else { "ok" };
                format!("{sub_call_id} {name} {status}")
            }
            CodeDispatchEvent::Replayed {
                sub_call_id, name, ..
            } => format!("{sub_call_id} {name} replayed"),
            CodeDispatchEvent::Suspended {
                parent_call_id,
                pending,
                ..
            } => format!(
                "{parent_call_id} suspended: {} awaits a decision",
                pending.join(", ")
            ),
            CodeDispatchEvent::Resumed {
                parent_call_id,
                journaled,
                approved,
                denied,
                ..
            } => {
                let decided = approved
                    .iter()
                    .map(|id| format!("{id} approved"))
                    .chain(denied.iter().map(|id| format!("{id} denied")))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("{parent_call_id} resumed: {journaled} journaled calls replay; {decided}")
            }
            _ => return,
        };
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
}

/// The Code Mode host of `run` and `repl`: the example tools in code mode, the runtime of the
/// program language, a dispatch log.
pub(super) struct CodeHost {
    runtime: tokio::runtime::Runtime,
    registry: dsh_tools_runtime::ToolRegistry,
    log: Arc<DispatchLog>,
    runs: usize,
    /// The imported MCP servers (their tools live as long as these).
    _imports: Vec<dsh_tools_runtime::mcp::McpConnection>,
}

impl CodeHost {
    pub(super) fn new(yes: bool, mcp: &McpFlags, language: Language) -> Result<Self, CliError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
        let registry = host_registry_in(PresentationMode::Code, yes)?;
        let log = Arc::new(DispatchLog::default());
        CodeMode::new(language.runtime()?)
            .with_event_sink(log.clone())
            .install(&registry)
            .map_err(|e| CliError::new(format!("cannot install Code Mode: {e}")))?;
        let imports = runtime.block_on(mcp.import(&registry))?;
        Ok(Self {
            runtime,
            registry,
            log,
            runs: 0,
            _imports: imports,
        })
    }

    /// Runs one program (a fresh sandbox each time), prints its dispatch log on stderr, and
    /// returns the `run_code` result. Ctrl-C cancels the program and its in-flight tools.
    pub(super) fn run(&mut self, program: String) -> dsh_tools::exec::ToolExecutionResult {
        self.runs += 1;
        let id = format!("run-{}", self.runs);
        let registry = &self.registry;
        let result = self.runtime.block_on(async {
            let agent = registry.new_scope();
            let mut call = ToolExecutionInput::new(
                id,
                dsh_tools_runtime::code::RUN_CODE_NAME,
                json!({"code": program, "description": "Run a program from the command line"}),
            );
            call.agent = Some(agent.id());
            let cancel = CancellationToken::new();
            call.cancel = cancel.clone();
            let bars = crate::progress::ProgressBars::on_terminal();
            call.progress = bars.as_ref().map(crate::progress::ProgressBars::observer);
            let follow = bars.as_ref().map(|bars| bars.follow(registry));
            let result = interrupt::cancellable(&cancel, registry.execute(call)).await;
            if let Some(follow) = follow {
                follow.dispose();
            }
            drop(bars);
            agent.dispose();
            result
        });
        self.print_log();
        result
    }

    /// Runs a program with suspension enabled, or resumes a continuation; prints the dispatch
    /// log on stderr. Ctrl-C cancels the run.
    pub(crate) fn run_durable(
        &mut self,
        start: Durable,
        durability: &Durability,
    ) -> Result<RunOutcome, ContinuationError> {
        let registry = &self.registry;
        self.runs += 1;
        let id = format!("run-{}", self.runs);
        let outcome = self.runtime.block_on(async {
            let agent = registry.new_scope();
            let cancel = CancellationToken::new();
            let outcome = match start {
                Durable::Program { program, suspend } => {
                    // A journaled run's id is its key in the store: unique.
                    let id = match durability.store() {
                        Some(store) => {
                            let id = fresh_run_id();
                            eprintln!("dsh-tools: run {id} is journaled in the {} store", store.kind());
                            id
                        }
                        None => id,
                    };
                    let mut call = ToolExecutionInput::new(
                        id,
                        dsh_tools_runtime::code::RUN_CODE_NAME,
                        json!({"code": program, "description": "Run a program from the command line"}),
                    );
                    call.agent = Some(agent.id());
                    call.cancel = cancel.clone();
                    let run = async {
                        if suspend {
                            registry.run_code_suspendable(call, durability).await
                        } else {
                            durable::run_code_journaled(registry, call, durability).await
                        }
                    };
                    Ok(interrupt::cancellable(&cancel, run).await)
                }
                Durable::Stored { run, unknown } => {
                    let resume = Resume::new(Decision::Deny)
                        .for_agent(agent.id())
                        .with_cancellation(cancel.clone())
                        .on_outcome_unknown(unknown);
                    let resumed = durable::resume_run(registry, &run, resume, durability);
                    interrupt::cancellable(&cancel, resumed).await
                }
                Durable::Resume {
                    continuation,
                    decision,
                    suspend,
                } => {
                    let mut resume = Resume::new(decision)
                        .for_agent(agent.id())
                        .with_cancellation(cancel.clone());
                    if suspend {
                        resume = resume.suspendable();
                    }
                    let run = registry.resume_code(&continuation, resume, durability);
                    interrupt::cancellable(&cancel, run).await
                }
            };
            agent.dispose();
            outcome
        });
        self.print_log();
        outcome
    }

    fn print_log(&self) {
        let lines = std::mem::take(&mut *self.log.0.lock().unwrap_or_else(PoisonError::into_inner));
        for line in lines {
            eprintln!("dsh-tools: {line}");
        }
    }
}

/// A run id no store has: the time and this process.
fn fresh_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("run-{nanos:x}-{:x}", std::process::id())
}

/// What a durable run starts from.
pub(crate) enum Durable {
    /// A program, run with suspension enabled (or only journaled in the store).
    Program {
        program: String,
        /// Whether a call that asks suspends the run.
        suspend: bool,
    },
    /// A run journaled in the store, resumed by id after its process died.
    Stored {
        run: String,
        /// What a call whose outcome is unknown does: run again, fail, or ask the person.
        unknown: OutcomeUnknownPolicy,
    },
    /// A continuation, resumed with a decision.
    Resume {
        continuation: String,
        decision: Decision,
        /// Whether a later call that asks suspends the run again.
        suspend: bool,
    },
}

/// The report of a completed `run_code` call: what the model would see, or (`json`) the whole
/// result.
pub(crate) fn completed_report(
    result: &dsh_tools::exec::ToolExecutionResult,
    json: bool,
) -> Result<Report, CliError> {
    let output = if json {
        serde_json::to_value(result)
            .map_err(|e| CliError::new(format!("cannot serialize the result: {e}")))?
            .to_string()
    } else {
        result_text(result)
    };
    Ok(Report {
        output,
        passed: !result.is_error(),
        suspended: false,
    })
}

/// The report of a durable run's outcome: completed as above, or suspended (exit status 3).
pub(crate) fn outcome_report(outcome: RunOutcome, json: bool) -> Result<Report, CliError> {
    let (continuation, pending) = match outcome {
        RunOutcome::Completed(result) => return completed_report(&result, json),
        RunOutcome::Suspended {
            continuation,
            pending,
        } => (continuation, pending),
    };
    let output = if json {
        json!({"suspended": {"continuation": continuation, "pending": pending}}).to_string()
    } else {
        let palette = cards::Palette::for_terminal(std::io::stdout().is_terminal());
        let mut text = String::new();
        for call in &pending {
            let reason = call
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            text.push_str(&format!(
                "suspended: {} tools.{} awaits a decision{reason}\n",
                call.id, call.tool
            ));
            text.push_str(&cards::render_call(&call.card, palette));
        }
        text.push_str(&format!(
            "continuation: {continuation}\nresume with: dsh-tools resume CONTINUATION --approve (or --deny)"
        ));
        text
    };
    Ok(Report {
        output,
        passed: true,
        suspended: true,
    })
}

/// The model-facing text of a result.
pub(super) fn result_text(result: &dsh_tools::exec::ToolExecutionResult) -> String {
    result
        .content()
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the program through `run_code`.
pub(super) fn run(args: RunArgs) -> Result<Report, CliError> {
    let language = Language::choose(args.language, args.program.as_deref());
    let input = Input::new(args.program);
    let program = input.read_text()?;
    let mut host = CodeHost::new(args.yes, &args.mcp, language)?;
    if !args.suspend && args.store.store.is_none() {
        return completed_report(&host.run(program), args.json);
    }
    let durability = args.store.durability()?;
    let start = Durable::Program {
        program,
        suspend: args.suspend,
    };
    let outcome = host
        .run_durable(start, &durability)
        .map_err(|e| CliError::new(e.to_string()))?;
    outcome_report(outcome, args.json)
}
