//! The typed nodes of OpenAI strict mode: objects (every property required, optional ones
//! nullable, closed), arrays, scalars, and type arrays split into unions.

use serde_json::{Map, Value};

use super::{DROPPED, FORMATS, KEPT, Strict};
use crate::dialect::issue::{IssueKind, child};
use crate::dialect::merge::{keyword_type, split_by_type};
use crate::dialect::refs::{TYPE_NAMES, accepts_null, type_names, type_of};

impl Strict<'_> {
    /// A node without `$ref`, `allOf` or a union.
    pub(super) fn typed(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Value {
        let mut types: Vec<String> = match (map.get("type"), type_names(map)) {
            (None, _) => infer_types(map),
            (Some(_), Some(names)) if !names.is_empty() => {
                names.into_iter().map(str::to_owned).collect()
            }
            (Some(_), _) => {
                return self.unsupported(
                    &child(path, "type"),
                    "must be a type name or an array of them",
                );
            }
        };
        if let Some(unknown) = types.iter().find(|t| !TYPE_NAMES.contains(&t.as_str())) {
            return self.unsupported(
                &child(path, "type"),
                format!("\"{unknown}\" is not a JSON Schema type"),
            );
        }
        let nullable = types.iter().any(|t| t == "null");
        types.retain(|t| t != "null");
        if types.is_empty() && !nullable {
            return self.unsupported(
                path,
                "accepts any JSON value (no `type`); strict mode needs one",
            );
        }
        if types.len() > 1 {
            // One branch per type, each rendered at this node's path.
            let names: Vec<&str> = types.iter().map(String::as_str).collect();
            let mut branches: Vec<Value> = split_by_type(map, &names)
                .into_iter()
                .map(|branch| self.node(&Value::Object(branch), path, depth + 1))
                .collect();
            if nullable {
                branches.push(serde_json::json!({"type": "null"}));
            }
            let mut union = Map::new();
            union.insert("anyOf".into(), Value::Array(branches));
            self.annotations_and_defs(map, &mut union, path, depth);
            return Value::Object(union);
        }
        let ty = types.pop().unwrap_or_else(|| "null".to_owned());
        let mut out = Map::new();
        out.insert(
            "type".into(),
            if nullable && ty != "null" {
                Value::Array(vec![ty.as_str().into(), "null".into()])
            } else {
                ty.as_str().into()
            },
        );
        let mut object_done = false;
        for (key, value) in map {
            let applies =
                keyword_type(key).is_none_or(|t| t == ty || (t == "number" && ty == "integer"));
            match key.as_str() {
                "type" => {}
                "description" | "title" => {
                    out.insert(key.clone(), value.clone());
                }
                "$defs" | "definitions" => {
                    let defs = self.defs(value, &child(path, key), depth);
                    out.insert(key.clone(), defs);
                }
                "enum" | "const" => {
                    let mut members = match (key.as_str(), value) {
                        ("enum", Value::Array(members)) => members.clone(),
                        ("enum", _) => {
                            self.unsupported(&child(path, key), "must be an array");
                            continue;
                        }
                        _ => vec![value.clone()],
                    };
                    if nullable && !members.contains(&Value::Null) {
                        members.push(Value::Null);
                    }
                    out.insert("enum".into(), Value::Array(members));
                }
                _ if !applies => {}
                "properties" | "required" | "additionalProperties" | "patternProperties"
                    if !object_done =>
                {
                    object_done = true;
                    self.object(map, &mut out, path, depth);
                }
                "properties" | "required" | "additionalProperties" | "patternProperties" => {}
                "items" => {
                    let items = self.node(value, &child(path, key), depth + 1);
                    out.insert(key.clone(), items);
                }
                "prefixItems" => {
                    self.unsupported(&child(path, key), "tuples (`prefixItems`) are not supported");
                }
                "format" => match value.as_str() {
                    Some(format) if FORMATS.contains(&format) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => self.issues.dropped(path, key, "strict mode supports date-time, time, date, duration, email, hostname, ipv4, ipv6 and uuid"),
                },
                "unevaluatedProperties" if value == &Value::Bool(false) => {}
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) || k == "unevaluatedProperties" => {
                    self.issues.dropped(path, key, "strict mode does not support it");
                }
                _ => {}
            }
        }
        if ty == "object" && !object_done {
            self.object(map, &mut out, path, depth);
        }
        if ty == "array" && !map.contains_key("items") && !map.contains_key("prefixItems") {
            self.unsupported(
                path,
                "an array without `items` accepts any items; strict mode needs their schema",
            );
        }
        Value::Object(out)
    }

    /// `properties` (every one required, optional ones nullable), `required`,
    /// `additionalProperties: false`.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let empty = Map::new();
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            Some(_) => {
                self.unsupported(&child(path, "properties"), "must be an object of schemas");
                &empty
            }
            None => &empty,
        };
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None | Some(Value::Bool(true)) if !properties.is_empty() => {}
            // A tool that declares no parameters takes none.
            None if path == "#" => {}
            None | Some(Value::Bool(true)) => {
                self.unsupported(path, "an object that declares no properties accepts any keys; strict mode needs every property declared");
            }
            Some(_) => {
                self.unsupported(&child(path, "additionalProperties"), "a map (schema-valued `additionalProperties`) has open keys; strict mode needs every property declared");
            }
        }
        if map
            .get("patternProperties")
            .is_some_and(|p| p.as_object().is_none_or(|p| !p.is_empty()))
        {
            self.unsupported(
                &child(path, "patternProperties"),
                "open keys matching a pattern; strict mode needs every property declared",
            );
        }
        for name in &required {
            if !properties.contains_key(*name) {
                self.issues.push(
                    &child(path, "required"),
                    IssueKind::Dropped,
                    format!("\"{name}\" is required but not declared in `properties`: dropped from `required`"),
                );
            }
        }
        let at = child(path, "properties");
        let mut rendered = Map::new();
        for (name, schema) in properties {
            let mut node = self.node(schema, &child(&at, name), depth + 1);
            if !required.contains(&name.as_str()) && !accepts_null(&node) {
                node = nullable(node);
            }
            rendered.insert(name.clone(), node);
        }
        let names: Vec<Value> = rendered.keys().map(|k| Value::from(k.as_str())).collect();
        out.insert("properties".into(), Value::Object(rendered));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// The types a node without `type` implies through its keywords or `enum`/`const` members.
fn infer_types(map: &Map<String, Value>) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    let mut add = |t: &str| {
        if !types.iter().any(|u| u == t) {
            types.push(t.to_owned());
        }
    };
    let members: Vec<&Value> = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(members)), _) => members.iter().collect(),
        (_, Some(value)) => vec![value],
        _ => Vec::new(),
    };
    if !members.is_empty() {
        let numbers = members.iter().any(|m| type_of(m) == "number");
        for member in members {
            match type_of(member) {
                "integer" if numbers => add("number"),
                t => add(t),
            }
        }
        return types;
    }
    for key in map.keys() {
        if let Some(t @ ("object" | "array")) = keyword_type(key) {
            add(t);
        }
    }
    types
}

/// The node also accepting `null`.
pub(crate) fn nullable(node: Value) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    let null = Value::from("null");
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(serde_json::json!({"type": "null"}));
        return Value::Object(map);
    }
    let typed = match map.get_mut("type") {
        Some(Value::String(name)) => {
            let name = std::mem::take(name);
            map.insert("type".into(), Value::Array(vec![name.into(), null]));
            true
        }
        Some(Value::Array(names)) => {
            names.push(null);
            true
        }
        _ => false,
    };
    if typed {
        if let Some(Value::Array(members)) = map.get_mut("enum") {
            members.push(Value::Null);
        }
        return Value::Object(map);
    }
    let (outer, inner): (Map<String, Value>, Map<String, Value>) = map
        .into_iter()
        .partition(|(k, _)| k == "description" || k == "title");
    let mut out = Map::new();
    out.insert(
        "anyOf".into(),
        Value::Array(vec![
            Value::Object(inner),
            serde_json::json!({"type": "null"}),
        ]),
    );
    out.extend(outer);
    Value::Object(out)
}
