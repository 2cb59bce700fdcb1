//! Untrusted text inside Python source: string literals, docstrings and comments.
//!
//! Names, descriptions and enum values come from tool authors and MCP servers. They only ever
//! reach the SDK through these three functions, each of which returns text that cannot end its
//! literal or comment early, cannot start a new line, and holds no character a Python parser
//! (or a reader) could misread: no line terminators, no NUL, no bidirectional or invisible
//! format characters.

use std::fmt::Write as _;

use dsh_tools::json::collapse_js_whitespace;

/// Whether `c` is shown as an escape rather than as itself: control characters, line and
/// paragraph separators, and the invisible format characters (zero-width, bidirectional
/// controls, the BOM) that could make code read differently from how it parses.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{61c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

fn write_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if (c as u32) < 0x1_0000 => {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\U{:08x}", c as u32);
        }
    }
}

/// Appends `s` as a double-quoted Python string literal.
///
/// ```
/// # use dsh_tools_runtime::code::sdk_py::python_string;
/// assert_eq!(python_string("a\"b\\c\n\u{202e}é"), r#""a\"b\\c\n\u202eé""#);
/// ```
pub fn python_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

/// Appends `s` as a double-quoted Python string literal to `out`.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => write_escape(out, c),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The one-line text of a description: whitespace runs collapsed (JavaScript's `\s`, as in
/// the TypeScript SDK), trimmed. Empty when there is nothing to say.
pub(crate) fn one_line(description: &str) -> String {
    collapse_js_whitespace(description)
}

/// A docstring (`"""…"""`) holding `text` on one line: `\` and `"` escaped (so the literal can
/// neither close early nor end in a quote), other unsafe characters as escapes.
pub(crate) fn docstring(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 6);
    out.push_str("\"\"\"");
    for c in one_line(text).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => write_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out.push_str("\"\"\"");
    out
}

/// The text of a `# …` comment: one line, unsafe characters shown as escapes (a comment is
/// never interpreted, so the escapes only need to be readable).
pub(crate) fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in one_line(text).chars() {
        if needs_escape(c) {
            write_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstrings_cannot_close_early() {
        assert_eq!(
            docstring("say \"\"\"hi\"\"\""),
            r#""""say \"\"\"hi\"\"\"""""#
        );
        assert_eq!(docstring("ends with \\"), r#""""ends with \\""""#);
        assert_eq!(docstring(" a\n\n b\u{0}c "), "\"\"\"a b\\x00c\"\"\"");
    }

    #[test]
    fn comments_stay_on_one_line() {
        assert_eq!(comment("a\r\nb\u{85}c\u{2028}d"), "a b\\x85c d");
        assert_eq!(comment("x\u{202e}y\u{feff}"), "x\\u202ey");
    }
}
