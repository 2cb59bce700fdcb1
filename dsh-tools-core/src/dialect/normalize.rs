//! The shared first pass: any imported schema (draft-04 to 2020-12, OpenAPI 3.0 flavoured)
//! becomes plain JSON Schema 2020-12, the form the MCP and Anthropic renderings send and the
//! OpenAI and Gemini renderers start from.
//!
//! - `$schema` is removed at every level.
//! - OpenAPI `nullable: true` becomes a `null` type: `"type": "string"` → `["string", "null"]`
//!   (and `null` joins an `enum`); a node without `type` that refers elsewhere (`$ref`,
//!   `anyOf`, …) becomes `anyOf: [node, {"type": "null"}]`. `nullable: false` is removed.
//! - draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` become the 2020-12 numbers.
//! - draft-07 tuple `items: [...]` becomes `prefixItems`, and its `additionalItems` becomes
//!   `items` (elsewhere `additionalItems` has no meaning and is removed).
//! - draft-07 `dependencies` splits into `dependentRequired` and `dependentSchemas`.
//!
//! Runs on the depth-bounded copy, so the recursion is bounded.

use serde_json::{Map, Value};

use super::issue::{IssueKind, Issues, child, item};
use super::refs::{LOCATORS, is_annotation};

/// Keywords whose value is an object of schemas.
pub(crate) const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is an array of schemas.
pub(crate) const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is one schema.
pub(crate) const SCHEMA_ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Normalises the schema `value` found at `path`.
pub(crate) fn normalize(value: &Value, path: &str, issues: &mut Issues) -> Value {
    match value {
        Value::Object(map) => Value::Object(normalize_map(map, path, issues)),
        Value::Bool(_) => value.clone(),
        other => {
            issues.push(
                path,
                IssueKind::Degraded,
                format!(
                    "not a schema ({}): replaced with an empty schema",
                    super::refs::type_of(other)
                ),
            );
            Value::Object(Map::new())
        }
    }
}

fn normalize_map(map: &Map<String, Value>, path: &str, issues: &mut Issues) -> Map<String, Value> {
    let tuple = map.get("items").is_some_and(Value::is_array);
    let exclusive = |key: &str| map.get(key) == Some(&Value::Bool(true));
    let mut out = Map::new();
    for (key, value) in map {
        let at = child(path, key);
        match key.as_str() {
            "$schema" | "nullable" => {}
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {}
            "minimum" if exclusive("exclusiveMinimum") => {
                out.insert("exclusiveMinimum".into(), value.clone());
            }
            "maximum" if exclusive("exclusiveMaximum") => {
                out.insert("exclusiveMaximum".into(), value.clone());
            }
            "items" if tuple => {
                out.insert("prefixItems".into(), list(value, path, key, issues));
            }
            "additionalItems" => {
                if tuple {
                    out.insert("items".into(), normalize(value, &at, issues));
                }
            }
            "dependencies" => split_dependencies(&mut out, value, &at, issues),
            k if SCHEMA_MAPS.contains(&k) => {
                out.insert(key.clone(), schema_map(value, &at, issues));
            }
            k if SCHEMA_LISTS.contains(&k) => {
                out.insert(key.clone(), list(value, path, key, issues));
            }
            k if SCHEMA_ONE.contains(&k) => {
                out.insert(key.clone(), normalize(value, &at, issues));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        out = with_null(out);
    }
    out
}

fn schema_map(value: &Value, path: &str, issues: &mut Issues) -> Value {
    match value {
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), normalize(v, &child(path, k), issues)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn list(value: &Value, path: &str, key: &str, issues: &mut Issues) -> Value {
    match value {
        Value::Array(branches) => Value::Array(
            branches
                .iter()
                .enumerate()
                .map(|(i, v)| normalize(v, &item(path, key, i), issues))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn split_dependencies(
    out: &mut Map<String, Value>,
    value: &Value,
    path: &str,
    issues: &mut Issues,
) {
    let Value::Object(entries) = value else {
        return;
    };
    for (name, dependency) in entries {
        let (keyword, normalized) = match dependency {
            Value::Array(_) => ("dependentRequired", dependency.clone()),
            _ => (
                "dependentSchemas",
                normalize(dependency, &child(path, name), issues),
            ),
        };
        let slot = out
            .entry(keyword)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(slot) = slot {
            slot.entry(name.clone()).or_insert(normalized);
        }
    }
}

/// The node also accepting `null` (OpenAPI `nullable: true`).
fn with_null(mut out: Map<String, Value>) -> Map<String, Value> {
    let null = Value::from("null");
    match out.get_mut("type") {
        Some(Value::String(name)) => {
            if name != "null" {
                let name = std::mem::take(name);
                out.insert("type".into(), Value::Array(vec![name.into(), null]));
            }
        }
        Some(Value::Array(names)) => {
            if !names.contains(&null) {
                names.push(null);
            }
        }
        Some(_) => return out,
        None => {
            let refers = ["$ref", "anyOf", "oneOf", "allOf"]
                .iter()
                .any(|k| out.contains_key(*k));
            if refers && !out.contains_key("enum") && !out.contains_key("const") {
                return wrap_nullable(out);
            }
        }
    }
    if let Some(Value::Array(values)) = out.get_mut("enum") {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
    } else if let Some(value) = out.get("const").filter(|v| !v.is_null()).cloned() {
        let mut replaced = Map::new();
        for (k, v) in out {
            if k == "const" {
                replaced.insert(
                    "enum".into(),
                    Value::Array(vec![value.clone(), Value::Null]),
                );
            } else {
                replaced.insert(k, v);
            }
        }
        return replaced;
    }
    out
}

/// `{"anyOf": [node, {"type": "null"}]}`, the annotations and locators staying outside.
fn wrap_nullable(node: Map<String, Value>) -> Map<String, Value> {
    let (outer, inner): (Map<String, Value>, Map<String, Value>) = node
        .into_iter()
        .partition(|(k, _)| is_annotation(k) || LOCATORS.contains(&k.as_str()));
    let mut null = Map::new();
    null.insert("type".into(), "null".into());
    let mut out = Map::new();
    out.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(inner), Value::Object(null)]),
    );
    out.extend(outer);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn norm(v: Value) -> Value {
        let mut issues = Issues::default();
        normalize(&v, "#", &mut issues)
    }

    #[test]
    fn nullable_becomes_a_null_type() {
        assert_eq!(
            norm(json!({"type": "string", "nullable": true, "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            norm(json!({"type": ["integer"], "nullable": true})),
            json!({"type": ["integer", "null"]})
        );
        assert_eq!(
            norm(json!({"nullable": true, "$ref": "#/$defs/A", "description": "d"})),
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "description": "d"})
        );
        assert_eq!(
            norm(json!({"type": "string", "nullable": false})),
            json!({"type": "string"})
        );
        assert_eq!(
            norm(json!({"const": "x", "nullable": true, "description": "d"})),
            json!({"enum": ["x", null], "description": "d"})
        );
    }

    #[test]
    fn old_drafts_become_2020_12() {
        assert_eq!(
            norm(json!({
                "$schema": "http://json-schema.org/draft-04/schema#",
                "type": "object",
                "properties": {
                    "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false},
                    "t": {"type": "array", "items": [{"type": "string"}], "additionalItems": false},
                    "l": {"type": "array", "items": {"type": "string"}, "additionalItems": false}
                },
                "dependencies": {"a": ["b"], "c": {"required": ["d"]}}
            })),
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "number", "exclusiveMinimum": 0, "maximum": 9},
                    "t": {"type": "array", "prefixItems": [{"type": "string"}], "items": false},
                    "l": {"type": "array", "items": {"type": "string"}}
                },
                "dependentRequired": {"a": ["b"]},
                "dependentSchemas": {"c": {"required": ["d"]}}
            })
        );
    }

    #[test]
    fn non_schemas_degrade_with_their_path() {
        let mut issues = Issues::default();
        let out = normalize(&json!({"properties": {"a": 3}}), "#", &mut issues);
        assert_eq!(out, json!({"properties": {"a": {}}}));
        let issues = issues.into_vec();
        assert_eq!(issues[0].path, "#/properties/a");
        assert_eq!(issues[0].kind, IssueKind::Degraded);
    }
}
