//! Unit tests of the compiled form and the fast machine's internals.

use serde_json::{Map, Value, json};

use super::compiled::{ANY, CompiledSchema, Node};
use super::scalar::short_eq;
use super::{Vocabulary, validate_value};

fn compile(schema: &Value) -> CompiledSchema {
    CompiledSchema::compile(schema, Vocabulary::Parameters).expect("supported")
}

#[test]
fn short_string_equality_covers_every_length_class() {
    for len in 0..40 {
        let a: String = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
            .chars()
            .take(len)
            .collect();
        assert!(short_eq(&a, &a.clone()));
        for position in 0..len {
            let mut b = a.clone().into_bytes();
            b[position] = b'#';
            let b = String::from_utf8(b).expect("ascii");
            assert!(!short_eq(&a, &b), "{a:?} vs {b:?}");
        }
        assert!(!short_eq(&a, &format!("{a}x")));
    }
    assert!(short_eq("é", "é") && !short_eq("é", "è"));
}

#[test]
fn large_property_tables_use_the_hash_index_in_any_key_order() {
    let names: Vec<String> = (0..20).map(|i| format!("p{i}")).collect();
    let properties: Map<String, Value> = names
        .iter()
        .map(|n| (n.clone(), json!({"type": "integer"})))
        .collect();
    let schema = json!({"type": "object", "properties": properties, "required": ["p3", "p17"], "additionalProperties": false});
    let compiled = compile(&schema);
    let forward: Map<String, Value> = names.iter().map(|n| (n.clone(), json!(1))).collect();
    let backward: Map<String, Value> = names.iter().rev().map(|n| (n.clone(), json!(1))).collect();
    assert!(compiled.is_valid(&Value::Object(forward.clone())));
    assert!(compiled.is_valid(&Value::Object(backward)));
    let mut extra = forward.clone();
    extra.insert("p20".into(), json!(1));
    assert!(!compiled.is_valid(&Value::Object(extra.clone())));
    assert_eq!(
        compiled.validate(&Value::Object(extra), ""),
        vec!["\"p20\" is not a parameter; did you mean \"p2\"?"]
    );
    let mut missing = forward;
    missing.shift_remove("p17");
    missing.insert("p9".into(), json!("x"));
    assert_eq!(
        compiled.validate(&Value::Object(missing), ""),
        vec![
            "missing required property \"p17\"",
            "\"p9\" must be an integer"
        ]
    );
}

#[test]
fn frames_resume_at_the_child_that_needs_them() {
    // A nested container in the middle of an object, of an array, and of an open object's
    // undeclared values: the inline scan must stop there and the frame must resume exactly there.
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "deep": {"type": "array", "items": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}},
            "z": {"type": "boolean"}
        },
        "required": ["a", "z"]
    });
    let compiled = compile(&schema);
    let good = json!({"a": "s", "deep": [[{"x": 1}], [], [{"x": 2.0}, {"x": 3}]], "free": {"k": [1, {"m": null}]}, "z": true});
    assert!(compiled.is_valid(&good));
    let bad_late = json!({"a": "s", "deep": [[{"x": 1}], [{"x": 2}, {"y": 3}]], "z": true});
    assert!(!compiled.is_valid(&bad_late));
    assert_eq!(
        compiled.validate(&bad_late, ""),
        vec!["missing required property \"deep[1][1].x\""]
    );
    let missing_after_frame = json!({"a": "s", "deep": [[{"x": 1}]]});
    assert!(!compiled.is_valid(&missing_after_frame));
    let negative_zero = Value::Number(serde_json::Number::from_f64(-0.0).expect("finite"));
    let lossy_free = json!({"a": "s", "z": false, "free": {"k": [1, {"m": [negative_zero]}]}});
    assert!(!compiled.is_valid(&lossy_free));
    assert_eq!(
        compiled.validate(&lossy_free, ""),
        vec!["\"arguments\" must be a lossless JSON object"]
    );
}

#[test]
fn one_of_inside_containers_counts_every_branch() {
    let schema = json!({"type": "array", "items": {"oneOf": [
        {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
        {"type": "object", "properties": {"k": {"type": "integer"}}, "required": ["k"]},
        {"type": "array"}
    ]}});
    let compiled = compile(&schema);
    assert!(compiled.is_valid(&json!([{"k": "a"}, {"k": 1}, [[1]]])));
    assert_eq!(
        compiled.validate(&json!([{"k": null}, {}, [1]]), "v"),
        vec![
            "\"v[0]\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"v[0].k\" must be a string",
            "\"v[1]\" must match exactly one oneOf branch (matched 0); closest is branch 0: missing required property \"v[1].k\"",
        ]
    );
    let overlapping = compile(
        &json!({"oneOf": [{"type": "array"}, {"type": "array", "items": {"type": "integer"}}]}),
    );
    assert!(
        overlapping.is_valid(&json!([[1], 2])),
        "only the item-less branch matches"
    );
    assert!(overlapping.is_valid(&json!([[1]])));
    assert_eq!(
        overlapping.validate(&json!([1]), "v"),
        vec!["\"v\" must match exactly one oneOf branch (matched 2)"]
    );
}

#[test]
fn lenient_compilation_maps_the_unknown_to_any() {
    let compiled = CompiledSchema::compile_lenient(&json!({"type": ["string"], "oneOf": 3}));
    assert!(matches!(compiled.node(0), Node::OneOf(branches) if branches.is_empty()));
    assert!(matches!(compiled.node(ANY), Node::Any));
    assert!(
        validate_value(
            &json!({"type": "array", "items": true}),
            &json!([1, "x"]),
            "v"
        )
        .is_empty()
    );
}

/// The verdict and the messages come from one walk: they agree on one schema per rule, in
/// every vocabulary.
#[test]
fn verdict_agrees_with_the_messages() {
    use super::{assert_supported_in, is_supported};
    let negative_zero = Value::Number(serde_json::Number::from_f64(-0.0).unwrap());
    let schemas = vec![
        json!({}),
        json!({"description": "x", "title": "t", "default": [1], "examples": [{"a": null}]}),
        json!({"description": 1}),
        json!({"default": negative_zero}),
        json!({"format": "uri"}),
        json!(true),
        json!([]),
        json!({"type": "string", "oneOf": [{}, {}]}),
        json!({"properties": {}}),
        json!({"oneOf": [{}]}),
        json!({"oneOf": [{}, {}], "enum": [1]}),
        json!({"type": ["string", "null"]}),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "required": ["a"]}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"type": "array", "items": [{"type": "integer"}]}),
        json!({"type": "array", "prefixItems": [{"type": "integer"}], "items": false, "minItems": 1}),
        json!({"type": "array", "prefixItems": [], "items": false}),
        json!({"type": "array", "items": false}),
        json!({"type": "array", "uniqueItems": true}),
        json!({"type": "array", "uniqueItems": 1}),
        json!({"type": "string", "enum": ["a", "b"], "const": "c"}),
        json!({"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2}),
        json!({"type": "integer", "multipleOf": 0}),
        json!({"type": "string", "pattern": "^a+$", "format": "email"}),
        json!({"type": "string", "pattern": "(a"}),
        json!({"type": "string", "pattern": "(a+)+"}),
        json!({"type": "string", "format": "iri"}),
        json!({"type": "number", "pattern": "x"}),
        json!({"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A"}),
        json!({"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/B"}),
        json!({"$ref": "#", "type": "string"}),
        json!({"$defs": 1, "type": "null"}),
        json!({"$defs": {"A": {"oneOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}, "$ref": "#/$defs/A"}),
        json!({"$defs": {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]}}, "$ref": "#/$defs/A"}),
        json!({"type": "object", "properties": {"next": {"oneOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["next"]}),
    ];
    let vocabularies = [
        Vocabulary::Reference,
        Vocabulary::Output,
        Vocabulary::Parameters,
    ];
    let mut accepted = [0; 3];
    for schema in &schemas {
        for (i, vocab) in vocabularies.into_iter().enumerate() {
            let expected = assert_supported_in(schema, vocab).is_ok();
            assert_eq!(is_supported(schema, vocab), expected, "{vocab:?} {schema}");
            accepted[i] += usize::from(expected);
        }
    }
    assert!(
        accepted[0] < accepted[1] && accepted[1] < accepted[2],
        "{accepted:?}"
    );
}
