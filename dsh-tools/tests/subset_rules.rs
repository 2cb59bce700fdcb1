//! Every rule of `docs/CONTRACTS.md`, "Checking a schema", "Validating a value" and "Arguments",
//! plus the bound keywords of the `Parameters` vocabulary, with exact texts and order.

use dsh_tools::args::validate_args;
use dsh_tools::error::HarnessError;
use dsh_tools::subset::{
    CompiledSchema, Vocabulary, assert_object_schema, assert_supported, assert_supported_in,
    unsupported_violations, validate_value,
};
use serde_json::{Map, Number, Value, json};

const SUBSET: &str =
    "(subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)";
const PARAMETERS_SUBSET: &str = "(subset: type/oneOf/properties/required/additionalProperties/items/prefixItems/enum/const/minimum/maximum/exclusiveMinimum/exclusiveMaximum/multipleOf/minLength/maxLength/pattern/format/minItems/maxItems/uniqueItems/minProperties/maxProperties/$ref/$defs + annotations)";
const TYPES: &str = "object/array/string/number/integer/boolean/null";

fn reference(schema: Value) -> Vec<String> {
    unsupported_violations(&schema, Vocabulary::Reference)
}

fn parameters(schema: Value) -> Vec<String> {
    unsupported_violations(&schema, Vocabulary::Parameters)
}

fn neg_zero() -> Value {
    Value::Number(Number::from_f64(-0.0).expect("finite"))
}

/// Validates through every entry point, checks they agree, and returns the messages.
fn check(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let raw = validate_value(schema, value, path);
    let compiled =
        CompiledSchema::compile(schema, Vocabulary::Parameters).expect("supported schema");
    assert_eq!(
        compiled.validate(value, path),
        raw,
        "compiled vs raw for {schema} / {value}"
    );
    assert_eq!(
        compiled.is_valid(value),
        raw.is_empty(),
        "is_valid vs messages for {schema} / {value}"
    );
    raw
}

fn args(schema: &Value, value: &Value) -> Vec<String> {
    check(schema, value, "")
}

// ------------------------------------------------------------ "Checking a schema"

#[test]
fn rule1_non_records_are_not_schemas() {
    for root in [
        json!(true),
        json!(false),
        json!(null),
        json!([]),
        json!(1),
        json!("object"),
    ] {
        assert_eq!(reference(root), vec!["schema must be a schema object"]);
    }
    assert_eq!(
        reference(json!({"type": "object", "properties": {"a": true, "b": null}})),
        vec![
            "schema.properties.a must be a schema object",
            "schema.properties.b must be a schema object"
        ]
    );
    assert_eq!(
        reference(json!({"type": "array", "items": [{"type": "string"}]})),
        vec!["schema.items must be a schema object"]
    );
}

#[test]
fn rule3_unknown_keys_in_key_order_and_annotations_lossless() {
    assert_eq!(
        reference(json!({"x": 1, "type": "string", "$schema": "y", "format": "uri"})),
        vec![
            format!("schema.x is not a supported keyword {SUBSET}"),
            format!("schema.$schema is not a supported keyword {SUBSET}"),
            format!("schema.format is not a supported keyword {SUBSET}"),
        ]
    );
    assert_eq!(
        reference(json!({"type": "object", "properties": {"a": {"type": "number", "minimum": 1}}})),
        vec![format!(
            "schema.properties.a.minimum is not a supported keyword {SUBSET}"
        )]
    );
    let schema = json!({"type": "string", "default": neg_zero(), "examples": [1, {"a": [neg_zero()]}], "title": "t"});
    assert_eq!(
        reference(schema),
        vec![
            "schema.default annotation must be lossless JSON data",
            "schema.examples annotation must be lossless JSON data"
        ]
    );
    assert!(
        reference(json!({"type": "string", "default": {"any": [1, null]}, "examples": ["a"]}))
            .is_empty()
    );
}

#[test]
fn rule4_description_and_title_are_strings_after_the_key_scan() {
    assert_eq!(
        reference(json!({"title": 1, "description": false, "foo": 1, "type": "string"})),
        vec![
            format!("schema.foo is not a supported keyword {SUBSET}"),
            "schema.description must be a string".into(),
            "schema.title must be a string".into(),
        ]
    );
}

#[test]
fn rule5_type_and_one_of_together_skip_the_node() {
    assert_eq!(
        reference(json!({"type": "string", "oneOf": [{"type": "bogus"}], "enum": 1})),
        vec!["schema cannot declare both type and oneOf"]
    );
}

#[test]
fn rule6_keywords_without_type_in_fixed_order() {
    let schema = json!({"const": 1, "enum": [1], "items": {}, "additionalProperties": true, "required": [], "properties": {}});
    assert_eq!(
        reference(schema),
        vec![
            "schema.properties requires type or oneOf",
            "schema.required requires type or oneOf",
            "schema.additionalProperties requires type or oneOf",
            "schema.items requires type or oneOf",
            "schema.enum requires type or oneOf",
            "schema.const requires type or oneOf",
        ]
    );
    assert!(reference(json!({})).is_empty());
    assert!(
        reference(json!({"description": "anything", "title": "t", "default": 1, "examples": []}))
            .is_empty()
    );
    // Annotation-only nodes are not descended into.
    assert_eq!(
        reference(json!({"properties": {"a": 1}})),
        vec!["schema.properties requires type or oneOf"]
    );
}

#[test]
fn rule7_one_of_branches_then_sibling_tail() {
    for bad in [json!([]), json!([{}]), json!("x"), json!({"a": {}})] {
        assert_eq!(
            reference(json!({"oneOf": bad})),
            vec!["schema.oneOf must be an array of at least two schemas"]
        );
    }
    assert_eq!(
        reference(json!({"enum": [1], "oneOf": [{"type": "x"}, {"items": {}}], "properties": {}})),
        vec![
            format!("schema.oneOf[0].type must be one of {TYPES}"),
            "schema.oneOf[1].items requires type or oneOf".into(),
            "schema.properties is not supported beside oneOf".into(),
            "schema.enum is not supported beside oneOf".into(),
        ]
    );
    assert_eq!(
        reference(json!({"oneOf": [{}], "const": 1})),
        vec![
            "schema.oneOf must be an array of at least two schemas",
            "schema.const is not supported beside oneOf"
        ]
    );
    assert!(
        reference(json!({"oneOf": [{"type": "string"}, {"type": "null"}], "description": "d"}))
            .is_empty()
    );
}

#[test]
fn rule8_type_must_be_one_supported_string() {
    assert_eq!(
        reference(json!({"type": ["string", "null"]})),
        vec!["schema.type must be a single type string (type arrays are not supported)"]
    );
    for bad in [json!("date"), json!(5), json!(null), json!({})] {
        assert_eq!(
            reference(json!({"type": bad, "items": 1})),
            vec![format!("schema.type must be one of {TYPES}")]
        );
    }
}

#[test]
fn rule9_misplaced_keywords_in_fixed_order_and_not_visited() {
    let schema = json!({
        "type": "string",
        "items": {"type": "bogus"},
        "additionalProperties": 3,
        "required": 7,
        "properties": {"a": {"type": "bogus"}}
    });
    assert_eq!(
        reference(schema),
        vec![
            "schema.properties is not supported on type \"string\"",
            "schema.required is not supported on type \"string\"",
            "schema.additionalProperties is not supported on type \"string\"",
            "schema.items is not supported on type \"string\"",
        ]
    );
    assert_eq!(
        reference(json!({"type": "object", "const": {}, "enum": [{}]})),
        vec![
            "schema.enum is not supported on type \"object\"",
            "schema.const is not supported on type \"object\""
        ]
    );
    assert_eq!(
        reference(json!({"type": "array", "enum": [[]]})),
        vec!["schema.enum is not supported on type \"array\""]
    );
}

#[test]
fn rule10_object_properties_required_and_additional_properties() {
    assert_eq!(
        reference(json!({"type": "object", "properties": []})),
        vec!["schema.properties must be an object of schemas"]
    );
    for bad in [
        json!("a"),
        json!([1]),
        json!(["a", null]),
        json!({"0": "a"}),
    ] {
        assert_eq!(
            reference(json!({"type": "object", "properties": {"a": {}}, "required": bad})),
            vec!["schema.required must be an array of strings"]
        );
    }
    assert_eq!(
        reference(json!({"type": "object", "required": ["a", "b\"c"]})),
        vec![
            "schema.required names \"a\" which is not in properties",
            "schema.required names \"b\"c\" which is not in properties",
        ]
    );
    assert_eq!(
        reference(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        vec!["schema.additionalProperties must be a boolean"]
    );
    // The tail runs after the children; nested tails run before later siblings.
    let schema = json!({
        "type": "object",
        "additionalProperties": {},
        "required": ["zz"],
        "properties": {
            "o": {"type": "object", "required": ["q"]},
            "a.b": {"type": "bogus"}
        }
    });
    assert_eq!(
        reference(schema),
        vec![
            "schema.properties.o.required names \"q\" which is not in properties".to_string(),
            format!("schema.properties.a.b.type must be one of {TYPES}"),
            "schema.required names \"zz\" which is not in properties".into(),
            "schema.additionalProperties must be a boolean".into(),
        ]
    );
    let proto = json!({"type": "object", "properties": {"__proto__": {}, "constructor": {}}, "required": ["__proto__", "constructor"]});
    assert!(reference(proto).is_empty());
}

#[test]
fn rule11_items_are_visited() {
    assert_eq!(
        reference(json!({"type": "array", "items": {"type": "array", "items": {"type": "x"}}})),
        vec![format!("schema.items.items.type must be one of {TYPES}")]
    );
    assert!(reference(json!({"type": "array"})).is_empty());
}

#[test]
fn rule12_enum_and_const_literals() {
    assert_eq!(
        reference(json!({"type": "string", "enum": []})),
        vec!["schema.enum must be a non-empty array of string values"]
    );
    assert_eq!(
        reference(json!({"type": "integer", "enum": [1, 1.5]})),
        vec!["schema.enum must be a non-empty array of integer values"]
    );
    assert!(reference(json!({"type": "integer", "enum": [1.0, 1e300]})).is_empty());
    assert_eq!(
        reference(json!({"type": "number", "enum": [1, neg_zero()]})),
        vec!["schema.enum must be a non-empty array of number values"]
    );
    assert_eq!(
        reference(json!({"type": "null", "enum": "x"})),
        vec!["schema.enum must be a non-empty array of null values"]
    );
    assert_eq!(
        reference(json!({"type": "integer", "const": 0.5})),
        vec!["schema.const must be a integer value"]
    );
    assert_eq!(
        reference(json!({"type": "boolean", "const": 0})),
        vec!["schema.const must be a boolean value"]
    );
    assert_eq!(
        reference(json!({"type": "string", "enum": ["a", "b"], "const": "c"})),
        vec!["schema.const must be one of schema.enum when both are declared"]
    );
    assert!(reference(json!({"type": "number", "enum": [1, 2], "const": 2.0})).is_empty());
    // An invalid enum suppresses the membership check.
    assert_eq!(
        reference(json!({"type": "string", "enum": [1], "const": "c"})),
        vec!["schema.enum must be a non-empty array of string values"]
    );
}

#[test]
fn violations_are_collected_depth_first_and_joined() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "string", "format": "x"},
            "b": {"oneOf": [{"type": "string"}]},
            "c": {"type": "array", "items": {"type": "integer", "const": "1"}}
        },
        "required": ["a", "d"]
    });
    let err = assert_supported(&schema).unwrap_err();
    let want = [
        format!("schema.properties.a.format is not a supported keyword {SUBSET}"),
        "schema.properties.b.oneOf must be an array of at least two schemas".into(),
        "schema.properties.c.items.const must be a integer value".into(),
        "schema.required names \"d\" which is not in properties".into(),
    ];
    assert_eq!(err.violations, want);
    assert_eq!(
        err.to_string(),
        format!("unsupported JSON schema: {}", want.join("; "))
    );
    assert_eq!(err.name(), "JsonSchemaError");
    assert_eq!(err.code().as_str(), "UNSUPPORTED_SCHEMA");
}

#[test]
fn object_rooted_schemas() {
    assert!(assert_object_schema(&json!({"type": "object"})).is_ok());
    let rooted = "schema.type must be \"object\" (structured output is object-rooted)";
    for schema in [
        json!({}),
        json!({"type": "string"}),
        json!({"oneOf": [{"type": "object"}, {"type": "null"}]}),
    ] {
        assert_eq!(
            assert_object_schema(&schema).unwrap_err().violations,
            vec![rooted]
        );
    }
    assert_eq!(
        assert_object_schema(&json!({"type": "array", "items": 1}))
            .unwrap_err()
            .violations,
        vec!["schema.items must be a schema object"]
    );
    assert_eq!(
        assert_object_schema(&json!(true)).unwrap_err().violations,
        vec!["schema must be a schema object"]
    );
}

// ---------------------------------------------------------------- Parameters vocabulary

#[test]
fn parameters_vocabulary_accepts_bounds_in_place() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64},
            "i": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
            "f": {"type": "number", "minimum": -1.5, "maximum": 1e300},
            "s": {"type": "string", "minLength": 1, "maxLength": 2.0},
            "l": {"type": "array", "minItems": 3, "maxItems": 1},
            "o": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
        }
    });
    assert!(assert_supported_in(&schema, Vocabulary::Parameters).is_ok());
    assert_eq!(
        reference(json!({"type": "integer", "minimum": 0})),
        vec![format!(
            "schema.minimum is not a supported keyword {SUBSET}"
        )]
    );
    assert!(parameters(json!({"type": "string", "pattern": "^a"})).is_empty());
    assert_eq!(
        parameters(json!({"type": "string", "contentEncoding": "base64"})),
        vec![format!(
            "schema.contentEncoding is not a supported keyword {PARAMETERS_SUBSET}"
        )]
    );
}

#[test]
fn parameters_vocabulary_placement_rules() {
    assert_eq!(
        parameters(json!({"type": "string", "maxItems": 2, "minimum": 1, "minLength": 0})),
        vec![
            "schema.minimum is not supported on type \"string\"",
            "schema.maxItems is not supported on type \"string\""
        ]
    );
    assert_eq!(
        parameters(json!({"type": "integer", "minLength": 1, "maxItems": 1, "maximum": 3})),
        vec![
            "schema.minLength is not supported on type \"integer\"",
            "schema.maxItems is not supported on type \"integer\""
        ]
    );
    assert_eq!(
        parameters(json!({"type": "object", "minimum": 0, "minItems": 1})),
        vec![
            "schema.minimum is not supported on type \"object\"",
            "schema.minItems is not supported on type \"object\""
        ]
    );
    assert_eq!(
        parameters(json!({"maxItems": 1, "minimum": 0, "const": 1, "maxLength": 2})),
        // Assertions apply to their own type without `type` (JSON Schema); `const` does not.
        vec!["schema.const requires type or oneOf"]
    );
    assert_eq!(
        parameters(
            json!({"oneOf": [{"type": "string"}, {"type": "null"}], "maxLength": 3, "enum": ["a"], "minimum": 1})
        ),
        vec![
            "schema.enum is not supported beside oneOf",
            "schema.minimum is not supported beside oneOf",
            "schema.maxLength is not supported beside oneOf",
        ]
    );
}

#[test]
fn parameters_vocabulary_bound_values() {
    for bad in [json!("1"), json!(null), neg_zero(), json!([1])] {
        assert_eq!(
            parameters(json!({"type": "number", "minimum": bad.clone(), "maximum": bad})),
            vec![
                "schema.minimum must be a finite number",
                "schema.maximum must be a finite number"
            ]
        );
    }
    for bad in [json!(-1), json!(1.5), json!("2"), neg_zero(), json!(true)] {
        assert_eq!(
            parameters(json!({"type": "array", "minItems": bad.clone(), "maxItems": bad.clone()})),
            vec![
                "schema.minItems must be a non-negative integer",
                "schema.maxItems must be a non-negative integer"
            ]
        );
        assert_eq!(
            parameters(json!({"type": "string", "maxLength": bad})),
            vec!["schema.maxLength must be a non-negative integer"]
        );
    }
    assert!(parameters(json!({"type": "array", "minItems": 0, "maxItems": 1e300})).is_empty());
    // Array bound checks come before the items subtree, scalar ones after enum/const.
    assert_eq!(
        parameters(json!({"type": "array", "items": {"type": "x"}, "minItems": -1})),
        vec![
            "schema.minItems must be a non-negative integer".to_string(),
            format!("schema.items.type must be one of {TYPES}")
        ]
    );
    assert_eq!(
        parameters(json!({"type": "integer", "minimum": "0", "enum": []})),
        vec![
            "schema.enum must be a non-empty array of integer values",
            "schema.minimum must be a finite number"
        ]
    );
}

// ----------------------------------------------------------- "Validating a value"

#[test]
fn rule1_annotation_only_accepts_lossless_values() {
    let any = json!({"description": "anything"});
    for value in [
        json!(null),
        json!({"a": [1, "x", {}]}),
        json!(-1.5),
        json!(0.0),
    ] {
        assert!(check(&any, &value, "value").is_empty());
    }
    assert_eq!(
        check(&any, &json!({"a": [neg_zero()]}), "value"),
        vec!["\"value\" must be a lossless JSON value"]
    );
    assert_eq!(
        check(&json!({}), &neg_zero(), ""),
        vec!["\"arguments\" must be a lossless JSON value"]
    );
}

#[test]
fn rule2_one_of_counts_matching_branches() {
    let schema = json!({"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "string", "enum": ["a"]}]});
    assert!(check(&schema, &json!(1.5), "v").is_empty());
    assert!(check(&schema, &json!("a"), "v").is_empty());
    assert_eq!(
        check(&schema, &json!(2), "v"),
        vec!["\"v\" must match exactly one oneOf branch (matched 2)"]
    );
    // One branch admits a string: its own violation is the value's.
    assert_eq!(
        check(&schema, &json!("b"), "v"),
        vec!["\"v\" must be one of [\"a\"]"]
    );
    let nested = json!({"type": "object", "properties": {"x": schema}});
    assert_eq!(
        args(&nested, &json!({"x": null})),
        vec![
            "\"x\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"x\" must be a number"
        ]
    );
}

#[test]
fn rule3_objects() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
        "required": ["b", "a", "b"],
        "additionalProperties": false
    });
    for not_object in [json!(null), json!([]), json!("{}"), json!(1)] {
        assert_eq!(
            args(&schema, &not_object),
            vec!["\"arguments\" must be an object"]
        );
    }
    assert_eq!(
        args(&schema, &json!({"z": 1, "a": 1, "y": 2})),
        vec![
            "missing required property \"b\"",
            "missing required property \"b\"",
            "\"a\" must be a string",
            "\"z\" is not a parameter; its parameters are \"a\", \"b\"",
            "\"y\" is not a parameter; its parameters are \"a\", \"b\"",
        ]
    );
    // Children follow the properties' key order, not the value's.
    assert_eq!(
        args(&schema, &json!({"b": "x", "a": 2})),
        vec!["\"a\" must be a string", "\"b\" must be a number"]
    );
    assert_eq!(
        check(&schema, &json!({"b": 1}), "value"),
        vec!["missing required property \"value.a\""]
    );
    let closed_empty = json!({"type": "object", "additionalProperties": false});
    assert!(args(&closed_empty, &json!({})).is_empty());
    assert_eq!(
        args(&closed_empty, &json!({"toString": 1})),
        vec!["\"toString\" is not a parameter, which takes none"]
    );
    let proto = json!({"type": "object", "properties": {"__proto__": {"type": "number"}, "constructor": {}}, "required": ["__proto__"]});
    assert!(args(&proto, &json!({"__proto__": 1})).is_empty());
    assert_eq!(
        args(&proto, &json!({"constructor": 1})),
        vec!["missing required property \"__proto__\""]
    );
    assert_eq!(
        args(&proto, &json!({"__proto__": "x"})),
        vec!["\"__proto__\" must be a number"]
    );
}

#[test]
fn rule3_whole_object_must_be_lossless() {
    let open = json!({"type": "object", "properties": {"a": {"type": "number"}}});
    assert_eq!(
        args(&open, &json!({"a": 1, "extra": [neg_zero()]})),
        vec!["\"arguments\" must be a lossless JSON object"]
    );
    assert_eq!(
        args(&open, &json!({"a": "x", "extra": [neg_zero()]})),
        vec!["\"a\" must be a number"],
        "the lossless check only runs when nothing else failed"
    );
    assert_eq!(
        args(&open, &json!({"a": neg_zero()})),
        vec!["\"a\" must be a finite JSON number"]
    );
}

#[test]
fn rule4_arrays() {
    let schema = json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "any": {"type": "array"}}});
    assert_eq!(
        args(&schema, &json!({"tags": "a"})),
        vec!["\"tags\" must be an array"]
    );
    assert_eq!(
        args(&schema, &json!({"tags": ["a", 1, null]})),
        vec![
            "\"tags[1]\" must be a string",
            "\"tags[2]\" must be a string"
        ]
    );
    assert_eq!(
        args(&schema, &json!({"any": [1, {"x": neg_zero()}]})),
        vec!["\"any\" must be a dense lossless JSON array"]
    );
    let servers = json!({"type": "object", "properties": {"servers": {"type": "array", "items": {
        "type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]
    }}}});
    assert_eq!(
        args(&servers, &json!({"servers": [{"host": "a"}, {"port": 1}]})),
        vec!["missing required property \"servers[1].host\""]
    );
}

#[test]
fn rule5_scalar_types() {
    let cases = [
        (
            json!({"type": "string"}),
            json!(1),
            "\"s\" must be a string",
        ),
        (
            json!({"type": "number"}),
            json!("1"),
            "\"s\" must be a number",
        ),
        (
            json!({"type": "number"}),
            neg_zero(),
            "\"s\" must be a finite JSON number",
        ),
        (
            json!({"type": "integer"}),
            json!("1"),
            "\"s\" must be an integer",
        ),
        (
            json!({"type": "integer"}),
            json!(1.5),
            "\"s\" must be an integer",
        ),
        (
            json!({"type": "integer"}),
            neg_zero(),
            "\"s\" must be an integer",
        ),
        (
            json!({"type": "boolean"}),
            json!(0),
            "\"s\" must be a boolean",
        ),
        (json!({"type": "null"}), json!(false), "\"s\" must be null"),
    ];
    for (schema, value, want) in cases {
        assert_eq!(
            check(&schema, &value, "s"),
            vec![want],
            "{schema} / {value}"
        );
    }
    for integral in [json!(1.0), json!(1e300), json!(-2), json!(u64::MAX)] {
        assert!(check(&json!({"type": "integer"}), &integral, "s").is_empty());
    }
    assert!(check(&json!({"type": "number"}), &json!(0), "s").is_empty());
}

#[test]
fn rule6_enum_then_const_with_js_json() {
    let numbers = json!({"type": "number", "enum": [1e21, 0.1, 1e-7]});
    assert_eq!(
        check(&numbers, &json!(2), "x"),
        vec!["\"x\" must be one of [1e+21,0.1,1e-7]"]
    );
    assert!(check(&numbers, &json!(1e21), "x").is_empty());
    let strings = json!({"type": "string", "enum": ["a", "b\"\n"]});
    assert_eq!(
        check(&strings, &json!("c"), "x"),
        vec!["\"x\" must be one of [\"a\",\"b\\\"\\n\"]"]
    );
    assert_eq!(
        check(
            &json!({"type": "string", "enum": ["a", "b"]}),
            &json!("c"),
            "x"
        ),
        vec!["\"x\" must be one of [\"a\",\"b\"]"]
    );
    assert_eq!(
        check(&json!({"type": "string", "const": "a"}), &json!("b"), "x"),
        vec!["\"x\" must be \"a\""]
    );
    assert_eq!(
        check(&json!({"type": "number", "const": 100.0}), &json!(1), "x"),
        vec!["\"x\" must be 100"]
    );
    assert_eq!(
        check(&json!({"type": "null", "const": null}), &json!(null), "x"),
        Vec::<String>::new()
    );
    let both = json!({"type": "integer", "enum": [1, 2], "const": 1});
    assert_eq!(
        check(&both, &json!(3), "x"),
        vec!["\"x\" must be one of [1,2]"]
    );
    assert_eq!(check(&both, &json!(2), "x"), vec!["\"x\" must be 1"]);
    // Numbers compare mathematically; booleans never equal numbers.
    assert!(
        check(
            &json!({"type": "integer", "enum": [9007199254740992u64]}),
            &json!(9007199254740992.0),
            "x"
        )
        .is_empty()
    );
    assert!(check(&json!({"type": "number", "const": -2.0}), &json!(-2), "x").is_empty());
}

// ---------------------------------------------------------------- bounds

#[test]
fn number_bounds_compare_as_javascript_doubles() {
    // Every number is the double `JSON.parse` gives for its text (docs/CONTRACTS.md, "Numbers"):
    // u64::MAX and 2^64 are the same double, so a bound of u64::MAX admits 2^64, exactly as
    // JavaScript's `18446744073709551616 <= 18446744073709551615` is true.
    let u64_range = json!({"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64});
    assert!(check(&u64_range, &json!(u64::MAX), "n").is_empty());
    let same_double: Value = serde_json::from_str("18446744073709551616").expect("json");
    assert!(check(&u64_range, &same_double, "n").is_empty());
    // The next double up (2^64 + 4096) is above the bound; the message prints the bound as
    // JavaScript prints it.
    let above: Value = serde_json::from_str("18446744073709555712").expect("json");
    assert_eq!(
        check(&u64_range, &above, "n"),
        vec!["\"n\" must be at most 18446744073709552000"]
    );
    assert_eq!(
        check(&u64_range, &json!(-1), "n"),
        vec!["\"n\" must be at least 0"]
    );
    let i64_range = json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX});
    assert!(check(&i64_range, &json!(i64::MIN), "n").is_empty());
    // i64::MAX rounds to 2^63: the value 2^63 is the same double.
    assert!(check(&i64_range, &json!(9223372036854775808u64), "n").is_empty());
    assert_eq!(
        check(&i64_range, &json!(9223372036854777856u64), "n"),
        vec!["\"n\" must be at most 9223372036854776000"]
    );
    // Around 2^53 integers that share a double are one number.
    let at_most_2_53 = json!({"type": "integer", "maximum": 9007199254740992u64});
    assert!(check(&at_most_2_53, &json!(9007199254740993u64), "n").is_empty());
    assert_eq!(
        check(&at_most_2_53, &json!(9007199254740994u64), "n"),
        vec!["\"n\" must be at most 9007199254740992"]
    );
    assert_eq!(
        check(&i64_range, &json!(-1e19), "n"),
        vec!["\"n\" must be at least -9223372036854776000"]
    );
    let fractional = json!({"type": "number", "minimum": 1.1, "maximum": 1e21});
    assert_eq!(
        check(&fractional, &json!(1), "n"),
        vec!["\"n\" must be at least 1.1"]
    );
    assert_eq!(
        check(&fractional, &json!(2e21), "n"),
        vec!["\"n\" must be at most 1e+21"]
    );
    // Bounds come after the type check and after enum/const; a min > max pair reports both.
    assert_eq!(
        check(&fractional, &json!("2"), "n"),
        vec!["\"n\" must be a number"]
    );
    assert_eq!(
        check(
            &json!({"type": "number", "enum": [5], "minimum": 10, "maximum": 0}),
            &json!(3),
            "n"
        ),
        vec![
            "\"n\" must be one of [5]",
            "\"n\" must be at least 10",
            "\"n\" must be at most 0"
        ]
    );
}

#[test]
fn string_bounds_count_code_points() {
    let schema = json!({"type": "string", "minLength": 2, "maxLength": 3});
    assert!(check(&schema, &json!("éé"), "s").is_empty());
    assert_eq!(
        check(&schema, &json!("\u{1F4A9}"), "s"),
        vec!["\"s\" must be at least 2 characters long"]
    );
    assert_eq!(
        check(&schema, &json!("abcd"), "s"),
        vec!["\"s\" must be at most 3 characters long"]
    );
    let one = json!({"type": "string", "minLength": 1.0, "maxLength": 1});
    assert_eq!(
        check(&one, &json!(""), "s"),
        vec!["\"s\" must be at least 1 character long"]
    );
    assert_eq!(
        check(&one, &json!("ab"), "s"),
        vec!["\"s\" must be at most 1 character long"]
    );
}

#[test]
fn array_bounds_come_before_elements() {
    let schema = json!({"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"}, "maxItems": 1}}});
    assert_eq!(
        args(&schema, &json!({"t": [1, 2]})),
        vec![
            "\"t\" must have at most 1 item",
            "\"t[0]\" must be a string",
            "\"t[1]\" must be a string"
        ]
    );
    let min = json!({"type": "array", "minItems": 2});
    assert_eq!(
        check(&min, &json!([]), "t"),
        vec!["\"t\" must have at least 2 items"]
    );
    assert_eq!(
        check(&json!({"type": "array", "minItems": 1}), &json!([]), "t"),
        vec!["\"t\" must have at least 1 item"]
    );
    assert_eq!(
        check(&json!({"type": "array", "maxItems": 0}), &json!([1]), "t"),
        vec!["\"t\" must have at most 0 items"]
    );
}

#[test]
fn validate_value_is_total_on_unsupported_schemas() {
    let weird = [
        json!(true),
        json!(null),
        json!({"type": ["string", "null"]}),
        json!({"type": "date"}),
        json!({"oneOf": "x"}),
        json!({"type": "object", "properties": [], "required": "a"}),
        json!({"type": "object", "required": ["a", 1]}),
        json!({"type": "array", "items": 5, "minItems": "x"}),
        json!({"type": "string", "enum": "x", "const": [1]}),
        json!({"type": "integer", "minimum": -1.5, "maximum": "9"}),
    ];
    for schema in weird {
        for value in [
            json!(null),
            json!({}),
            json!({"a": [1]}),
            json!("x"),
            json!(1.5),
            json!([1, 2]),
        ] {
            let _ = validate_value(&schema, &value, "v");
        }
    }
    assert_eq!(
        validate_value(&json!({"oneOf": "x"}), &json!(1), "v"),
        vec!["\"v\" must match exactly one oneOf branch (matched 0)"]
    );
    assert_eq!(
        validate_value(
            &json!({"type": "object", "required": ["a"]}),
            &json!({}),
            "v"
        ),
        vec!["missing required property \"v.a\""]
    );
    assert_eq!(
        validate_value(&json!({"type": "string", "const": [1]}), &json!("x"), "v"),
        vec!["\"v\" must be [1]"]
    );
    assert!(validate_value(&json!({"type": ["string"]}), &json!(1), "v").is_empty());
    assert_eq!(
        validate_value(
            &json!({"type": "integer", "minimum": -1.5}),
            &json!(-2),
            "v"
        ),
        vec!["\"v\" must be at least -1.5"]
    );
}

// -------------------------------------------------------------------- "Arguments"

#[test]
fn validate_args_reports_every_violation() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "s": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "additionalProperties": true},
            "closed": {"type": "object", "properties": {"x": {"type": "null"}}, "additionalProperties": false}
        },
        "required": ["path"]
    });
    let parameters = CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported");
    assert!(
        validate_args(
            &parameters,
            &json!({"path": "p", "unknown": [1], "opts": {"deep": true, "more": 1}})
        )
        .is_ok()
    );
    let err = validate_args(
        &parameters,
        &json!({"s": 1, "tags": ["a", 2], "closed": {"x": null, "y": 1}}),
    )
    .unwrap_err();
    assert_eq!(
        err.violations,
        vec![
            "missing required property \"path\"",
            "\"s\" must be a string",
            "\"tags[1]\" must be a string",
            "\"closed.y\" is not a property of \"closed\"; its properties are \"x\"",
        ]
    );
    assert_eq!(
        err.to_string(),
        "invalid arguments: missing required property \"path\"; \"s\" must be a string; \"tags[1]\" must be a string; \
         \"closed.y\" is not a property of \"closed\"; its properties are \"x\""
    );
    assert_eq!(err.name(), "ToolArgsError");
    assert_eq!(err.code().as_str(), "INVALID_ARGS");
    assert_eq!(
        validate_args(&parameters, &json!("x"))
            .unwrap_err()
            .to_string(),
        "invalid arguments: \"arguments\" must be an object"
    );
    let empty = CompiledSchema::compile(
        &json!({"type": "object", "properties": {}}),
        Vocabulary::Parameters,
    )
    .expect("ok");
    assert!(validate_args(&empty, &json!({"anything": true})).is_ok());
}

// ---------------------------------------------------------------- depth 5,000

const DEPTH: usize = 5_000;

fn object_with(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_string(), value);
    Value::Object(map)
}

/// Runs `f` on a thread with a 256 KiB stack.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no stack overflow")
}

#[test]
fn deep_schemas_are_asserted_and_compiled_iteratively() {
    let mut schema = json!({"type": "bogus"});
    for _ in 0..DEPTH {
        schema = object_with("items", schema);
        if let Value::Object(map) = &mut schema {
            map.insert("type".into(), json!("array"));
        }
    }
    let (violations, compiled_err) = small_stack(move || {
        let out = (
            unsupported_violations(&schema, Vocabulary::Parameters),
            CompiledSchema::compile(&schema, Vocabulary::Reference).is_err(),
        );
        std::mem::forget(schema);
        out
    });
    assert_eq!(
        violations,
        vec![format!(
            "schema{}.type must be one of {TYPES}",
            ".items".repeat(DEPTH)
        )]
    );
    assert!(compiled_err);
}

#[test]
fn deep_values_validate_iteratively() {
    // {"type":"array","items":{"type":"array", ... {"type":"string"}}} against [[[...[1]...]]]
    let mut schema = json!({"type": "string"});
    let mut value = json!(1);
    for _ in 0..DEPTH {
        schema = object_with("items", schema);
        if let Value::Object(map) = &mut schema {
            map.insert("type".into(), json!("array"));
        }
        value = Value::Array(vec![value]);
    }
    let (valid, messages, raw) = small_stack(move || {
        let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported");
        let out = (
            compiled.is_valid(&value),
            compiled.validate(&value, "v"),
            validate_value(&schema, &value, "v"),
        );
        std::mem::forget((schema, value));
        out
    });
    let want = vec![format!("\"v{}\" must be a string", "[0]".repeat(DEPTH))];
    assert!(!valid);
    assert_eq!(messages, want);
    assert_eq!(raw, want);
}

#[test]
fn deep_one_of_and_lossless_checks_are_iterative() {
    let mut schema = json!({"type": "null"});
    for _ in 0..DEPTH {
        schema = object_with(
            "oneOf",
            Value::Array(vec![json!({"type": "string"}), schema]),
        );
    }
    let mut value = neg_zero();
    for _ in 0..DEPTH {
        value = object_with("k", Value::Array(vec![value]));
    }
    let (one_of_null, one_of_one, open, any) = small_stack(move || {
        let compiled = CompiledSchema::compile(&schema, Vocabulary::Reference).expect("supported");
        let out = (
            compiled.validate(&json!(null), ""),
            compiled.validate(&json!(1), ""),
            validate_value(&json!({"type": "object"}), &value, ""),
            validate_value(&json!({}), &value, "v"),
        );
        std::mem::forget((schema, value));
        out
    });
    assert!(one_of_null.is_empty());
    assert_eq!(
        one_of_one,
        vec![
            "\"arguments\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"arguments\" must be a string"
        ]
    );
    assert_eq!(open, vec!["\"arguments\" must be a lossless JSON object"]);
    assert_eq!(any, vec!["\"v\" must be a lossless JSON value"]);
}

// ---------------------------------------------------------------- generated schemas and values

mod generated {
    use super::*;
    use proptest::prelude::*;

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c", "__proto__"]).prop_map(String::from)
    }

    fn leaf_schema() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({})),
            Just(json!({"type": "string"})),
            (0u8..3, 0u8..4).prop_map(
                |(min, max)| json!({"type": "string", "minLength": min, "maxLength": max})
            ),
            Just(json!({"type": "number"})),
            (-3i64..3, -3i64..3)
                .prop_map(|(min, max)| json!({"type": "integer", "minimum": min, "maximum": max})),
            Just(json!({"type": "number", "minimum": -1.5, "maximum": 1e300})),
            Just(json!({"type": "integer"})),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "null"})),
            Just(json!({"type": "string", "enum": ["a", "b"]})),
            Just(json!({"type": "integer", "enum": [1, 2.0]})),
            Just(json!({"type": "number", "const": 1})),
            Just(json!({"type": "boolean", "const": false})),
        ]
    }

    fn schema() -> impl Strategy<Value = Value> {
        leaf_schema().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                (inner.clone(), prop::option::of(0u8..3), prop::option::of(0u8..3)).prop_map(|(items, min, max)| {
                    let mut node = json!({"type": "array", "items": items});
                    if let Some(min) = min {
                        node["minItems"] = json!(min);
                    }
                    if let Some(max) = max {
                        node["maxItems"] = json!(max);
                    }
                    node
                }),
                Just(json!({"type": "array"})),
                (prop::collection::vec((key(), inner.clone(), any::<bool>()), 0..4), any::<bool>()).prop_map(
                    |(entries, closed)| {
                        let mut properties = Map::new();
                        let mut required = Vec::new();
                        for (name, child, is_required) in entries {
                            if is_required && !required.contains(&json!(name)) {
                                required.push(json!(name.clone()));
                            }
                            properties.insert(name, child);
                        }
                        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": !closed})
                    }
                ),
                prop::collection::vec(inner, 2..4).prop_map(|branches| json!({"oneOf": branches})),
            ]
        })
    }

    fn value() -> impl Strategy<Value = Value> {
        let zero = neg_zero();
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-3i64..4).prop_map(Value::from),
            prop::sample::select(vec![1.0, 2.0, 2.5, -1.5, 1e300]).prop_map(Value::from),
            Just(zero),
            prop::sample::select(vec!["", "a", "b", "ab", "é", "abc"]).prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

        /// `validate_value`, `CompiledSchema::validate` and `CompiledSchema::is_valid` agree.
        #[test]
        fn every_entry_point_agrees(schema in schema(), value in value()) {
            let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters);
            prop_assert!(compiled.is_ok(), "{schema} rejected: {:?}", compiled.err());
            let _ = check(&schema, &value, "v");
        }

        // The differential against the `jsonschema` crate is `tests/differential.rs` (10,000
        // cases, shaped values, the documented exclusions as predicates).
    }
}

#[test]
fn parameters_vocabulary_accepts_map_value_schemas() {
    use dsh_tools::subset::{CompiledSchema, Vocabulary, assert_supported, assert_supported_in};
    let schema = json!({
        "type": "object",
        "properties": {"fixed": {"type": "string"}},
        "additionalProperties": {"type": "integer", "maximum": 9}
    });
    assert!(assert_supported_in(&schema, Vocabulary::Parameters).is_ok());
    assert_eq!(
        assert_supported(&schema).unwrap_err().violations,
        vec!["schema.additionalProperties must be a boolean"]
    );
    let bad_values = json!({"type": "object", "additionalProperties": {"type": "date"}});
    assert_eq!(
        assert_supported_in(&bad_values, Vocabulary::Parameters)
            .unwrap_err()
            .violations,
        vec![
            "schema.additionalProperties.type must be one of object/array/string/number/integer/boolean/null"
        ]
    );
    let not_schema = json!({"type": "object", "additionalProperties": 3});
    assert_eq!(
        assert_supported_in(&not_schema, Vocabulary::Parameters)
            .unwrap_err()
            .violations,
        vec!["schema.additionalProperties must be a boolean or a schema object"]
    );
    let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).unwrap();
    assert!(compiled.is_valid(&json!({"fixed": "x", "a": 1, "b": 9.0})));
    assert!(!compiled.is_valid(&json!({"a": 10})));
    assert!(!compiled.is_valid(&json!({"fixed": 1})));
    assert_eq!(
        compiled.validate(
            &json!({"a": "x", "fixed": "ok", "b": 10, "c": {"deep": [1]}}),
            ""
        ),
        vec![
            "\"a\" must be an integer",
            "\"b\" must be at most 9",
            "\"c\" must be an integer"
        ]
    );
    assert_eq!(
        compiled.validate(&json!({"m": {"x": "y"}}), "value"),
        vec!["\"value.m\" must be an integer"]
    );
}

#[test]
fn min_and_max_properties_count_the_entries_of_an_object() {
    // Placement: objects only; without `type` they apply to objects (JSON Schema).
    assert!(
        parameters(json!({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 3.0})).is_empty()
    );
    assert!(parameters(json!({"minProperties": 1})).is_empty());
    assert_eq!(
        parameters(json!({"type": "array", "minProperties": 1})),
        vec!["schema.minProperties is not supported on type \"array\""]
    );
    assert_eq!(
        parameters(json!({"oneOf": [{"type": "object"}, {"type": "null"}], "maxProperties": 1})),
        vec!["schema.maxProperties is not supported beside oneOf"]
    );
    assert_eq!(
        reference(json!({"type": "object", "minProperties": 1})),
        vec![format!(
            "schema.minProperties is not a supported keyword {SUBSET}"
        )]
    );
    for bad in [json!(-1), json!(1.5), json!("2"), neg_zero(), json!(null)] {
        assert_eq!(
            parameters(
                json!({"type": "object", "minProperties": bad.clone(), "maxProperties": bad.clone()})
            ),
            vec![
                "schema.minProperties must be a non-negative integer",
                "schema.maxProperties must be a non-negative integer"
            ]
        );
        assert_eq!(
            parameters(json!({"maxProperties": bad})),
            vec!["schema.maxProperties must be a non-negative integer"]
        );
    }
    // Count checks come before the properties subtree.
    assert_eq!(
        parameters(
            json!({"type": "object", "properties": {"a": {"type": "x"}}, "minProperties": -1})
        ),
        vec![
            "schema.minProperties must be a non-negative integer",
            format!("schema.properties.a.type must be one of {TYPES}").as_str()
        ]
    );

    // Validation: after the missing required properties, before the children.
    let map = json!({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2, "maxProperties": 3});
    assert!(check(&map, &json!({"a": 1, "b": 2}), "m").is_empty());
    assert_eq!(
        check(&map, &json!({"a": "x"}), "m"),
        vec![
            "\"m\" must have at least 2 properties",
            "\"m.a\" must be an integer"
        ]
    );
    assert_eq!(
        check(&map, &json!({"a": 1, "b": 2, "c": 3, "d": 4}), "m"),
        vec!["\"m\" must have at most 3 properties"]
    );
    assert_eq!(
        check(&map, &json!({}), "m"),
        vec!["\"m\" must have at least 2 properties"]
    );
    let one = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "minProperties": 1, "maxProperties": 1});
    assert_eq!(
        check(&one, &json!({}), "o"),
        vec![
            "missing required property \"o.a\"",
            "\"o\" must have at least 1 property"
        ]
    );
    assert_eq!(
        check(&one, &json!({"a": "x", "b": 1}), "o"),
        vec!["\"o\" must have at most 1 property"]
    );
    // Without `type`, only objects are counted.
    let typeless = json!({"maxProperties": 0});
    assert!(check(&typeless, &json!([1, 2]), "v").is_empty());
    assert!(check(&typeless, &json!("ab"), "v").is_empty());
    assert!(!check(&typeless, &json!({"a": 1}), "v").is_empty());
    // Recursion that needs an entry of itself has no base case.
    assert_eq!(
        parameters(
            json!({"type": "object", "additionalProperties": {"$ref": "#"}, "minProperties": 1})
        ),
        vec![
            "schema.additionalProperties.$ref refers to a schema no finite value satisfies (its recursion has no base case)"
        ]
    );
}
