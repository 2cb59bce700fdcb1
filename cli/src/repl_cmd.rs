//! `repl [--yes]`: type a program, see its output and dispatch log, again.
//!
//! A program ends at a line holding only `.` (or at the end of input); each program runs in a
//! fresh sandbox (nothing survives between runs, as in `run_code`). The prompt is shown only on
//! a terminal.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use clap::Args;

use crate::mcp_flag::McpFlags;
use crate::run_cmd::{CodeHost, result_text};
use crate::{CliError, Language, Report};

/// Arguments of `repl`.
#[derive(Debug, Args)]
pub struct ReplArgs {
    /// Approve tool calls that ask for approval (writes, shell commands).
    #[arg(long)]
    pub yes: bool,
    /// The programs' language (default typescript).
    #[arg(long, value_enum, default_value = "typescript")]
    pub language: Language,
    /// MCP servers whose tools programs can call too (`tools.mcp__s1__<tool>`, …).
    #[command(flatten)]
    pub mcp: McpFlags,
}

/// Reads programs until the end of input; prints each one's output.
pub(super) fn run(args: ReplArgs) -> Result<Report, CliError> {
    let mut host = CodeHost::new(args.yes, &args.mcp, args.language)?;
    let interactive = std::io::stdin().is_terminal();
    let prompt = |first: bool| {
        if interactive {
            eprint!("{}", if first { "dsh> " } else { "...> " });
            let _ = std::io::stderr().flush();
        }
    };
    let mut all_passed = true;
    let mut program = String::new();
    prompt(true);
    let mut lines = std::io::stdin().lock().lines();
    loop {
        let line = lines
            .next()
            .transpose()
            .map_err(|e| CliError::new(format!("<stdin>: cannot read: {e}")))?;
        let end = match &line {
            Some(text) if text.trim() == "." => true,
            Some(text) => {
                program.push_str(text);
                program.push('\n');
                false
            }
            None => true,
        };
        if end && !program.trim().is_empty() {
            let result = host.run(std::mem::take(&mut program));
            all_passed &= !result.is_error();
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", result_text(&result));
            let _ = stdout.flush();
        }
        if line.is_none() {
            break;
        }
        prompt(end);
    }
    Ok(Report {
        output: String::new(),
        passed: all_passed,
    })
}
