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

use super::check::analyse;
use super::outcome;
use super::session::Namespace;
use crate::code::runtime::{CodeErrorKind, CodeRunError};

/// The name tracebacks give the program.
pub(crate) const SCRIPT_NAME: &str = "program.py";

/// Lines [`prelude`] adds in front of the program.
pub(crate) const PRELUDE_LINES: u16 = 1;

/// The line put in front of every program: `ToolCallError = RuntimeError` (one name per error
/// class, chained). The interpreter cannot define exception classes, so a failed binding call
/// raises the builtin `RuntimeError`, under the names the namespaces give it. The names are
/// validated identifiers (the portable binding names).
pub(crate) fn prelude(namespaces: &[Namespace]) -> String {
    let mut line = String::new();
    for class in namespaces.iter().filter_map(|n| n.error_class.as_deref()) {
        line.push_str(class);
        line.push_str(" = ");
    }
    if line.is_empty() {
        "pass\n".to_owned()
    } else {
        line + "RuntimeError\n"
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
        let mut message = String::from("the program cannot run:");
        for finding in &analysis.findings {
            message.push_str("\n  ");
            message.push_str(&finding.to_string());
        }
        return Err(CodeRunError {
            kind: CodeErrorKind::Exception,
            message,
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
