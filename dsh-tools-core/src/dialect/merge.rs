//! Merging schema nodes: `allOf` branches, `$ref` targets under their siblings, and the
//! constraints beside an `anyOf` pushed into its branches. A merge is an intersection: both
//! nodes' constraints hold.

use serde_json::{Map, Value};

use super::refs::is_annotation;

/// Merges `source` into `target` (an intersection). `target` keeps its own annotations;
/// `properties` and `$defs` are merged key by key, `required` is a union, `type` an
/// intersection. Returns the keywords both declare differently (the merge kept `target`'s).
pub(crate) fn merge_into(
    target: &mut Map<String, Value>,
    source: &Map<String, Value>,
) -> Vec<String> {
    let mut conflicts = Vec::new();
    for (key, value) in source {
        let Some(existing) = target.get_mut(key) else {
            target.insert(key.clone(), value.clone());
            continue;
        };
        if existing == value || is_annotation(key) {
            continue;
        }
        let merged = match (key.as_str(), &mut *existing, value) {
            (
                "properties" | "$defs" | "definitions",
                Value::Object(mine),
                Value::Object(theirs),
            ) => {
                for (name, schema) in theirs {
                    match mine.get(name) {
                        None => {
                            mine.insert(name.clone(), schema.clone());
                        }
                        Some(own) if own == schema => {}
                        Some(_) => conflicts.push(format!("{key}/{name}")),
                    }
                }
                true
            }
            ("required", Value::Array(mine), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(name) {
                        mine.push(name.clone());
                    }
                }
                true
            }
            ("type", mine, theirs) => match intersect_types(mine, theirs) {
                Some(types) => {
                    *mine = types;
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !merged {
            conflicts.push(key.clone());
        }
    }
    conflicts
}

/// The intersection of two `type` values, `None` when it is empty or either is malformed.
fn intersect_types(a: &Value, b: &Value) -> Option<Value> {
    let names = |v: &Value| -> Option<Vec<String>> {
        match v {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => None,
        }
    };
    let (a, b) = (names(a)?, names(b)?);
    // `integer` is a subset of `number`.
    let within = |t: &String, other: &[String]| {
        other.contains(t) || (t == "integer" && other.iter().any(|u| u == "number"))
    };
    let mut both: Vec<String> = Vec::new();
    for t in a
        .iter()
        .filter(|t| within(t, &b))
        .chain(b.iter().filter(|t| within(t, &a)))
    {
        if !both.contains(t) {
            both.push(t.clone());
        }
    }
    match both.len() {
        0 => None,
        1 => both.into_iter().next().map(Value::String),
        _ => Some(Value::Array(both.into_iter().map(Value::String).collect())),
    }
}

/// Whether a node constrains nothing but which properties are present (`{"required": [...]}`
/// branches, the "at least one of" idiom) — a union of such nodes can be dropped without
/// changing the shapes a model may send.
pub(crate) fn presence_only(node: &Value) -> bool {
    match node {
        Value::Object(map) => map.keys().all(|k| {
            is_annotation(k)
                || matches!(
                    k.as_str(),
                    "required" | "minProperties" | "maxProperties" | "dependentRequired" | "not"
                )
        }),
        _ => false,
    }
}

/// The constraint keywords of a node (everything but annotations and `$defs`-like locators),
/// used when pushing a node's siblings of `anyOf` into each branch.
pub(crate) fn constraints_besides(map: &Map<String, Value>, skip: &[&str]) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| {
            !is_annotation(k)
                && !skip.contains(&k.as_str())
                && !super::refs::LOCATORS.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The type a type-specific keyword applies to (`number` covers `integer`).
pub(crate) fn keyword_type(key: &str) -> Option<&'static str> {
    Some(match key {
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => "object",
        "items" | "prefixItems" | "contains" | "minItems" | "maxItems" | "uniqueItems"
        | "minContains" | "maxContains" | "unevaluatedItems" => "array",
        "minLength" | "maxLength" | "pattern" | "format" | "contentEncoding"
        | "contentMediaType" | "contentSchema" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        _ => return None,
    })
}

/// Whether a JSON value has the schema type `name`.
pub(crate) fn has_type(value: &Value, name: &str) -> bool {
    let own = super::refs::type_of(value);
    own == name || (name == "number" && own == "integer")
}

/// Splits a node with several types into one branch per type: `{"type": t}` plus the keywords
/// that apply to `t`, `enum`/`const` members of that type, and the type-independent
/// constraints. Annotations and locators stay with the caller. A type no `enum`/`const` member
/// has is left out.
pub(crate) fn split_by_type(map: &Map<String, Value>, types: &[&str]) -> Vec<Map<String, Value>> {
    let mut branches = Vec::new();
    for ty in types {
        let mut branch = Map::new();
        branch.insert("type".into(), Value::from(*ty));
        let mut empty = false;
        for (key, value) in map {
            if key == "type" || is_annotation(key) || super::refs::LOCATORS.contains(&key.as_str())
            {
                continue;
            }
            match (key.as_str(), keyword_type(key)) {
                ("enum", _) => {
                    let members: Vec<Value> = value
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|v| has_type(v, ty))
                        .cloned()
                        .collect();
                    empty |= members.is_empty();
                    branch.insert(key.clone(), Value::Array(members));
                }
                ("const", _) => {
                    empty |= !has_type(value, ty);
                    branch.insert(key.clone(), value.clone());
                }
                (_, Some(applies)) => {
                    if applies == *ty || (applies == "number" && *ty == "integer") {
                        branch.insert(key.clone(), value.clone());
                    }
                }
                (_, None) => {
                    branch.insert(key.clone(), value.clone());
                }
            }
        }
        if !empty {
            branches.push(branch);
        }
    }
    branches
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn object_branches_merge() {
        let mut a = obj(
            json!({"type": "object", "description": "A", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
        );
        let b = obj(
            json!({"type": "object", "description": "B", "properties": {"y": {"type": "integer"}}, "required": ["y"]}),
        );
        assert!(merge_into(&mut a, &b).is_empty());
        assert_eq!(
            Value::Object(a),
            json!({"type": "object", "description": "A", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}}, "required": ["x", "y"]})
        );
    }

    #[test]
    fn conflicts_are_named_and_types_intersect() {
        let mut a = obj(
            json!({"type": ["number", "null"], "properties": {"x": {"type": "string"}}, "minimum": 1}),
        );
        let b =
            obj(json!({"type": "integer", "properties": {"x": {"type": "number"}}, "minimum": 2}));
        assert_eq!(merge_into(&mut a, &b), ["properties/x", "minimum"]);
        assert_eq!(a["type"], json!("integer"));
        let mut c = obj(json!({"type": "string"}));
        assert_eq!(
            merge_into(&mut c, &obj(json!({"type": "object"}))),
            ["type"]
        );
    }

    #[test]
    fn type_arrays_split_with_their_keywords() {
        let map = obj(
            json!({"type": ["string", "integer", "boolean"], "description": "d", "minLength": 1, "minimum": 0, "enum": ["a", 1]}),
        );
        let branches: Vec<Value> = split_by_type(&map, &["string", "integer", "boolean"])
            .into_iter()
            .map(Value::Object)
            .collect();
        assert_eq!(
            branches,
            [
                json!({"type": "string", "minLength": 1, "enum": ["a"]}),
                json!({"type": "integer", "minimum": 0, "enum": [1]})
            ]
        );
    }

    #[test]
    fn presence_only_branches() {
        assert!(presence_only(&json!({"required": ["a"]})));
        assert!(presence_only(
            &json!({"required": ["a"], "description": "d"})
        ));
        assert!(!presence_only(&json!({"properties": {}})));
        assert!(!presence_only(&json!(true)));
    }
}
