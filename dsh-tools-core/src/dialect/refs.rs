//! Local `$ref` resolution (through `dsh_tools::subset::resolve_ref`) and the small schema
//! predicates every dialect shares. [`resolve`] also returns the target's pointer, which
//! dialect issues are reported at.

use serde_json::{Map, Value};

/// Annotation keywords: they describe, never constrain.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that locate a schema resource or name subschemas for `$ref`: they stay where they
/// are when a node is rewritten.
pub(crate) const LOCATORS: &[&str] = &["$id", "$anchor", "$dynamicAnchor", "$defs", "definitions"];

/// Whether `key` is an annotation (or an `x-` vendor extension).
pub(crate) fn is_annotation(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || key.starts_with("x-")
}

/// Resolves `reference` against the document `root` (through
/// [`dsh_tools::subset::resolve_ref`], the workspace's one resolver): returns the target and its
/// pointer (`#/$defs/Node`), or `None` for anchors, other documents and dangling pointers.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let (node, fragment) = dsh_tools::subset::resolve_ref(root, reference)?;
    Some((node, format!("#{fragment}")))
}

/// [`resolve`] without the pointer: the target alone.
pub(crate) fn resolve_target<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    dsh_tools::subset::resolve_ref(root, reference).map(|(node, _)| node)
}

/// The JSON type name of a value (`integer` for numbers with zero fraction).
pub(crate) fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON Schema type names.
pub(crate) const TYPE_NAMES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// The names of a node's `type` keyword (a string or an array of strings).
pub(crate) fn type_names(map: &Map<String, Value>) -> Option<Vec<&str>> {
    match map.get("type")? {
        Value::String(name) => Some(vec![name.as_str()]),
        Value::Array(names) => Some(names.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Whether a (rendered, 2020-12) schema certainly accepts `null`. Conservative: `$ref`s are not
/// followed, so a node that only refers elsewhere does not count.
pub(crate) fn accepts_null(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return schema == &Value::Bool(true);
    };
    if map.contains_key("$ref") {
        return false;
    }
    let typed = match type_names(map) {
        Some(names) => names.contains(&"null"),
        None => !map.contains_key("type"),
    };
    let listed = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => values.contains(&Value::Null),
        (Some(_), _) => false,
        (None, Some(value)) => value.is_null(),
        (None, None) => true,
    };
    let union = ["anyOf", "oneOf"].iter().all(|kw| match map.get(*kw) {
        Some(Value::Array(branches)) => branches.iter().any(accepts_null),
        Some(_) => false,
        None => true,
    });
    let all = match map.get("allOf") {
        Some(Value::Array(branches)) => branches.iter().all(accepts_null),
        Some(_) => false,
        None => true,
    };
    typed && listed && union && all
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_resolve_with_their_paths() {
        let root = json!({
            "$id": "https://example.com/s.json",
            "$defs": {"A": {"type": "string"}, "a/b": {"type": "number"}, "é x": {"const": 1}},
            "properties": {"list": {"items": [{"type": "boolean"}]}}
        });
        assert_eq!(resolve(&root, "#"), Some((&root, "#".to_owned())));
        assert_eq!(
            resolve(&root, "#/$defs/A"),
            Some((&json!({"type": "string"}), "#/$defs/A".to_owned()))
        );
        assert_eq!(
            resolve(&root, "#/$defs/a~1b").map(|(v, _)| v),
            Some(&json!({"type": "number"}))
        );
        assert_eq!(
            resolve(&root, "#/$defs/%C3%A9%20x").map(|(v, _)| v),
            Some(&json!({"const": 1}))
        );
        assert_eq!(
            resolve(&root, "https://example.com/s.json#/$defs/A").map(|(_, p)| p),
            Some("#/$defs/A".to_owned())
        );
        for missing in [
            "#/$defs/B",
            "#anchor",
            "other.json#/$defs/A",
            "#/$defs/%zz",
            "",
        ] {
            assert_eq!(resolve(&root, missing), None, "{missing}");
        }
    }

    #[test]
    fn null_acceptance() {
        for yes in [
            json!({}),
            json!(true),
            json!({"type": ["string", "null"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"enum": ["a", null]}),
            json!({"type": "null", "const": null}),
        ] {
            assert!(accepts_null(&yes), "{yes}");
        }
        for no in [
            json!({"type": "string"}),
            json!({"type": ["string", "null"], "enum": ["a"]}),
            json!({"$ref": "#"}),
            json!({"oneOf": [{"type": "string"}]}),
            json!(false),
        ] {
            assert!(!accepts_null(&no), "{no}");
        }
    }
}
