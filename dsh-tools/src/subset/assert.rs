//! Schema assertion: is a schema inside the supported subset (REFERENCE §2, extended by
//! `docs/CONTRACTS.md`, "Schema vocabulary")? Both the messages and the verdict come from the
//! one walk of [`super::walk`].

use serde_json::Value;

use super::Vocabulary;
use super::walk::{Messages, Verdict, walk};
use crate::error::JsonSchemaError;

/// Every reason the schema lies outside the subset of `vocab`, in the order of REFERENCE §2
/// (depth-first pre-order, tail checks after the node's children; `$ref` cycle checks last).
/// Empty = supported.
///
/// ```
/// use dsh_tools::subset::{unsupported_violations, Vocabulary};
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"a": {"type": "string", "minimum": 1}}, "required": ["b"]});
/// assert_eq!(unsupported_violations(&schema, Vocabulary::Parameters), vec![
///     "schema.properties.a.minimum is not supported on type \"string\"",
///     "schema.required names \"b\" which is not in properties",
/// ]);
/// ```
pub fn unsupported_violations(schema: &Value, vocab: Vocabulary) -> Vec<String> {
    let mut messages = Messages::default();
    walk(schema, vocab, &mut messages);
    messages.0
}

/// Whether `schema` lies in the subset of `vocab`: the verdict of [`assert_supported_in`],
/// without building a message or a path. It allocates nothing for schemas without `$ref` that
/// nest fewer than two dozen pending nodes at a time (patterns are compiled to be checked).
///
/// ```
/// use dsh_tools::subset::{is_supported, Vocabulary};
/// use serde_json::json;
/// assert!(is_supported(&json!({"type": "string", "enum": ["a"]}), Vocabulary::Reference));
/// assert!(!is_supported(&json!({"type": "string", "format": "uri"}), Vocabulary::Reference));
/// assert!(is_supported(&json!({"type": "string", "format": "uri"}), Vocabulary::Parameters));
/// assert!(!is_supported(&json!({"type": "string", "pattern": "(a+)+"}), Vocabulary::Parameters));
/// ```
pub fn is_supported(schema: &Value, vocab: Vocabulary) -> bool {
    let mut verdict = Verdict::default();
    walk(schema, vocab, &mut verdict);
    !verdict.failed
}

/// Asserts that `schema` lies in the [`Vocabulary::Reference`] subset.
///
/// ```
/// use dsh_tools::subset::assert_supported;
/// use serde_json::json;
/// let err = assert_supported(&json!({"type": ["string", "null"], "format": "uri"})).unwrap_err();
/// assert_eq!(err.to_string(), "unsupported JSON schema: schema.format is not a supported keyword \
///     (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations); \
///     schema.type must be a single type string (type arrays are not supported)");
/// ```
pub fn assert_supported(schema: &Value) -> Result<(), JsonSchemaError> {
    assert_supported_in(schema, Vocabulary::Reference)
}

/// Asserts that `schema` lies in the subset of `vocab`.
///
/// ```
/// use dsh_tools::subset::{assert_supported_in, Vocabulary};
/// use serde_json::json;
/// let err = assert_supported_in(&json!({"type": "array", "minItems": -1}), Vocabulary::Parameters).unwrap_err();
/// assert_eq!(err.violations, vec!["schema.minItems must be a non-negative integer"]);
/// let err = assert_supported_in(&json!({"type": "string", "pattern": "(x"}), Vocabulary::Parameters).unwrap_err();
/// assert!(err.violations[0].starts_with("schema.pattern is not a valid ECMAScript regular expression: "));
/// ```
pub fn assert_supported_in(schema: &Value, vocab: Vocabulary) -> Result<(), JsonSchemaError> {
    let violations = unsupported_violations(schema, vocab);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(JsonSchemaError::new(violations))
    }
}

/// Asserts that `schema` lies in the [`Vocabulary::Reference`] subset and, only if it does, that
/// its root declares `type: "object"` (structured outputs are object-rooted).
///
/// ```
/// use dsh_tools::subset::assert_object_schema;
/// use serde_json::json;
/// assert!(assert_object_schema(&json!({"type": "object"})).is_ok());
/// let err = assert_object_schema(&json!({"type": "string"})).unwrap_err();
/// assert_eq!(err.violations, vec!["schema.type must be \"object\" (structured output is object-rooted)"]);
/// ```
pub fn assert_object_schema(schema: &Value) -> Result<(), JsonSchemaError> {
    let mut violations = unsupported_violations(schema, Vocabulary::Reference);
    if violations.is_empty() && schema.get("type").and_then(Value::as_str) != Some("object") {
        violations.push(String::from(
            "schema.type must be \"object\" (structured output is object-rooted)",
        ));
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(JsonSchemaError::new(violations))
    }
}
