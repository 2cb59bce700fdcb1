//! Where a command reads a JSON document from: a file, or standard input (`-` or no argument).

use std::fmt;
use std::io::Read as _;
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
}

impl Input {
    /// The input named by an optional `FILE|-` argument.
    pub fn new(arg: Option<PathBuf>) -> Self {
        match arg {
            Some(path) if path.as_os_str() != "-" => Self::File(path),
            _ => Self::Stdin,
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
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
            }
            Self::File(path) => std::fs::read(path),
        }
        .map_err(|e| CliError::input(self, format!("cannot read: {e}")))
    }
}

/// Names the input in messages: the path as given, or `<stdin>`.
impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdin => f.write_str("<stdin>"),
            Self::File(path) => write!(f, "{}", path.display()),
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
