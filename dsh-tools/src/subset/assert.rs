//! Schema assertion: is a schema inside the supported subset (REFERENCE §2)?

use serde_json::{Map, Value};

use super::{ANNOTATIONS, SCHEMA_TYPES, Vocabulary, allowed_types};
use crate::error::JsonSchemaError;
use crate::json::{is_integer, is_lossless, is_lossless_number, scalar_equal};

/// One pending step of the depth-first walk.
enum Task<'a> {
    /// Check a schema node.
    Enter(&'a Value, String),
    /// After a `oneOf` node's branches: the keywords not allowed beside `oneOf`.
    OneOfTail(&'a Map<String, Value>, String),
    /// After an object node's properties: `required` and `additionalProperties`.
    ObjectTail(&'a Map<String, Value>, String, Vocabulary),
}

/// Every reason the schema lies outside the subset of `vocab`, in the order of REFERENCE §2
/// (depth-first pre-order, tail checks after the node's children). Empty = supported.
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
    let mut violations = Vec::new();
    let mut tasks = vec![Task::Enter(schema, String::from("schema"))];
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(node, path) => enter(node, path, vocab, &mut tasks, &mut violations),
            Task::OneOfTail(node, path) => {
                for key in vocab.typed_keywords() {
                    if node.contains_key(*key) {
                        violations.push(format!("{path}.{key} is not supported beside oneOf"));
                    }
                }
            }
            Task::ObjectTail(node, path, vocab) => object_tail(node, &path, vocab, &mut violations),
        }
    }
    violations
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

fn enter<'a>(
    value: &'a Value,
    path: String,
    vocab: Vocabulary,
    tasks: &mut Vec<Task<'a>>,
    out: &mut Vec<String>,
) {
    let Value::Object(node) = value else {
        out.push(format!("{path} must be a schema object"));
        return;
    };
    for (key, entry) in node {
        if vocab.is_constraint(key) {
            continue;
        }
        if ANNOTATIONS.contains(&key.as_str()) {
            if !is_lossless(entry) {
                out.push(format!(
                    "{path}.{key} annotation must be lossless JSON data"
                ));
            }
            continue;
        }
        out.push(format!(
            "{path}.{key} is not a supported keyword (subset: {} + annotations)",
            vocab.subset_list()
        ));
    }
    for key in ["description", "title"] {
        if node.get(key).is_some_and(|v| !v.is_string()) {
            out.push(format!("{path}.{key} must be a string"));
        }
    }
    let has_type = node.contains_key("type");
    let has_one_of = node.contains_key("oneOf");
    if has_type && has_one_of {
        out.push(format!("{path} cannot declare both type and oneOf"));
        return;
    }
    if !has_type && !has_one_of {
        for key in vocab.typed_keywords() {
            if node.contains_key(*key) {
                out.push(format!("{path}.{key} requires type or oneOf"));
            }
        }
        return;
    }
    if let Some(one_of) = node.get("oneOf") {
        match one_of {
            Value::Array(branches) if branches.len() >= 2 => {
                tasks.push(Task::OneOfTail(node, path.clone()));
                for (index, branch) in branches.iter().enumerate().rev() {
                    tasks.push(Task::Enter(branch, format!("{path}.oneOf[{index}]")));
                }
            }
            _ => {
                out.push(format!(
                    "{path}.oneOf must be an array of at least two schemas"
                ));
                tasks.push(Task::OneOfTail(node, path));
            }
        }
        return;
    }
    let ty = match node.get("type") {
        Some(Value::String(ty)) if SCHEMA_TYPES.contains(&ty.as_str()) => ty.as_str(),
        Some(Value::Array(_)) => {
            out.push(format!(
                "{path}.type must be a single type string (type arrays are not supported)"
            ));
            return;
        }
        _ => {
            out.push(format!(
                "{path}.type must be one of {}",
                SCHEMA_TYPES.join("/")
            ));
            return;
        }
    };
    for key in vocab.typed_keywords() {
        if node.contains_key(*key) && !allowed_types(key).contains(&ty) {
            out.push(format!("{path}.{key} is not supported on type \"{ty}\""));
        }
    }
    match ty {
        "object" => {
            tasks.push(Task::ObjectTail(node, path.clone(), vocab));
            if vocab == Vocabulary::Parameters
                && let Some(values @ Value::Object(_)) = node.get("additionalProperties")
            {
                tasks.push(Task::Enter(values, format!("{path}.additionalProperties")));
            }
            match node.get("properties") {
                None => {}
                Some(Value::Object(properties)) => {
                    let entries: Vec<(&String, &Value)> = properties.iter().collect();
                    for (key, child) in entries.into_iter().rev() {
                        tasks.push(Task::Enter(child, format!("{path}.properties.{key}")));
                    }
                }
                Some(_) => out.push(format!("{path}.properties must be an object of schemas")),
            }
        }
        "array" => {
            if let Some(items) = node.get("items") {
                tasks.push(Task::Enter(items, format!("{path}.items")));
            }
            if vocab == Vocabulary::Parameters {
                check_counts(node, &path, ["minItems", "maxItems"], out);
            }
        }
        scalar => {
            scalar_checks(node, &path, scalar, out);
            if vocab == Vocabulary::Parameters {
                if scalar == "number" || scalar == "integer" {
                    for key in ["minimum", "maximum"] {
                        if node
                            .get(key)
                            .is_some_and(|v| !v.as_number().is_some_and(is_lossless_number))
                        {
                            out.push(format!("{path}.{key} must be a finite number"));
                        }
                    }
                } else if scalar == "string" {
                    check_counts(node, &path, ["minLength", "maxLength"], out);
                }
            }
        }
    }
}

/// `minLength`/`maxLength`/`minItems`/`maxItems` must be non-negative integers (`2.0` counts).
fn check_counts(node: &Map<String, Value>, path: &str, keys: [&str; 2], out: &mut Vec<String>) {
    for key in keys {
        if node.get(key).is_some_and(|v| !is_count(v)) {
            out.push(format!("{path}.{key} must be a non-negative integer"));
        }
    }
}

fn is_count(v: &Value) -> bool {
    v.as_number().is_some_and(|n| {
        is_lossless_number(n) && is_integer(n) && n.as_f64().is_some_and(|f| f >= 0.0)
    })
}

/// Whether `value` is a valid literal of the scalar type `ty` (REFERENCE §2 rule 12).
fn scalar_matches(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("number", Value::Number(n)) => is_lossless_number(n),
        ("integer", Value::Number(n)) => is_lossless_number(n) && is_integer(n),
        _ => false,
    }
}

fn scalar_checks(node: &Map<String, Value>, path: &str, ty: &str, out: &mut Vec<String>) {
    let allowed = node.get("enum");
    let enum_entries = match allowed {
        Some(Value::Array(entries))
            if !entries.is_empty() && entries.iter().all(|e| scalar_matches(ty, e)) =>
        {
            Some(entries)
        }
        _ => None,
    };
    if allowed.is_some() && enum_entries.is_none() {
        out.push(format!(
            "{path}.enum must be a non-empty array of {ty} values"
        ));
    }
    if let Some(declared) = node.get("const") {
        if !scalar_matches(ty, declared) {
            out.push(format!("{path}.const must be a {ty} value"));
        } else if let Some(entries) = enum_entries
            && !entries.iter().any(|e| scalar_equal(e, declared))
        {
            out.push(format!(
                "{path}.const must be one of {path}.enum when both are declared"
            ));
        }
    }
}

fn object_tail(node: &Map<String, Value>, path: &str, vocab: Vocabulary, out: &mut Vec<String>) {
    if let Some(required) = node.get("required") {
        match required.as_array() {
            Some(names) if names.iter().all(Value::is_string) => {
                let declared = node.get("properties").and_then(Value::as_object);
                for name in names.iter().filter_map(Value::as_str) {
                    if !declared.is_some_and(|p| p.contains_key(name)) {
                        out.push(format!(
                            "{path}.required names \"{name}\" which is not in properties"
                        ));
                    }
                }
            }
            _ => out.push(format!("{path}.required must be an array of strings")),
        }
    }
    match (node.get("additionalProperties"), vocab) {
        (None | Some(Value::Bool(_)), _) | (Some(Value::Object(_)), Vocabulary::Parameters) => {}
        (Some(_), Vocabulary::Parameters) => out.push(format!(
            "{path}.additionalProperties must be a boolean or a schema object"
        )),
        (Some(_), Vocabulary::Reference) => {
            out.push(format!("{path}.additionalProperties must be a boolean"));
        }
    }
}
