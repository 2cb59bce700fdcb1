//! The structural promises of each dialect, checked on any rendered schema.

use dsh_tools_runtime::dialect::{Dialect, DialectOptions, Rendered, render_schema};
use serde_json::{Map, Value};

/// Every keyword OpenAI strict output may hold.
const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// Every keyword Gemini output may hold.
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "nullable",
    "description",
    "enum",
    "format",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
];

const GEMINI_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Renders `schema` in `dialect` and checks the dialect's invariants on the result.
pub(crate) fn render_checked(schema: &Value, dialect: Dialect) -> Option<Rendered> {
    let rendered = render_schema(schema, dialect, &DialectOptions::default()).ok()?;
    let violations = violations(&rendered, dialect);
    assert!(
        violations.is_empty(),
        "{dialect} invariants violated: {violations:#?}\ninput: {schema}\noutput: {}",
        rendered.schema
    );
    Some(rendered)
}

/// The invariants `rendered` breaks (empty = none).
pub(crate) fn violations(rendered: &Rendered, dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    let root = &rendered.schema;
    let Some(map) = root.as_object() else {
        return vec!["the root is not an object".into()];
    };
    if map.get("type") != Some(&Value::from("object")) {
        out.push(format!("root type is {:?}", map.get("type")));
    }
    if map.contains_key("title") {
        out.push("root title".into());
    }
    match dialect {
        Dialect::Mcp | Dialect::Anthropic => {
            walk_json(root, "#", &mut out);
            if dialect == Dialect::Anthropic {
                for kw in ["anyOf", "oneOf", "allOf"] {
                    if map.contains_key(kw) {
                        out.push(format!("root {kw}"));
                    }
                }
            }
        }
        Dialect::OpenAiStrict => {
            if rendered.strict {
                if map.contains_key("anyOf") {
                    out.push("root anyOf".into());
                }
                walk_openai(root, "#", &mut out);
            } else {
                walk_json(root, "#", &mut out);
            }
        }
        Dialect::Gemini => walk_gemini(root, "#", &mut out),
    }
    out
}

/// The subschemas of a node, with their paths.
fn children<'a>(map: &'a Map<String, Value>, path: &str) -> Vec<(&'a Value, String)> {
    let mut out = Vec::new();
    for kw in [
        "properties",
        "$defs",
        "definitions",
        "patternProperties",
        "dependentSchemas",
    ] {
        if let Some(Value::Object(entries)) = map.get(kw) {
            out.extend(entries.iter().map(|(k, v)| (v, format!("{path}/{kw}/{k}"))));
        }
    }
    for kw in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = map.get(kw) {
            out.extend(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| (v, format!("{path}/{kw}/{i}"))),
            );
        }
    }
    for kw in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
    ] {
        if let Some(v) = map.get(kw).filter(|v| v.is_object()) {
            out.push((v, format!("{path}/{kw}")));
        }
    }
    out
}

fn walk_json(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = node.as_object() else { return };
    for kw in ["$schema", "nullable"] {
        if map.contains_key(kw) {
            out.push(format!("{path}: {kw}"));
        }
    }
    if map.get("items").is_some_and(Value::is_array) {
        out.push(format!("{path}: tuple items"));
    }
    for (child, at) in children(map, path) {
        walk_json(child, &at, out);
    }
}

fn walk_openai(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        out.push(format!("{path}: not a schema object"));
        return;
    };
    for key in map.keys() {
        if !OPENAI_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{path}: keyword {key}"));
        }
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        Some(other) => {
            out.push(format!("{path}: type {other}"));
            Vec::new()
        }
        None => Vec::new(),
    };
    if types.iter().filter(|t| **t != "null").count() > 1 {
        out.push(format!("{path}: several non-null types"));
    }
    if map.get("type").is_none() && !map.contains_key("anyOf") && !map.contains_key("$ref") {
        out.push(format!("{path}: no type"));
    }
    if types.contains(&"object") || map.contains_key("properties") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            out.push(format!("{path}: additionalProperties is not false"));
        }
        let keys: Vec<Value> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(|k| Value::from(k.as_str())).collect())
            .unwrap_or_default();
        if map.get("required") != Some(&Value::Array(keys)) {
            out.push(format!("{path}: required is not every property"));
        }
    }
    if types.contains(&"array") && !map.contains_key("items") {
        out.push(format!("{path}: array without items"));
    }
    for (child, at) in children(map, path) {
        walk_openai(child, &at, out);
    }
}

fn walk_gemini(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        out.push(format!("{path}: not a schema object"));
        return;
    };
    for key in map.keys() {
        if !GEMINI_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{path}: keyword {key}"));
        }
    }
    if map.contains_key("anyOf") && map.len() > 1 {
        out.push(format!("{path}: siblings beside anyOf"));
    }
    let ty = match map.get("type") {
        Some(Value::String(t)) if GEMINI_TYPES.contains(&t.as_str()) => t.as_str(),
        Some(other) => {
            out.push(format!("{path}: type {other}"));
            ""
        }
        None => "",
    };
    if let Some(members) = map.get("enum") {
        let strings = members
            .as_array()
            .is_some_and(|m| !m.is_empty() && m.iter().all(Value::is_string));
        if ty != "string" || !strings {
            out.push(format!("{path}: enum {members} on type {ty:?}"));
        }
    }
    if ty == "array" && !map.contains_key("items") {
        out.push(format!("{path}: array without items"));
    }
    if let Some(properties) = map.get("properties")
        && properties.as_object().is_none_or(Map::is_empty)
    {
        out.push(format!("{path}: empty properties"));
    }
    if let Some(required) = map.get("required") {
        let declared = map.get("properties").and_then(Value::as_object);
        let ok = required.as_array().is_some_and(|names| {
            names.iter().all(|n| {
                n.as_str()
                    .is_some_and(|n| declared.is_some_and(|d| d.contains_key(n)))
            })
        });
        if !ok {
            out.push(format!("{path}: required {required} not all declared"));
        }
    }
    if map.get("nullable").is_some_and(|n| n != &Value::Bool(true)) {
        out.push(format!("{path}: nullable is not true"));
    }
    for (child, at) in children(map, path) {
        walk_gemini(child, &at, out);
    }
}

/// Every object node has `required` equal to its property keys (OpenAI strict), checked on
/// one exact rendering.
#[test]
fn the_checker_catches_what_it_should() {
    let bad = Rendered {
        schema: serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        strict: true,
        issues: Vec::new(),
    };
    assert_eq!(
        violations(&bad, Dialect::OpenAiStrict),
        [
            "#: additionalProperties is not false",
            "#: required is not every property"
        ]
    );
    let gemini = Rendered {
        schema: serde_json::json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}], "description": "d"}, "b": {"type": ["string", "null"]}}}),
        strict: false,
        issues: Vec::new(),
    };
    assert_eq!(
        violations(&gemini, Dialect::Gemini),
        [
            "#/properties/a: siblings beside anyOf",
            "#/properties/b: type [\"string\",\"null\"]"
        ]
    );
}
