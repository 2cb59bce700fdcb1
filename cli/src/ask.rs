//! The CLI's input service: a tool's questions answered on the terminal when the CLI hosts the
//! tools itself (`call`, `run`, the REPL; `docs/CONTRACTS.md`, "Tools that ask their caller").
//!
//! A form shows its message, asks `answer? [y/N]` (`n` declines), then one line per field of
//! its schema (Enter keeps the default; a required field without one is asked again). Ctrl-C
//! cancels the form and the call. The roots are the working directory. There is no model to
//! sample: a sampling question is refused as not declared, and with no terminal so are forms.

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{AskError, CallerInput, InputKind, InputRequest};
use serde_json::{Map, Value, json};

use crate::terminal::{Answer, Terminal, Turn};

/// Answers on the terminal.
pub(crate) struct TerminalInput;

impl CallerInput for TerminalInput {
    fn can_answer(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => Terminal::get().is_some(),
            InputKind::Roots => true,
            InputKind::Sampling => false,
        }
    }

    fn ask(
        &self,
        _key: &str,
        request: InputRequest,
    ) -> BoxFuture<'static, Result<Value, AskError>> {
        let kind = request.kind;
        Box::pin(async move {
            match (kind, Terminal::get()) {
                (InputKind::Roots, _) => Ok(working_directory()),
                (InputKind::Elicitation, Some(terminal)) => {
                    let params = Arc::new(request.params);
                    let asked = tokio::task::spawn_blocking(move || form(terminal, &params));
                    asked.await.map_err(|e| AskError::Failed {
                        kind,
                        reason: e.to_string(),
                    })
                }
                _ => Err(AskError::NotDeclared(kind)),
            }
        })
    }
}

/// The working directory as the one root.
fn working_directory() -> Value {
    let dir = std::env::current_dir().unwrap_or_default();
    let path = dir.to_string_lossy().replace('\\', "/");
    let slash = if path.starts_with('/') { "" } else { "/" };
    json!({"roots": [{"uri": format!("file://{slash}{path}"), "name": "working directory"}]})
}

/// Asks the form on the terminal (blocking): the elicitation result.
fn form(terminal: &Terminal, params: &Value) -> Value {
    let mut turn = terminal.turn();
    let message = params["message"].as_str().unwrap_or_default();
    eprintln!("dsh-tools: the tool asks: {message}");
    match turn.ask("dsh-tools: answer? [y/N] ") {
        Answer::Line(line) if matches!(line.trim(), "y" | "Y" | "yes") => {}
        Answer::Line(_) => return json!({"action": "decline"}),
        Answer::Interrupted | Answer::End => return json!({"action": "cancel"}),
    }
    let schema = &params["requestedSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        match ask_field(&mut turn, name, field, required.contains(&name.as_str())) {
            Field::Value(value) => {
                content.insert(name.clone(), value);
            }
            Field::Skipped => {}
            Field::Cancelled => return json!({"action": "cancel"}),
        }
    }
    json!({"action": "accept", "content": content})
}

/// What one field's line gave.
enum Field {
    Value(Value),
    Skipped,
    Cancelled,
}

/// Asks one field until its line parses (Enter: the default, or nothing when optional).
fn ask_field(turn: &mut Turn<'_>, name: &str, field: &Value, required: bool) -> Field {
    let kind = field["type"].as_str().unwrap_or("string");
    let default = field.get("default");
    let shown = default.map(|d| format!(" [{d}]")).unwrap_or_default();
    let question = format!("  {name} ({kind}){shown}: ");
    loop {
        let line = match turn.ask(&question) {
            Answer::Line(line) => line,
            Answer::Interrupted | Answer::End => return Field::Cancelled,
        };
        let line = line.trim();
        if line.is_empty() {
            match (default, required) {
                (Some(default), _) => return Field::Value(default.clone()),
                (None, false) => return Field::Skipped,
                (None, true) => {
                    eprintln!("dsh-tools: {name} is required");
                    continue;
                }
            }
        }
        match parse_field(kind, line) {
            Some(value) => return Field::Value(value),
            None => eprintln!("dsh-tools: {name} must be a {kind}"),
        }
    }
}

/// A line as a value of the field's JSON type.
fn parse_field(kind: &str, line: &str) -> Option<Value> {
    match kind {
        "integer" => line.parse::<i64>().ok().map(Value::from),
        "number" => line.parse::<f64>().ok().map(Value::from),
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Some(Value::Bool(true)),
            "n" | "no" | "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "array" => Some(Value::from(
            line.split(',')
                .map(|item| item.trim().to_owned())
                .collect::<Vec<_>>(),
        )),
        _ => Some(Value::from(line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_read_as_the_fields_type() {
        assert_eq!(parse_field("integer", "30"), Some(json!(30)));
        assert_eq!(parse_field("integer", "thirty"), None);
        assert_eq!(parse_field("number", "95.5"), Some(json!(95.5)));
        assert_eq!(parse_field("boolean", "yes"), Some(json!(true)));
        assert_eq!(parse_field("boolean", "maybe"), None);
        assert_eq!(parse_field("array", "a, b"), Some(json!(["a", "b"])));
        assert_eq!(parse_field("string", "Alice"), Some(json!("Alice")));
    }

    #[test]
    fn the_roots_are_the_working_directory() {
        let roots = working_directory();
        let uri = roots["roots"][0]["uri"].as_str().unwrap();
        assert!(uri.starts_with("file:///"), "{uri}");
    }
}
