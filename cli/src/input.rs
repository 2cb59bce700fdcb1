//! Where a command reads a document from: a file, standard input (`-` or no argument), or —
//! for JSON — the argument itself.
//!
//! The rule for a JSON argument (`call`, `turn`, `schema check`, `schema validate`,
//! `args validate`, `sdk ts-type`, `sdk render`): an argument whose first non-blank character is
//! `{`, `[` or `"` is JSON text; `-` is standard input; anything else is a file path (write
//! `./{name}` for a file whose name starts with one of those characters). A scalar document (`5`, `true`) comes from a
//! file or standard input. Errors in inline JSON name the line and column of the argument text.
//! (`docs/CONTRACTS.md`, "The command line".)

use std::fmt;
use std::io::{IsTerminal as _, Read as _};
use std::path::PathBuf;

use serde_json::Value;

use crate::CliError;

/// A JSON document named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`, or the argument left out).
    Stdin,
    /// A file.
    File(PathBuf),
    /// JSON text given as the argument itself.
    Inline(String),
}

impl Input {
    /// The input named by an optional `FILE|-` argument.
    pub fn new(arg: Option<PathBuf>) -> Self {
        match arg {
            Some(path) if path.as_os_str() != "-" => Self::File(path),
            _ => Self::Stdin,
        }
    }

    /// The input named by an optional `JSON|FILE|-` argument: JSON text when the argument starts
    /// with `{`, `[` or `"` (after blanks), else as [`Input::new`].
    pub fn json(arg: Option<PathBuf>) -> Self {
        match arg {
            Some(arg) => match arg.to_str() {
                Some(text) if text.trim_start().starts_with(['{', '[', '"']) => {
                    Self::Inline(text.to_owned())
                }
                _ => Self::new(Some(arg)),
            },
            None => Self::Stdin,
        }
    }

    /// Reads and parses the document. Failures name the input and, for JSON syntax errors, the
    /// line and column.
    pub fn read_json(&self) -> Result<Value, CliError> {
        let bytes = self.read_bytes()?;
        serde_json::from_slice(&bytes).map_err(|e| CliError::input(self, syntax_error(&e)))
    }

    /// Reads the input as UTF-8 text (a program).
    pub fn read_text(&self) -> Result<String, CliError> {
        String::from_utf8(self.read_bytes()?)
            .map_err(|e| CliError::input(self, format!("not UTF-8 text: {e}")))
    }

    fn read_bytes(&self) -> Result<Vec<u8>, CliError> {
        match self {
            Self::Stdin => {
                if std::io::stdin().is_terminal() {
                    // Otherwise a person who left the argument out sees nothing happen.
                    eprintln!("dsh-tools: reading standard input; end it with Ctrl-D");
                }
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
            }
            Self::File(path) => std::fs::read(path),
            Self::Inline(text) => Ok(text.as_bytes().to_vec()),
        }
        .map_err(|e| CliError::input(self, format!("cannot read: {e}")))
    }
}

/// Names the input in messages: the path as given, `<stdin>`, or `<argument>`.
impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdin => f.write_str("<stdin>"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Inline(_) => f.write_str("<argument>"),
        }
    }
}

/// `invalid JSON at line 3, column 5: expected value` (serde_json puts the position last).
fn syntax_error(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let reason = message.strip_suffix(&position).unwrap_or(&message);
    format!(
        "invalid JSON at line {}, column {}: {reason}",
        error.line(),
        error.column()
    )
}

/// The inputs of a command that reads two documents; at most one may be standard input.
pub(super) fn two_inputs(first: Input, second: Input) -> Result<(Input, Input), CliError> {
    if first == Input::Stdin && second == Input::Stdin {
        return Err(CliError::input(
            &Input::Stdin,
            "standard input can feed only one document: pass the other one as a file",
        ));
    }
    Ok((first, second))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_and_absence_mean_stdin() {
        assert_eq!(Input::new(None), Input::Stdin);
        assert_eq!(Input::new(Some("-".into())), Input::Stdin);
        assert_eq!(
            Input::new(Some("a.json".into())),
            Input::File("a.json".into())
        );
        assert_eq!(Input::Stdin.to_string(), "<stdin>");
    }

    #[test]
    fn json_text_is_told_from_a_path_by_its_first_character() {
        for text in [
            r#"{"path":"README.md"}"#,
            " [1, 2]",
            r#""a string""#,
            "{\n  \"a\": 1\n}",
        ] {
            assert_eq!(Input::json(Some(text.into())), Input::Inline(text.into()));
        }
        assert_eq!(
            Input::json(Some("args.json".into())),
            Input::File("args.json".into())
        );
        assert_eq!(
            Input::json(Some("./{x}.json".into())),
            Input::File("./{x}.json".into())
        );
        assert_eq!(Input::json(Some("-".into())), Input::Stdin);
        assert_eq!(Input::json(None), Input::Stdin);
        // A program is never JSON text.
        assert_eq!(Input::new(Some("{x}".into())), Input::File("{x}".into()));
    }

    #[test]
    fn inline_json_is_parsed_and_its_errors_name_line_and_column() {
        let input = Input::json(Some(r#"{"path": "README.md"}"#.into()));
        assert_eq!(
            input.read_json().unwrap(),
            serde_json::json!({"path": "README.md"})
        );
        let input = Input::json(Some("{\n  \"path\": }".into()));
        assert_eq!(
            input.read_json().unwrap_err().to_string(),
            "<argument>: invalid JSON at line 2, column 11: expected value"
        );
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let error = serde_json::from_str::<Value>("{\n  \"a\":\n    }").unwrap_err();
        assert_eq!(
            syntax_error(&error),
            "invalid JSON at line 3, column 5: expected value"
        );
        let error = serde_json::from_str::<Value>("").unwrap_err();
        assert_eq!(
            syntax_error(&error),
            "invalid JSON at line 1, column 0: EOF while parsing a value"
        );
    }
}
