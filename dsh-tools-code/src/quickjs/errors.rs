//! Rendering what a program throws (`docs/CONTRACTS.md`, "The QuickJS sandbox"), with positions in
//! the model's own code.

use rquickjs::{Ctx, Value};

use crate::runtime::{CodeErrorKind, CodeRunError};
use crate::strip::WRAPPER_LINES;

use super::bindings::RunState;
use super::convert::js_string;
use super::globals::{Env, SETUP_FILE};

/// The file name of the program in stack traces (`program.ts:<line>:<column>`).
pub(crate) const PROGRAM_FILE: &str = "program.ts";

/// Message of a thrown value nothing can render.
pub(crate) const UNRENDERABLE: &str = "program threw an unrenderable value";

/// Rewrites `program.ts:<line>:<column>` from the wrapped script's lines to the program's.
pub(crate) fn map_positions(text: &str) -> String {
    let marker = format!("{PROGRAM_FILE}:");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&marker) {
        let after = at + marker.len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(line) = rest[..digits].parse::<usize>() {
            out.push_str(&line.saturating_sub(WRAPPER_LINES).max(1).to_string());
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// How far before QuickJS's position of a call its callee's name is looked for: the engine
/// places a call at the last position it recorded, which may be inside the arguments.
const CALLEE_REACH: usize = 4096;

/// `frames` (a stack, wrapped script's positions) with its first `program.ts:<line>:<column>`
/// moved back to where the call of `name` starts in `script`: the `tools` of `tools.name(` (or
/// `name` itself when no identifier comes before it), when the name is found as a whole word at
/// most [`CALLEE_REACH`] bytes before; unchanged otherwise (`tools[name]` with a computed name).
pub(crate) fn place_call(frames: &str, script: &str, name: &str) -> String {
    let marker = format!("{PROGRAM_FILE}:");
    let Some(at) = frames.find(&marker).map(|at| at + marker.len()) else {
        return frames.to_owned();
    };
    let rest = &frames[at..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != ':')
        .unwrap_or(rest.len());
    let mut numbers = rest[..end].split(':').map(str::parse::<usize>);
    let (Some(Ok(line)), Some(Ok(column))) = (numbers.next(), numbers.next()) else {
        return frames.to_owned();
    };
    let Some(line_start) = script
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .try_fold(0usize, |sum, len| sum.checked_add(len))
    else {
        return frames.to_owned();
    };
    let offset = (line_start + column.saturating_sub(1) + name.len()).min(script.len());
    let Some(found) = callee_start(script, offset, name) else {
        return frames.to_owned();
    };
    let line = script[..found].matches('\n').count() + 1;
    let column = found - script[..found].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("{}{line}:{column}{}", &frames[..at], &rest[end..])
}

/// Whether `c` may stand in a JavaScript identifier (the ASCII-and-alphanumeric reading the
/// call placement uses).
pub(super) fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The byte offset where the call of `name` ending before `offset` starts (see [`place_call`]).
fn callee_start(script: &str, offset: usize, name: &str) -> Option<usize> {
    let ident = is_ident_char;
    let floor = offset.saturating_sub(CALLEE_REACH);
    let mut end = offset;
    let found = loop {
        let at = script.get(..end)?.rfind(name)?;
        if at < floor {
            return None;
        }
        let before = script[..at].chars().next_back();
        let after = script[at + name.len()..].chars().next();
        if !before.is_some_and(ident) && !after.is_some_and(ident) {
            break at;
        }
        end = at;
    };
    // `tools.name`, `tools?.name`, `tools["name"]`, `tools['name']`: back to `tools`.
    let head = script[..found]
        .trim_end_matches(['"', '\''])
        .trim_end_matches(['.', '[', '?']);
    let global = head.len() - head.trim_end_matches(ident).len();
    Some(if global > 0 && head.len() < found {
        head.len() - global
    } else {
        found
    })
}

/// A property as a Rust string, `None` when it is not a string or reading it failed.
fn string_property<'js>(env: &Env<'js>, value: &Value<'js>, key: &str) -> Option<String> {
    let object = value.as_object()?;
    match object.get::<_, Value<'js>>(key) {
        Ok(v) => v.as_string().and_then(|s| js_string(env, s).ok()),
        Err(_) => {
            let _ = value.ctx().catch();
            None
        }
    }
}

/// `String(value)`, `None` when that throws.
fn stringify<'js>(env: &Env<'js>, value: &Value<'js>) -> Option<String> {
    match env
        .string
        .call::<_, rquickjs::String<'js>>((value.clone(),))
    {
        Ok(s) => js_string(env, &s).ok(),
        Err(_) => {
            let _ = value.ctx().catch();
            None
        }
    }
}

/// The message of a thrown value (for `tool arguments must be lossless JSON: <message>`).
pub(crate) fn message_of<'js>(env: &Env<'js>, thrown: Value<'js>) -> String {
    if thrown.is_error()
        && let Some(message) = string_property(env, &thrown, "message")
    {
        return message;
    }
    stringify(env, &thrown).unwrap_or_else(|| UNRENDERABLE.to_owned())
}

/// An error as `Name: message` plus its stack (program frames only, model positions); other
/// values as `String(value)`.
pub(crate) fn render<'js>(env: &Env<'js>, thrown: &Value<'js>) -> Option<String> {
    render_naming(env, thrown, None)
}

/// [`render`], with `tool: ` before the message when the error is a failed call of `tool`
/// (`ToolCallError: deploy: <failure>`, as the Python sandbox reports one).
fn render_naming<'js>(env: &Env<'js>, thrown: &Value<'js>, tool: Option<&str>) -> Option<String> {
    if !thrown.is_error() {
        return stringify(env, thrown);
    }
    let name = string_property(env, thrown, "name").unwrap_or_else(|| "Error".to_owned());
    let mut message = string_property(env, thrown, "message").unwrap_or_default();
    if let Some(tool) = tool {
        message = format!("{tool}: {message}");
    }
    let mut out = if message.is_empty() {
        name
    } else {
        format!("{name}: {message}")
    };
    if let Some(stack) = string_property(env, thrown, "stack") {
        for line in stack
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.contains(SETUP_FILE))
        {
            out.push('\n');
            out.push_str(line);
        }
    }
    Some(map_positions(&out))
}

/// Limits named in failure messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budgets {
    pub(crate) memory_limit_bytes: usize,
    pub(crate) max_stack_bytes: usize,
}

/// The failure of a program that threw `thrown` (uncaught).
pub(crate) fn classify<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    budgets: Budgets,
    thrown: Value<'js>,
) -> CodeRunError {
    if state.is_call_limit_error(&thrown) {
        return CodeRunError {
            kind: CodeErrorKind::CallLimit,
            message: state.call_limit_message(),
        };
    }
    if thrown.is_null() {
        // QuickJS throws `null` when it cannot even allocate its out-of-memory error.
        return memory_limit(budgets);
    }
    let Some(env) = state.env() else {
        return CodeRunError {
            kind: CodeErrorKind::Exception,
            message: UNRENDERABLE.to_owned(),
        };
    };
    if thrown.is_error() {
        let name = string_property(&env, &thrown, "name");
        let message = string_property(&env, &thrown, "message");
        match (name.as_deref(), message.as_deref()) {
            (Some("RangeError"), Some("Maximum call stack size exceeded")) => {
                return CodeRunError {
                    kind: CodeErrorKind::StackOverflow,
                    message: format!("stack limit reached ({} bytes)", budgets.max_stack_bytes),
                };
            }
            (Some("InternalError"), Some("out of memory")) => return memory_limit(budgets),
            _ => {}
        }
    }
    let tool = state.tool_of(&thrown);
    let message = render_naming(&env, &thrown, tool.as_deref());
    let _ = ctx.catch();
    CodeRunError {
        kind: CodeErrorKind::Exception,
        message: message.unwrap_or_else(|| UNRENDERABLE.to_owned()),
    }
}

/// The memory-limit failure.
pub(crate) fn memory_limit(budgets: Budgets) -> CodeRunError {
    CodeRunError {
        kind: CodeErrorKind::MemoryLimit,
        message: format!(
            "memory limit reached ({} bytes)",
            budgets.memory_limit_bytes
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::map_positions;

    #[test]
    fn positions_move_to_the_program() {
        assert_eq!(
            map_positions("Error: x\n    at f (program.ts:4:11)\n    at program.ts:2:1"),
            "Error: x\n    at f (program.ts:3:11)\n    at program.ts:1:1"
        );
        assert_eq!(map_positions("program.ts:x"), "program.ts:x");
    }

    #[test]
    fn a_call_is_placed_on_its_callee() {
        use super::place_call;
        let script =
            "(async () => {\nconst r = await tools.tail({ path: p,\n  lines: n * 2 });\n})";
        assert_eq!(
            place_call("    at f (program.ts:3:12)", script, "tail"),
            "    at f (program.ts:2:17)"
        );
        let script = "x;\nawait tools[\"my-tool\"]({ a: b + 1 })";
        assert_eq!(
            place_call("at program.ts:2:30", script, "my-tool"),
            "at program.ts:2:7"
        );
        // A computed name is not in the text: the engine's position stays.
        assert_eq!(
            place_call("at program.ts:2:5", "x;\nawait tools[t]({})", "tail"),
            "at program.ts:2:5"
        );
    }
}
