//! Arguments written against an OpenAI strict schema, turned back into canonical ones.

use serde_json::{Map, Value};

use super::refs::{accepts_null, resolve_target};

/// Schema levels [`restore_omitted`] follows.
const MAX_DEPTH: usize = 32;

/// Undoes what OpenAI strict mode makes a model do: where the canonical schema `parameters`
/// declares an optional property that does not accept `null`, a strict model sends `null`
/// instead of leaving it out. This removes those `null`s (objects nested in properties, array
/// items, map values and `$ref`s included; in a union, for an object the first object branch
/// that declares every key and whose `const`/`enum` properties match, for an array the first
/// array branch). Everything else is returned as is.
///
/// Run it on the arguments of a tool sent strict, before executing the call.
///
/// ```
/// use dsh_tools_runtime::dialect::restore_omitted;
/// use serde_json::json;
///
/// // `#[serde(default)] tags: Vec<String>` is optional but not nullable.
/// let parameters = json!({
///     "type": "object",
///     "properties": {
///         "path": {"type": "string"},
///         "tags": {"type": "array", "items": {"type": "string"}},
///         "limit": {"oneOf": [{"type": "integer"}, {"type": "null"}]}
///     },
///     "required": ["path"]
/// });
/// let sent = json!({"path": "a.rs", "tags": null, "limit": null});
/// assert_eq!(restore_omitted(&parameters, &sent), json!({"path": "a.rs", "limit": null}));
///
/// // `Option<Vec<Edit>>` where `Edit` has an optional `note`: the array branch's items.
/// let parameters = json!({
///     "type": "object",
///     "properties": {"edits": {"oneOf": [
///         {"type": "array", "items": {"type": "object", "properties": {"note": {"type": "string"}}}},
///         {"type": "null"}
///     ]}},
///     "required": ["edits"]
/// });
/// let sent = json!({"edits": [{"note": null}, {"note": "x"}]});
/// assert_eq!(restore_omitted(&parameters, &sent), json!({"edits": [{}, {"note": "x"}]}));
/// ```
pub fn restore_omitted(parameters: &Value, args: &Value) -> Value {
    let mut out = args.clone();
    restore(parameters, parameters, &mut out, 0);
    out
}

fn restore(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_target(root, r))
    {
        restore(root, target, value, depth + 1);
    }
    if let Some(Value::Array(branches)) = map.get("allOf") {
        for branch in branches {
            restore(root, branch, value, depth + 1);
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(keyword) else {
            continue;
        };
        let mut branches = branches.iter().map(|b| deref(root, b));
        let chosen = match &*value {
            Value::Object(object) => branches.find(|b| declares(b, object)),
            // `Option<Vec<T>>`: the array branch's items hold the omitted optionals.
            Value::Array(_) => branches.find(|b| describes_arrays(b)),
            _ => None,
        };
        if let Some(branch) = chosen {
            restore(root, branch, value, depth + 1);
        }
    }
    match value {
        Value::Object(object) => {
            let properties = map.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut omitted = Vec::new();
            for (key, member) in object.iter_mut() {
                match properties.and_then(|p| p.get(key)) {
                    Some(property) => {
                        if member.is_null()
                            && !required.contains(&key.as_str())
                            && !accepts_null(deref(root, property))
                        {
                            omitted.push(key.clone());
                        } else {
                            restore(root, property, member, depth + 1);
                        }
                    }
                    None => {
                        if let Some(values) = map.get("additionalProperties") {
                            restore(root, values, member, depth + 1);
                        }
                    }
                }
            }
            for key in omitted {
                object.shift_remove(&key);
            }
        }
        Value::Array(items) => {
            if let Some(schema) = map.get("items") {
                for item in items {
                    restore(root, schema, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The target of a schema that is only a `$ref` (a few hops), else the schema.
fn deref<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match resolve_target(root, reference) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// Whether a union branch is an array schema (`type: "array"` or `items`).
fn describes_arrays(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("array") || branch.get("items").is_some()
}

/// Whether an object branch declares every key of `object`, with matching `const`/`enum`
/// properties (serde tags).
fn declares(branch: &Value, object: &Map<String, Value>) -> bool {
    let Some(properties) = branch.get("properties").and_then(Value::as_object) else {
        return false;
    };
    object
        .iter()
        .all(|(key, member)| match properties.get(key) {
            None => false,
            // A `null` may stand for an omitted optional property.
            Some(_) if member.is_null() => true,
            Some(property) => {
                let constant = property.get("const").is_none_or(|c| c == member);
                let listed = property
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_none_or(|members| members.contains(member));
                constant && listed
            }
        })
}
