//! The typed nodes of Gemini: one `type`, `nullable`, and the keywords of that type.

use serde_json::{Map, Value};

use super::{DROPPED, Gemini, KEPT, mark_nullable, union};
use crate::dialect::issue::{IssueKind, child};
use crate::dialect::merge::{keyword_type, split_by_type};
use crate::dialect::refs::{TYPE_NAMES, type_names, type_of};

impl Gemini<'_> {
    /// A node without `$ref`, `allOf` or a union.
    pub(super) fn typed(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Map<String, Value> {
        let mut map = map.clone();
        if let Some(value) = map.shift_remove("const") {
            map.insert("enum".into(), Value::Array(vec![value]));
        }
        let mut types: Vec<String> = match type_names(&map) {
            Some(names) => names.into_iter().map(str::to_owned).collect(),
            None => infer(&map),
        };
        if types.iter().any(|t| !TYPE_NAMES.contains(&t.as_str())) {
            self.issues.push(
                &child(path, "type"),
                IssueKind::Degraded,
                "names a type that is not a JSON Schema type: only the known types are kept",
            );
            types.retain(|t| TYPE_NAMES.contains(&t.as_str()));
        }
        let listed_null = match map.get("enum") {
            Some(Value::Array(members)) => members.contains(&Value::Null),
            _ => true,
        };
        let nullable = types.iter().any(|t| t == "null") && listed_null;
        types.retain(|t| t != "null");
        if let Some(Value::Array(members)) = map.get_mut("enum") {
            members.retain(|m| !m.is_null());
            if members.is_empty() {
                // `[null]` (said by `nullable`) or no value at all (which Gemini cannot say).
                map.shift_remove("enum");
                if !nullable {
                    self.issues
                        .dropped(path, "enum", "no member Gemini can express");
                }
            }
        }
        if types.len() > 1 {
            let names: Vec<&str> = types.iter().map(String::as_str).collect();
            let branches: Vec<Map<String, Value>> = split_by_type(&map, &names)
                .into_iter()
                .map(|branch| self.typed(&branch, path, depth + 1))
                .collect();
            let mut out = union(branches, map.get("description"));
            if nullable {
                mark_nullable(&mut out);
            }
            return out;
        }
        let mut out = Map::new();
        let ty = types.pop();
        match &ty {
            Some(ty) => {
                out.insert("type".into(), ty.as_str().into());
            }
            None if nullable => {
                out.insert("type".into(), "null".into());
            }
            None => {}
        }
        if nullable && ty.is_some() {
            out.insert("nullable".into(), true.into());
        }
        let ty = ty.unwrap_or_default();
        for (key, value) in &map {
            let applies =
                keyword_type(key).is_none_or(|t| t == ty || (t == "number" && ty == "integer"));
            match key.as_str() {
                "description" => {
                    out.insert(key.clone(), value.clone());
                }
                "enum" => {
                    let strings = value
                        .as_array()
                        .is_some_and(|m| m.iter().all(Value::is_string));
                    if ty == "string" && strings {
                        out.insert(key.clone(), value.clone());
                    } else {
                        self.issues
                            .dropped(path, key, "Gemini enums hold strings only");
                    }
                }
                "format" => {
                    let allowed: &[&str] = match ty.as_str() {
                        "string" => &["enum", "date-time"],
                        "number" => &["float", "double"],
                        "integer" => &["int32", "int64"],
                        _ => &[],
                    };
                    if value.as_str().is_some_and(|f| allowed.contains(&f)) {
                        out.insert(key.clone(), value.clone());
                    } else {
                        self.issues.dropped(
                            path,
                            key,
                            "Gemini supports only a few formats (date-time and enum on strings)",
                        );
                    }
                }
                _ if !applies => {}
                "properties" => {
                    if let Value::Object(properties) = value {
                        let at = child(path, key);
                        let rendered: Map<String, Value> = properties
                            .iter()
                            .map(|(name, schema)| {
                                (
                                    name.clone(),
                                    Value::Object(self.node(schema, &child(&at, name), depth + 1)),
                                )
                            })
                            .collect();
                        if !rendered.is_empty() {
                            out.insert(key.clone(), Value::Object(rendered));
                        }
                    }
                }
                "required" => {
                    let declared = map.get("properties").and_then(Value::as_object);
                    let names: Vec<Value> = value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|n| {
                            n.as_str()
                                .is_some_and(|n| declared.is_some_and(|d| d.contains_key(n)))
                        })
                        .cloned()
                        .collect();
                    if names.len() != value.as_array().map_or(0, Vec::len) {
                        self.issues.dropped(
                            path,
                            key,
                            "names that are not declared in `properties` are left out",
                        );
                    }
                    if !names.is_empty() {
                        out.insert(key.clone(), Value::Array(names));
                    }
                }
                "additionalProperties" if !value.is_boolean() => {
                    self.issues
                        .dropped(path, key, "Gemini cannot describe the values of a map");
                }
                "additionalProperties" => {}
                "items" => {
                    let items = self.node(value, &child(path, key), depth + 1);
                    out.insert(key.clone(), Value::Object(items));
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let (bound, step) = if key == "exclusiveMinimum" {
                        ("minimum", 1)
                    } else {
                        ("maximum", -1)
                    };
                    match value.as_i64().and_then(|n| n.checked_add(step)) {
                        Some(n) if ty == "integer" && !map.contains_key(bound) => {
                            out.insert(bound.into(), n.into());
                        }
                        _ => self
                            .issues
                            .dropped(path, key, "Gemini has no exclusive bounds"),
                    }
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) => {
                    self.issues.dropped(path, key, "Gemini does not support it");
                }
                _ => {}
            }
        }
        if ty == "array" && !out.contains_key("items") {
            out.insert("items".into(), Value::Object(Map::new()));
        }
        out
    }
}

/// The types a node without `type` implies through its keywords or its `enum` members.
fn infer(map: &Map<String, Value>) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    if let Some(Value::Array(members)) = map.get("enum") {
        for member in members {
            let t = match type_of(member) {
                "integer" if members.iter().any(|m| type_of(m) == "number") => "number",
                t => t,
            };
            if !types.iter().any(|u| u == t) {
                types.push(t.to_owned());
            }
        }
        return types;
    }
    for key in map.keys() {
        if let Some(t @ ("object" | "array")) = keyword_type(key)
            && !types.iter().any(|u| u == t)
        {
            types.push(t.to_owned());
        }
    }
    types
}
