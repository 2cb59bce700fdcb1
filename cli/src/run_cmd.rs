//! `run [PROGRAM|-] [--language L] [--json] [--yes]`: run a Code Mode program against the
//! example tools — TypeScript in the embedded QuickJS sandbox, Python on the Monty interpreter.
//!
//! Stdout gets what the model would see (the program's printed and returned output); stderr gets
//! a compact dispatch log, one line per tool call. `--json` prints the whole `run_code` result.
//! Ctrl-C cancels the program (its in-flight tools are cancelled too).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Args;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::PresentationMode;
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeEventSink};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::call_cmd::host_registry_in;
use crate::interrupt;
use crate::mcp_flag::McpFlags;
use crate::{CliError, Input, Language, Report};

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
    /// MCP servers whose tools programs can call too (`tools.mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Collects the settled sub-calls for the dispatch log.
#[derive(Default)]
struct DispatchLog(Mutex<Vec<String>>);

impl CodeEventSink for DispatchLog {
    fn append(&self, event: CodeDispatchEvent) {
        if let CodeDispatchEvent::Settled {
            sub_call_id,
            name,
            is_error,
            ..
        } = event
        {
            let status = if is_error { "error" } else { "ok" };
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(format!("{sub_call_id} {name} {status}"));
        }
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
        registry.set_code_runtime(language.runtime()?);
        let log = Arc::new(DispatchLog::default());
        registry.set_code_event_sink(log.clone());
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
            let agent = registry.scope();
            let mut call = ToolExecutionInput::new(
                id,
                dsh_tools_runtime::RUN_CODE_NAME,
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
        let lines = std::mem::take(&mut *self.log.0.lock().unwrap_or_else(PoisonError::into_inner));
        for line in lines {
            eprintln!("dsh-tools: {line}");
        }
        result
    }
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
    let result = CodeHost::new(args.yes, &args.mcp, language)?.run(program);
    let output = if args.json {
        serde_json::to_value(&result)
            .map_err(|e| CliError::new(format!("cannot serialize the result: {e}")))?
            .to_string()
    } else {
        result_text(&result)
    };
    Ok(Report {
        output,
        passed: !result.is_error(),
    })
}
