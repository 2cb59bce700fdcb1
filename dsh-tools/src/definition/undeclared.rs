//! The note a call of an open parameter object gets for the keys its schema does not declare.
//!
//! A `#[tool]`'s parameters are closed: an unknown key is refused before the body runs
//! (`docs/CONTRACTS.md`, "Unknown argument keys are refused"). A tool whose schema leaves the
//! object open by saying nothing (`properties` and no `additionalProperties`: imported MCP
//! tools, builder tools) keeps running with such keys — but the model should not believe an
//! invented option took effect, so the result carries a context message naming them. A schema
//! that opens the object on purpose (`additionalProperties: true` or a schema) gets no note.

use serde_json::Value;

use crate::content::{ContentBlock, ContextMessage};
use crate::json::json_quote;

/// The note for the keys of `args` that `parameters` does not declare, when its object is open
/// by default, or `None`.
///
/// ```
/// use dsh_tools::definition::undeclared_keys_note;
/// use serde_json::json;
/// let parameters = json!({"type": "object", "properties": {"pattern": {"type": "string"}}});
/// let note = undeclared_keys_note("grep", &parameters, &json!({"pattern": "x", "cwd": "src"}));
/// assert_eq!(
///     note.unwrap().content[0].as_text(),
///     Some("Note: \"cwd\" is not a parameter of grep, so grep may have ignored it (its parameters are \"pattern\").")
/// );
/// assert!(undeclared_keys_note("grep", &parameters, &json!({"pattern": "x"})).is_none());
/// ```
pub fn undeclared_keys_note(
    tool: &str,
    parameters: &Value,
    args: &Value,
) -> Option<ContextMessage> {
    if !is_open_by_default(parameters) {
        return None;
    }
    let declared = parameters.get("properties")?.as_object()?;
    let undeclared: Vec<String> = args
        .as_object()?
        .keys()
        .filter(|key| !declared.contains_key(*key))
        .map(|key| json_quote(key))
        .collect();
    let (last, first) = undeclared.split_last()?;
    let keys = if first.is_empty() {
        format!("{last} is not a parameter of {tool}, so {tool} may have ignored it")
    } else {
        format!(
            "{} and {last} are not parameters of {tool}, so {tool} may have ignored them",
            first.join(", ")
        )
    };
    let parameters = if declared.is_empty() {
        "it declares none".to_owned()
    } else {
        let names: Vec<String> = declared.keys().map(|key| json_quote(key)).collect();
        format!("its parameters are {}", names.join(", "))
    };
    Some(ContextMessage {
        content: vec![ContentBlock::text(format!("Note: {keys} ({parameters})."))],
        source: None,
    })
}

/// Whether `parameters` is an object schema with `properties` that says nothing of
/// `additionalProperties` (open by default, in JSON Schema's terms).
fn is_open_by_default(parameters: &Value) -> bool {
    parameters.as_object().is_some_and(|schema| {
        !schema.contains_key("additionalProperties")
            && schema.get("properties").is_some_and(Value::is_object)
    })
}

/// The declared parameter names of a schema open by default, else `None` (no call of it can
/// carry an undeclared key unnoticed).
pub(crate) fn declared_if_open(parameters: &Value) -> Option<std::sync::Arc<[String]>> {
    if !is_open_by_default(parameters) {
        return None;
    }
    let declared = parameters.get("properties")?.as_object()?;
    Some(declared.keys().cloned().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(note: Option<ContextMessage>) -> Option<String> {
        note.map(|n| n.content[0].as_text().unwrap_or_default().to_owned())
    }

    #[test]
    fn every_undeclared_key_is_named_once() {
        let parameters = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        assert_eq!(
            text(undeclared_keys_note(
                "t",
                &parameters,
                &json!({"a": 1, "x": 1, "y": 2, "z": 3})
            )),
            Some(
                "Note: \"x\", \"y\" and \"z\" are not parameters of t, so t may have ignored them \
                 (its parameters are \"a\", \"b\")."
                    .to_owned()
            )
        );
        let none = json!({"type": "object", "properties": {}});
        assert_eq!(
            text(undeclared_keys_note("t", &none, &json!({"x": 1}))),
            Some(
                "Note: \"x\" is not a parameter of t, so t may have ignored it (it declares none)."
                    .to_owned()
            )
        );
    }

    #[test]
    fn an_object_open_or_closed_on_purpose_gets_no_note() {
        for additional in [json!(true), json!(false), json!({"type": "string"})] {
            let parameters = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": additional});
            assert_eq!(
                text(undeclared_keys_note("t", &parameters, &json!({"x": 1}))),
                None
            );
        }
        let no_properties = json!({"type": "object"});
        assert_eq!(
            text(undeclared_keys_note("t", &no_properties, &json!({"x": 1}))),
            None
        );
    }
}
