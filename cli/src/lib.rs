//! The `dsh-tools` command-line host: the example tools (the coding tool pack of
//! `dsh-tools-examples`), Code Mode programs, schemas and MCP, from a terminal or a script.
//!
//! ```text
//! dsh-tools list [--dialect D]                     # the example tools' {name, description, parameters}
//! dsh-tools catalog [--check FILE]                 # the markdown tool catalog (docs/tool-catalog.md)
//! dsh-tools schema check [SCHEMA|-]                # is a JSON schema inside the supported subset?
//! dsh-tools schema validate --schema S [VALUE|-]   # validate a value (paths rooted at `value`)
//! dsh-tools args validate --schema S [ARGS|-]      # validate tool arguments (parameter-root paths)
//! dsh-tools call NAME [ARGS|-] [--json] [--yes]    # run an example tool through the full pipeline
//! dsh-tools sdk [--language L] [ts-type [SCHEMA|-] | py-type [SCHEMA|-] | render [TOOLS|-]]  # the Code Mode SDK
//! dsh-tools run [PROGRAM|-] [--language L] [--json] [--yes] [--suspend]  # run a Code Mode program (QuickJS or Monty)
//! dsh-tools resume [CONTINUATION|-] --approve|--deny [--json] [--suspend]  # continue a suspended run
//! dsh-tools repl [--language L] [--yes]            # programs ending at a `.` line, one by one
//! dsh-tools mcp serve [--http ADDR] [--yes] [--mode native|code|both] [--language L]  # the example tools as an MCP server
//! dsh-tools turn --provider P [RESPONSE|-] [--yes] # run a provider response's tool calls, print the reply
//! ```
//!
//! `list`, `call`, `run`, `sdk`, `repl` and `turn` (and `mcp serve`) take `--mcp "COMMAND ARGS"`,
//! repeatable: each starts a stdio MCP server and imports its tools as `mcp__s1__<tool>`,
//! `mcp__s2__<tool>`, … (see [`McpFlags`]).
//!
//! Outside a terminal every command prints exactly one compact JSON document (and a newline) on
//! stdout (`sdk` prints TypeScript, `run` the program's output). The exit
//! status is [`exit::OK`] (0) when the input is valid, [`exit::INVALID`] (1) when it is not,
//! [`exit::SUSPENDED`] (3) when a `run --suspend` or `resume --suspend` run suspended, and
//! [`exit::BAD_INPUT`] (2) when an input cannot be read or parsed, with a single
//! `dsh-tools: <input>: <reason>` line on stderr. A JSON input is JSON text when the argument
//! starts with `{`, `[` or `"`, standard input when it is `-` or left out, and a file otherwise
//! (see [`Input::json`]).
//!
//! On a terminal the commands a person uses interactively speak to them: `call` shows the call's
//! cards (unless `--json`), approval prompts show the card and take `y`, `n` or `a`, `repl` edits
//! programs with history, and Ctrl-C cancels a running program or call. One module owns the
//! terminal's input, so the REPL and the prompts take turns instead of competing for keys.
//!
//! Programs are TypeScript (run in QuickJS) or Python (run on the Monty interpreter, in worker
//! processes of this same binary): `--language typescript|python`, or a `.py` program file
//! ([`Language`]).
//!
//! Each command lives in a module of its own exposing its clap arguments and a
//! `run(args) -> Result<Report, CliError>`; a new command is one more module and one more
//! [`Command`] variant.

// The example tools register themselves through `inventory`: link their crate even though no
// item of it is named here.
extern crate dsh_tools_examples as _;

mod approval;
mod ask;
mod call_cmd;
mod cards;
mod catalog_cmd;
mod durability;
mod http_limits_flag;
mod input;
mod interrupt;
mod language;
mod list_cmd;
mod logging;
mod mcp_auth;
mod mcp_cmd;
mod mcp_flag;
mod mcp_login;
mod mcp_remote;
mod mcp_tasks;
mod presentation_flag;
mod progress;
mod repl_cmd;
mod resume_cmd;
mod run_cmd;
mod runs_cmd;
mod schema_cmd;
mod sdk_cmd;
mod search_cmd;
mod store_flag;
mod terminal;
mod tokens_cmd;
mod turn_cmd;

use std::fmt;
use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};

pub use call_cmd::{CallArgs, host_registry, host_registry_in};
pub use catalog_cmd::{CatalogArgs, example_catalog};
pub use http_limits_flag::HttpLimitFlags;
pub use input::Input;
pub use language::{Language, WORKER_ARGUMENT};
pub use list_cmd::ListArgs;
pub use mcp_cmd::{McpArgs, McpCommand, McpLoginArgs, McpServeArgs};
pub use mcp_flag::{McpFlags, split_command};
pub use presentation_flag::{PresentationFlags, ServeMode};
pub use repl_cmd::ReplArgs;
pub use resume_cmd::ResumeArgs;
pub use run_cmd::RunArgs;
pub use runs_cmd::RunsArgs;
pub use schema_cmd::{
    ArgsCommand, ArgsValidateArgs, SchemaCheckArgs, SchemaCommand, SchemaValidateArgs,
};
pub use sdk_cmd::{SdkArgs, SdkCommand};
pub use search_cmd::SearchArgs;
pub use store_flag::StoreFlag;
pub use tokens_cmd::TokensArgs;
pub use turn_cmd::TurnArgs;

/// The exit statuses of every command.
pub mod exit {
    /// The input is valid (or the command succeeded).
    pub const OK: u8 = 0;
    /// The input was read and is invalid.
    pub const INVALID: u8 = 1;
    /// An input could not be read or parsed (or a schema is unusable, or a continuation is
    /// refused).
    pub const BAD_INPUT: u8 = 2;
    /// The run suspended at a call awaiting approval (`run --suspend`, `resume --suspend`).
    pub const SUSPENDED: u8 = 3;
}

/// `dsh-tools`: inspect the example tools and check schemas, values and tool arguments.
#[derive(Debug, Parser)]
#[command(name = "dsh-tools", version)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check JSON schemas and validate values against them.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Validate tool arguments against a parameter schema.
    #[command(subcommand)]
    Args(ArgsCommand),
    /// Print the example tools' model-facing schemas, sorted by name.
    List(ListArgs),
    /// Print the markdown catalog of the example tools, or check a committed copy.
    Catalog(CatalogArgs),
    /// Run an example tool through the full pipeline and print its result.
    Call(CallArgs),
    /// Print the Code Mode SDK (TypeScript or Python) of the example tools, of one schema, or of a list.
    Sdk(SdkArgs),
    /// Count the tokens of a tool set: native definitions against `run_code` plus the SDK.
    Tokens(TokensArgs),
    /// Find the tools of a set that best match a request in plain words.
    Search(SearchArgs),
    /// Run a Code Mode program (TypeScript in QuickJS, Python on Monty) against the example tools.
    Run(RunArgs),
    /// Continue a run that `run --suspend` suspended, approving or denying its pending calls.
    Resume(ResumeArgs),
    /// The runs journaled in a store (`run --store`): list the unfinished ones, show one, or
    /// resume one whose process died.
    Runs(RunsArgs),
    /// Type programs (each ending at a line holding only `.`) and see their output, again.
    Repl(ReplArgs),
    /// The MCP bridge: serve the example tools as an MCP server.
    Mcp(Box<McpArgs>),
    /// Run the tool calls of a provider response; print the messages to send back.
    Turn(TurnArgs),
}

impl Command {
    /// Runs the command.
    pub fn run(self) -> Result<Report, CliError> {
        match self {
            Self::Schema(command) => command.run(),
            Self::Args(command) => command.run(),
            Self::List(args) => list_cmd::run(args),
            Self::Catalog(args) => catalog_cmd::run(args),
            Self::Call(args) => call_cmd::run(args),
            Self::Sdk(args) => sdk_cmd::run(args),
            Self::Tokens(args) => tokens_cmd::run(args),
            Self::Search(args) => search_cmd::run(args),
            Self::Run(args) => run_cmd::run(args),
            Self::Resume(args) => resume_cmd::run(args),
            Self::Runs(args) => runs_cmd::run(args),
            Self::Repl(args) => repl_cmd::run(args),
            Self::Mcp(args) => mcp_cmd::run(*args),
            Self::Turn(args) => turn_cmd::run(args),
        }
    }
}

/// What a command prints on stdout, and whether it reports success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The document, without its trailing newline.
    pub output: String,
    /// `false` when the input was invalid (exit status 1).
    pub passed: bool,
    /// The run suspended (exit status 3).
    pub suspended: bool,
}

impl Report {
    /// A compact JSON document.
    pub fn json(document: &Value, passed: bool) -> Self {
        Self {
            output: document.to_string(),
            passed,
            suspended: false,
        }
    }

    /// `{"valid":…,"violations":[…]}`: valid when there are no violations.
    pub fn validity(violations: Vec<String>) -> Self {
        let valid = violations.is_empty();
        Self::json(&json!({"valid": valid, "violations": violations}), valid)
    }

    /// The exit status the report stands for.
    pub fn exit_status(&self) -> u8 {
        if self.suspended {
            exit::SUSPENDED
        } else if self.passed {
            exit::OK
        } else {
            exit::INVALID
        }
    }
}

/// A failure that ends the command with exit status [`exit::BAD_INPUT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    message: String,
}

impl CliError {
    /// A failure concerning one input: `<input>: <reason>`.
    pub fn input(input: &Input, reason: impl fmt::Display) -> Self {
        Self::new(format!("{input}: {reason}"))
    }

    /// A failure with a message of its own.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// The message on one line: line breaks (a JSON key may hold some) are escaped.
impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message.replace('\r', "\\r").replace('\n', "\\n"))
    }
}

impl std::error::Error for CliError {}

/// Parses the process's arguments, runs the command and prints its result; returns the exit
/// status.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A server logs its warnings by default; the other commands only when `RUST_LOG` asks.
    logging::init(if matches!(cli.command, Command::Mcp(_)) {
        "warn"
    } else {
        "off"
    });
    let status = match cli.command.run() {
        Ok(report) => match print(&report.output) {
            Ok(()) => report.exit_status(),
            Err(error) => fail(&CliError::new(format!("<stdout>: cannot write: {error}"))),
        },
        Err(error) => fail(&error),
    };
    ExitCode::from(status)
}

fn print(output: &str) -> std::io::Result<()> {
    if output.is_empty() {
        // `repl` printed each program's output as it went.
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(output.as_bytes())?;
    stdout.write_all(b"\n")?;
    stdout.flush()
}

fn fail(error: &CliError) -> u8 {
    eprintln!("dsh-tools: {error}");
    exit::BAD_INPUT
}
