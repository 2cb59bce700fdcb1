//! From the model's program to the code the interpreter runs.
//!
//! 1. The size limit (`source-limit`).
//! 2. The static check ([`super::check_program`]): any finding fails the run with every finding
//!    listed, before anything runs.
//! 3. `tools[...]` becomes `tools(...)`: the interpreter has no `__getitem__` for host objects,
//!    but calling the host-backed `tools` reaches the host, which answers with the named tool.
//!    Only the two bracket characters change, so every line and column stays the model's.
//! 4. One line is put in front ([`prelude`]), binding the error classes (`ToolCallError`);
//!    tracebacks are shifted back by it ([`super::outcome`]). One line goes after, `None`: the
//!    program is the body of a function, so a last expression statement is not its value.
//! 5. The interpreter parses and compiles (its own errors are `exception`s, lines shifted).

use monty::MontyRun;
use monty_types::CompileOptions;

use dsh_tools::ToolDefinition;

use super::check::{Finding, analyse, analyse_calls};
use super::outcome;
use super::session::{Namespace, TOOL_CALL_ERROR};
use crate::runtime::{CodeErrorKind, CodeRunError};

/// The name tracebacks give the program.
pub(crate) const SCRIPT_NAME: &str = "program.py";

/// Lines [`prelude`] adds in front of the program.
pub(crate) const PRELUDE_LINES: u16 = 1;

/// The line put in front of every program: `ToolCallError = NotADirectoryError` (one name per
/// error class, chained). The interpreter cannot define exception classes, so a failed binding
/// call raises the builtin [`TOOL_CALL_ERROR`], under the names the namespaces give it. The
/// names are validated identifiers (the portable binding names).
pub(crate) fn prelude(namespaces: &[Namespace]) -> String {
    let mut line = String::new();
    for class in namespaces.iter().filter_map(|n| n.error_class.as_deref()) {
        line.push_str(class);
        line.push_str(" = ");
    }
    if line.is_empty() {
        "pass\n".to_owned()
    } else {
        let class: &'static str = TOOL_CALL_ERROR.into();
        format!("{line}{class}\n")
    }
}

/// A program ready to start.
pub(crate) fn prepare(
    program: &str,
    namespaces: &[Namespace],
    max_source_bytes: usize,
) -> Result<MontyRun, CodeRunError> {
    if program.len() > max_source_bytes {
        return Err(CodeRunError {
            kind: CodeErrorKind::SourceLimit,
            message: format!(
                "program source is {} bytes, over the {max_source_bytes}-byte limit",
                program.len()
            ),
        });
    }
    let listed: Vec<(&str, &[String])> = namespaces
        .iter()
        .map(|n| (n.global.as_str(), n.functions.as_slice()))
        .collect();
    let analysis = analyse(program, &listed);
    if !analysis.findings.is_empty() {
        return Err(CodeRunError {
            kind: CodeErrorKind::Exception,
            message: cannot_run(&analysis.findings),
        });
    }
    let mut source = prelude(namespaces);
    let mut bytes = program.as_bytes().to_vec();
    for (open, close) in analysis.subscripts {
        bytes[open] = b'(';
        bytes[close] = b')';
    }
    // Only ASCII bytes were swapped for ASCII bytes.
    source.push_str(&String::from_utf8_lossy(&bytes));
    source.push_str("\nNone\n");
    let inputs = namespaces.iter().map(|n| n.global.clone()).collect();
    MontyRun::new(source, SCRIPT_NAME, inputs, CompileOptions::default()).map_err(|exc| {
        CodeRunError {
            kind: CodeErrorKind::Exception,
            message: outcome::render(exc, &[], program),
        }
    })
}

/// The message of a program with findings: `the program cannot run:` and one line each.
fn cannot_run(findings: &[Finding]) -> String {
    let mut message = String::from("the program cannot run:");
    for finding in findings {
        message.push_str("\n  ");
        message.push_str(&finding.to_string());
    }
    message
}

/// The static check of a `run_code` program against the run's tools (`tools`, and tool
/// search's `$search` / `$describe`), their calls' constant arguments included: the message of
/// the run's failure (kind `exception`, as the runtime's own check), `None` when nothing is
/// found. A program over the default source limit is left to the runtime.
pub(crate) fn check_run(program: &str, tools: &[ToolDefinition]) -> Option<String> {
    if program.len() > super::DEFAULT_MAX_SOURCE_BYTES {
        return None;
    }
    let mut names: Vec<String> = tools.iter().map(|def| def.name().to_owned()).collect();
    names.extend([crate::texts::SEARCH, crate::texts::DESCRIBE].map(str::to_owned));
    let findings = analyse_calls(program, &[("tools", &names)], tools).findings;
    (!findings.is_empty()).then(|| cannot_run(&findings))
}
