//! `repl [--yes]`: type a program, see its output and dispatch log, again.
//!
//! A program ends at a line holding only `.` (or at the end of input); each program runs in a
//! fresh sandbox (nothing survives between runs, as in `run_code`).
//!
//! On a terminal the programs are read by the line editor of [`crate::terminal`], which the
//! approval prompts share: a program is edited as one multi-line text, Up recalls earlier ones
//! (the history lives in the user's data directory), Ctrl-C drops the text typed so far or
//! cancels the running program (its in-flight tools too) and comes back to the prompt, and Ctrl-D
//! on an empty prompt leaves. Piped input is read line by line, without prompts.

use std::io::{BufRead as _, Write as _};

use clap::Args;

use crate::mcp_flag::McpFlags;
use crate::run_cmd::{CodeHost, result_text};
use crate::terminal::{ProgramInput, Terminal};
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
    let all_passed = match Terminal::get() {
        Some(terminal) => interactive(&mut host, terminal),
        None => piped(&mut host)?,
    };
    Ok(Report {
        output: String::new(),
        passed: all_passed,
        suspended: false,
    })
}

/// Programs from the line editor until Ctrl-D.
fn interactive(host: &mut CodeHost, terminal: &Terminal) -> bool {
    eprintln!(
        "dsh-tools repl: end a program with a line holding only `.`; Ctrl-C cancels, Ctrl-D leaves."
    );
    let mut all_passed = true;
    loop {
        match terminal.read_program() {
            ProgramInput::Program(program) if program.trim().is_empty() => {}
            ProgramInput::Program(program) => all_passed &= run_one(host, program),
            ProgramInput::Interrupted => {}
            ProgramInput::End => return all_passed,
        }
    }
}

/// Programs from piped standard input, each ending at a `.` line or at the end of input.
fn piped(host: &mut CodeHost) -> Result<bool, CliError> {
    let mut all_passed = true;
    let mut program = String::new();
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
            all_passed &= run_one(host, std::mem::take(&mut program));
        }
        if line.is_none() {
            return Ok(all_passed);
        }
    }
}

/// Runs a program and prints its output; whether it succeeded.
fn run_one(host: &mut CodeHost, program: String) -> bool {
    let result = host.run(program);
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", result_text(&result));
    let _ = stdout.flush();
    !result.is_error()
}
