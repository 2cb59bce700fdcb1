//! A fast, allocation-free verdict on REFERENCE §2: is a schema inside the reference subset?
//!
//! The same verdict as `dsh_tools::subset::assert_supported(schema).is_ok()` (the tests check
//! both on the corpus and on one schema per violation kind), without building the violation
//! messages and their paths — it runs once per schema of every SDK emission.

use dsh_tools::json::{is_integer, is_lossless, is_lossless_number, json_equal};
use serde_json::{Map, Value};

/// Whether `schema` lies in the reference subset (the same verdict as `assert_supported`).
pub(crate) fn in_subset(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(node) = node else {
            return false;
        };
        if !node_ok(node, &mut stack) {
            return false;
        }
    }
    true
}

/// The keywords of one node, found in one pass over its keys (no hashed lookups).
#[derive(Default)]
struct Node<'a> {
    ty: Option<&'a Value>,
    one_of: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    items: Option<&'a Value>,
    enumeration: Option<&'a Value>,
    konst: Option<&'a Value>,
}

/// Checks one node and pushes its sub-schemas.
fn node_ok<'a>(map: &'a Map<String, Value>, stack: &mut Vec<&'a Value>) -> bool {
    let mut n = Node::default();
    for (key, value) in map {
        match key.as_str() {
            "type" => n.ty = Some(value),
            "oneOf" => n.one_of = Some(value),
            "properties" => n.properties = Some(value),
            "required" => n.required = Some(value),
            "additionalProperties" => n.additional_properties = Some(value),
            "items" => n.items = Some(value),
            "enum" => n.enumeration = Some(value),
            "const" => n.konst = Some(value),
            "description" | "title" => {
                if !value.is_string() {
                    return false;
                }
            }
            "default" | "examples" => {
                if !is_lossless(value) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    let object_keys =
        n.properties.is_some() || n.required.is_some() || n.additional_properties.is_some();
    let scalar_keys = n.enumeration.is_some() || n.konst.is_some();
    let typed = object_keys || scalar_keys || n.items.is_some();
    match (n.ty, n.one_of) {
        (Some(_), Some(_)) => false,
        (None, None) => !typed,
        (None, Some(branches)) => match branches {
            Value::Array(branches) if branches.len() >= 2 && !typed => {
                stack.extend(branches);
                true
            }
            _ => false,
        },
        (Some(ty), None) => match ty.as_str() {
            Some("object") => n.items.is_none() && !scalar_keys && object_ok(&n, stack),
            Some("array") => {
                stack.extend(n.items);
                !object_keys && !scalar_keys
            }
            Some(scalar @ ("string" | "number" | "integer" | "boolean" | "null")) => {
                !object_keys && n.items.is_none() && scalar_ok(&n, scalar)
            }
            _ => false,
        },
    }
}

fn object_ok<'a>(n: &Node<'a>, stack: &mut Vec<&'a Value>) -> bool {
    let properties = match n.properties {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(_) => return false,
    };
    if let Some(required) = n.required {
        let Value::Array(names) = required else {
            return false;
        };
        for name in names {
            let Value::String(name) = name else {
                return false;
            };
            if !properties.is_some_and(|p| p.contains_key(name)) {
                return false;
            }
        }
    }
    if n.additional_properties.is_some_and(|v| !v.is_boolean()) {
        return false;
    }
    stack.extend(properties.into_iter().flat_map(|p| p.values()));
    true
}

fn scalar_ok(n: &Node<'_>, ty: &str) -> bool {
    let entries = match n.enumeration {
        None => None,
        Some(Value::Array(entries))
            if !entries.is_empty() && entries.iter().all(|e| scalar_matches(ty, e)) =>
        {
            Some(entries)
        }
        Some(_) => return false,
    };
    match n.konst {
        None => true,
        Some(value) if !scalar_matches(ty, value) => false,
        Some(value) => entries.is_none_or(|entries| entries.iter().any(|e| json_equal(e, value))),
    }
}

/// Whether `value` is a valid literal of the scalar type `ty` (§2 rule 12).
fn scalar_matches(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("number", Value::Number(n)) => is_lossless_number(n),
        ("integer", Value::Number(n)) => is_lossless_number(n) && is_integer(n),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::in_subset;
    use dsh_tools::subset::assert_supported;
    use serde_json::{Value, json};

    /// One schema per rule of §2 (valid and violating), plus the schema corpus: the verdicts of
    /// `in_subset` and `assert_supported` agree on every one.
    #[test]
    fn agrees_with_assert_supported() {
        let negative_zero = Value::Number(serde_json::Number::from_f64(-0.0).unwrap());
        let mut schemas = vec![
            json!({}),
            json!({"description": "x", "title": "t", "default": [1], "examples": [{"a": null}]}),
            json!({"description": 1}),
            json!({"title": false}),
            json!({"default": negative_zero}),
            json!({"format": "uri"}),
            json!({"$schema": "x"}),
            json!(true),
            json!(null),
            json!([]),
            json!({"type": "string", "oneOf": [{}, {}]}),
            json!({"properties": {}}),
            json!({"enum": [1]}),
            json!({"oneOf": [{}, {}]}),
            json!({"oneOf": [{}]}),
            json!({"oneOf": {}}),
            json!({"oneOf": [{}, {"type": "nope"}]}),
            json!({"oneOf": [{}, {}], "enum": [1]}),
            json!({"type": ["string", "null"]}),
            json!({"type": "nope"}),
            json!({"type": 1}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {}}, "required": "a"}),
            json!({"type": "object", "properties": {"a": {}}, "required": [1]}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "items": {}}),
            json!({"type": "object", "enum": [{}]}),
            json!({"type": "array", "items": {"type": "integer"}}),
            json!({"type": "array", "items": [{"type": "integer"}]}),
            json!({"type": "array", "items": {"type": "integer", "format": "x"}}),
            json!({"type": "array", "properties": {}}),
            json!({"type": "array", "const": []}),
            json!({"type": "string", "enum": ["a", "b"], "const": "a"}),
            json!({"type": "string", "enum": ["a", "b"], "const": "c"}),
            json!({"type": "string", "enum": []}),
            json!({"type": "string", "enum": "a"}),
            json!({"type": "string", "enum": ["a", 1]}),
            json!({"type": "integer", "enum": [1, 2.5]}),
            json!({"type": "integer", "const": 1.0}),
            json!({"type": "number", "enum": [1, 1.5], "const": 1.0}),
            json!({"type": "boolean", "const": 0}),
            json!({"type": "null", "const": null}),
            json!({"type": "string", "items": {}}),
            json!({"type": "string", "required": []}),
        ];
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk/schemas");
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            if let Ok(fixture) = serde_json::from_str::<Value>(&text) {
                schemas.push(fixture["parameters"].clone());
                schemas.extend(fixture.get("output").cloned());
            }
        }
        let mut inside = 0;
        for schema in &schemas {
            let expected = assert_supported(schema).is_ok();
            assert_eq!(in_subset(schema), expected, "{schema}");
            inside += usize::from(expected);
        }
        assert!(inside >= 20, "{inside}");
    }
}
