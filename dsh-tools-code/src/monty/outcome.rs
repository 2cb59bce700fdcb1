//! How an uncaught Python exception becomes a run outcome: the limits the interpreter enforces
//! get their named kinds, everything else is an `exception` with the traceback (lines in the
//! model's program, the [prelude](super::program::prelude) line subtracted).

use std::time::Duration;

use monty_types::{ExcType, MontyException, StackFrame};

use super::program::PRELUDE_LINES;
use super::session::TOOL_CALL_ERROR;
use crate::runtime::{CodeErrorKind, CodeRunError};

/// What classifying an exception needs to know about the run.
pub(crate) struct Context<'a> {
    /// The messages of the tool failures raised into the program (shown as `ToolCallError`).
    pub(crate) tool_failures: &'a [String],
    /// The message of the call-limit failure.
    pub(crate) call_limit_message: &'a str,
    /// The interpreter-time budget.
    pub(crate) cpu_budget: Duration,
    /// The recursion limit.
    pub(crate) max_recursion_depth: usize,
    /// The memory limit, when the run has one.
    pub(crate) memory_limit_bytes: Option<usize>,
    /// The model's program, as written (tracebacks quote it).
    pub(crate) source: &'a str,
}

/// The outcome of an exception that ended the program.
pub(crate) fn classify(exc: MontyException, context: &Context<'_>) -> CodeRunError {
    let message = exc.message().unwrap_or_default();
    let (kind, text) = match exc.exc_type() {
        ExcType::TimeoutError if message.starts_with("time limit exceeded") => (
            CodeErrorKind::Timeout,
            format!(
                "compute budget exhausted ({}ms of interpreter time)",
                context.cpu_budget.as_millis()
            ),
        ),
        ExcType::MemoryError if message.starts_with("memory limit exceeded") => (
            CodeErrorKind::MemoryLimit,
            memory_message(context.memory_limit_bytes),
        ),
        ExcType::RecursionError if message == "maximum recursion depth exceeded" => (
            CodeErrorKind::StackOverflow,
            format!(
                "recursion limit reached ({} frames)\n{}",
                context.max_recursion_depth,
                render(exc, context.tool_failures, context.source)
            ),
        ),
        ExcType::RuntimeError if message == context.call_limit_message => {
            (CodeErrorKind::CallLimit, message.to_owned())
        }
        _ => (
            CodeErrorKind::Exception,
            render(exc, context.tool_failures, context.source),
        ),
    };
    CodeRunError {
        kind,
        message: text,
    }
}

/// The message of the `memory-limit` outcome.
pub(crate) fn memory_message(limit: Option<usize>) -> String {
    match limit {
        Some(bytes) => format!("memory limit reached ({bytes} bytes)"),
        None => "memory limit reached (an allocation over the in-process cap)".to_owned(),
    }
}

/// The traceback of `exc` as Python prints it, lines counted in and quoted from the model's
/// program `source` (not the code the interpreter ran); a tool failure (the
/// [class](super::session::TOOL_CALL_ERROR) `ToolCallError` is bound to, with a message that is
/// one of `tool_failures`) is named `ToolCallError`.
pub(crate) fn render(exc: MontyException, tool_failures: &[String], source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let shift = |line: u32| line.saturating_sub(u32::from(PRELUDE_LINES)).max(1);
    let frames: Vec<StackFrame> = exc
        .traceback()
        .iter()
        .cloned()
        .map(|mut frame| {
            frame.start.line = shift(frame.start.line);
            frame.end.line = shift(frame.end.line);
            if frame.preview_line.is_some() {
                frame.preview_line =
                    quote(&lines, frame.start.line, frame.end.line).map(Into::into);
            }
            frame
        })
        .collect();
    let exc_type = exc.exc_type();
    let message = exc.message().map(str::to_owned);
    let tool_failure =
        exc_type == TOOL_CALL_ERROR && message.as_ref().is_some_and(|m| tool_failures.contains(m));
    let not_awaited = matches!(exc_type, ExcType::TypeError | ExcType::AttributeError)
        && message.as_ref().is_some_and(|m| m.contains("'coroutine'"));
    let mut text = MontyException::with_traceback(exc_type, message, frames).to_string();
    if not_awaited {
        text.push_str(NOT_AWAITED_HINT);
    }
    if !tool_failure {
        return text;
    }
    let last = text.rfind('\n').map_or(0, |i| i + 1);
    // (The last line is the exception's own; only its type name changes.)
    let class: &'static str = TOOL_CALL_ERROR.into();
    match text[last..].strip_prefix(class) {
        Some(rest) => format!("{}ToolCallError{rest}", &text[..last]),
        None => text,
    }
}

/// What a `'coroutine' object …` error gets appended: the model forgot an `await`.
const NOT_AWAITED_HINT: &str = " (hint: a tool call, or a call of an async function, is used without `await`: without it the value is a pending call, not its result; write `r = await tools.name({...})`)";

/// Lines `start..=end` (1-based) of the program, as a traceback quotes them: one line as it is,
/// several without their common indentation.
fn quote(lines: &[&str], start: u32, end: u32) -> Option<String> {
    let range = lines.get(start as usize - 1..(end as usize).min(lines.len()))?;
    if range.len() <= 1 {
        return range.first().map(|line| (*line).to_owned());
    }
    let indent = range
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let dedented: Vec<&str> = range
        .iter()
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect();
    Some(dedented.join("\n"))
}
