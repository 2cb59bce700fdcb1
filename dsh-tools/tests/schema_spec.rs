//! `ToolSchema` for std types and the `SchemaSpec` → JSON Schema compiler (key order of
//! REFERENCE §4.2, bounds only in parameter schemas).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use dsh_tools::schema::{
    Additional, Literal, Property, SchemaSpec, SizeBounds, SpecKind, ToolSchema,
};
use serde_json::{Value, json};

fn params<T: ToolSchema + ?Sized>() -> String {
    T::SCHEMA.to_parameter_value_schema().unwrap().to_string()
}

fn output<T: ToolSchema + ?Sized>() -> String {
    T::SCHEMA.to_value_schema().unwrap().to_string()
}

#[test]
fn integer_widths_are_bounded_integers_never_formats() {
    assert_eq!(
        params::<u8>(),
        r#"{"type":"integer","minimum":0,"maximum":255}"#
    );
    assert_eq!(
        params::<u16>(),
        r#"{"type":"integer","minimum":0,"maximum":65535}"#
    );
    assert_eq!(
        params::<u32>(),
        r#"{"type":"integer","minimum":0,"maximum":4294967295}"#
    );
    assert_eq!(
        params::<u64>(),
        r#"{"type":"integer","minimum":0,"maximum":9007199254740991}"#
    );
    assert_eq!(
        params::<i8>(),
        r#"{"type":"integer","minimum":-128,"maximum":127}"#
    );
    assert_eq!(
        params::<i16>(),
        r#"{"type":"integer","minimum":-32768,"maximum":32767}"#
    );
    assert_eq!(
        params::<i32>(),
        r#"{"type":"integer","minimum":-2147483648,"maximum":2147483647}"#
    );
    assert_eq!(
        params::<i64>(),
        r#"{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991}"#
    );
    assert_eq!(params::<usize>(), params::<u64>());
    assert_eq!(params::<isize>(), params::<i64>());
    assert_eq!(params::<u128>(), params::<u64>());
    assert_eq!(params::<i128>(), params::<i64>());
    for schema in [params::<u8>(), params::<i64>(), params::<u128>()] {
        assert!(!schema.contains("format"), "{schema}");
    }
}

#[test]
fn output_schemas_stay_inside_the_reference_subset() {
    assert_eq!(output::<u8>(), r#"{"type":"integer"}"#);
    assert_eq!(output::<char>(), r#"{"type":"string"}"#);
    assert_eq!(
        output::<[u8; 2]>(),
        r#"{"type":"array","items":{"type":"integer"}}"#
    );
    assert_eq!(
        output::<HashMap<String, u8>>(),
        r#"{"type":"object","additionalProperties":true}"#
    );
    for schema in [output::<f32>(), output::<i64>(), output::<Vec<char>>()] {
        dsh_tools::subset::assert_supported(&serde_json::from_str(&schema).unwrap()).unwrap();
    }
}

#[test]
fn scalars_and_strings() {
    assert_eq!(params::<f64>(), r#"{"type":"number"}"#);
    assert_eq!(
        params::<f32>(),
        r#"{"type":"number","minimum":-3.4028234663852886e+38,"maximum":3.4028234663852886e+38}"#
    );
    assert_eq!(params::<bool>(), r#"{"type":"boolean"}"#);
    assert_eq!(params::<()>(), r#"{"type":"null"}"#);
    assert_eq!(
        params::<char>(),
        r#"{"type":"string","minLength":1,"maxLength":1}"#
    );
    for schema in [
        params::<String>(),
        params::<str>(),
        params::<&str>(),
        params::<Cow<'static, str>>(),
        params::<PathBuf>(),
        params::<Box<str>>(),
        params::<Arc<String>>(),
    ] {
        assert_eq!(schema, r#"{"type":"string"}"#);
    }
    assert_eq!(params::<Value>(), "{}");
}

#[test]
fn containers() {
    assert_eq!(
        params::<Vec<bool>>(),
        r#"{"type":"array","items":{"type":"boolean"}}"#
    );
    assert_eq!(
        params::<[bool; 3]>(),
        r#"{"type":"array","items":{"type":"boolean"},"minItems":3,"maxItems":3}"#
    );
    assert_eq!(
        params::<HashMap<String, bool>>(),
        r#"{"type":"object","additionalProperties":{"type":"boolean"}}"#
    );
    assert_eq!(
        params::<BTreeMap<String, bool>>(),
        params::<HashMap<String, bool>>()
    );
    assert_eq!(
        params::<serde_json::Map<String, Value>>(),
        r#"{"type":"object","additionalProperties":true}"#
    );
}

#[test]
fn option_accepts_null_without_doubling_it() {
    assert_eq!(
        params::<Option<String>>(),
        r#"{"oneOf":[{"type":"string"},{"type":"null"}]}"#
    );
    // Already nullable inner types are not wrapped again.
    assert_eq!(params::<Option<Value>>(), "{}");
    assert_eq!(params::<Option<()>>(), r#"{"type":"null"}"#);
    assert_eq!(params::<Option<Option<bool>>>(), params::<Option<bool>>());
    assert_eq!(
        params::<Option<Vec<String>>>(),
        r#"{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]}"#
    );
}

#[test]
fn parameter_root_has_reference_key_order_and_required_list() {
    const ARGS: SchemaSpec = SchemaSpec::object(&[
        Property::new("path", &String::SCHEMA).described("Absolute path"),
        Property::new("offset", &<Option<u64>>::SCHEMA),
        Property::new("tags", &<Vec<String>>::SCHEMA),
    ]);
    assert_eq!(
        ARGS.to_parameters_schema().unwrap(),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute path"},
                "offset": {"oneOf": [
                    {"type": "integer", "minimum": 0, "maximum": 9007199254740991u64},
                    {"type": "null"}
                ]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path", "tags"]
        })
    );
    // Key order is observable: check the text, not only the value.
    let text = ARGS.to_parameters_schema().unwrap().to_string();
    assert!(
        text.starts_with(r#"{"type":"object","properties":{"path":{"type":"string","description""#)
    );
    assert!(text.ends_with(r#""required":["path","tags"]}"#));
}

#[test]
fn empty_parameter_root() {
    const NONE: SchemaSpec = SchemaSpec::object(&[]);
    assert_eq!(
        NONE.to_parameters_schema().unwrap().to_string(),
        r#"{"type":"object","properties":{}}"#
    );
}

#[test]
fn nested_objects_declare_additional_properties_before_properties() {
    static INNER_PROPS: [Property; 1] = [Property::new("host", &String::SCHEMA)];
    static INNER: SchemaSpec = SchemaSpec {
        kind: SpecKind::Object {
            properties: &INNER_PROPS,
            flatten: &[],
            additional: Additional::Deny,
        },
        meta: dsh_tools::schema::Meta::described("A server"),
        checks: dsh_tools::schema::Checks::NONE,
    };
    assert_eq!(
        INNER.to_value_schema().unwrap().to_string(),
        r#"{"type":"object","description":"A server","additionalProperties":false,"properties":{"host":{"type":"string"}},"required":["host"]}"#
    );
}

#[test]
fn flatten_merges_properties_and_optional_flatten_relaxes_required() {
    static BASE_PROPS: [Property; 1] = [Property::new("id", &u8::SCHEMA)];
    static BASE: SchemaSpec = SchemaSpec::object(&BASE_PROPS);
    static OPT_BASE: SchemaSpec = SchemaSpec::new(SpecKind::Optional(&BASE));
    static OUTER_PROPS: [Property; 1] = [Property::new("name", &String::SCHEMA)];
    static OUTER: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &OUTER_PROPS,
        flatten: &[&BASE],
        additional: Additional::Allow,
    });
    static OUTER_OPT: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &OUTER_PROPS,
        flatten: &[&OPT_BASE],
        additional: Additional::Allow,
    });
    assert_eq!(
        OUTER.to_parameters_schema().unwrap().to_string(),
        r#"{"type":"object","properties":{"name":{"type":"string"},"id":{"type":"integer","minimum":0,"maximum":255}},"required":["name","id"]}"#
    );
    assert_eq!(
        OUTER_OPT.to_parameters_schema().unwrap().to_string(),
        r#"{"type":"object","properties":{"name":{"type":"string"},"id":{"type":"integer","minimum":0,"maximum":255}},"required":["name"]}"#
    );
}

#[test]
fn flatten_conflicts_and_non_objects_are_reported_with_their_path() {
    static DUP_PROPS: [Property; 1] = [Property::new("id", &u8::SCHEMA)];
    static DUP: SchemaSpec = SchemaSpec::object(&DUP_PROPS);
    static CLASH: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &DUP_PROPS,
        flatten: &[&DUP],
        additional: Additional::Allow,
    });
    let err = CLASH.to_parameters_schema().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported JSON schema: parameters.properties.id is declared twice (serde flatten)"
    );
    static NOT_OBJECT: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &[],
        flatten: &[&String::SCHEMA],
        additional: Additional::Allow,
    });
    assert_eq!(
        NOT_OBJECT.to_parameters_schema().unwrap_err().violations,
        vec!["parameters flattens a schema that is not an object".to_owned()]
    );
    assert_eq!(
        String::SCHEMA
            .to_parameters_schema()
            .unwrap_err()
            .violations,
        vec!["parameters must be an object schema (a struct or named parameters)".to_owned()]
    );
}

#[test]
fn enums_consts_and_unions() {
    static COLOURS: SchemaSpec = SchemaSpec::new(SpecKind::Enum(&[
        Literal::Str("red"),
        Literal::Str("green"),
    ]));
    assert_eq!(
        COLOURS.to_value_schema().unwrap().to_string(),
        r#"{"type":"string","enum":["red","green"]}"#
    );
    static MIXED: SchemaSpec =
        SchemaSpec::new(SpecKind::Enum(&[Literal::Str("a"), Literal::Int(1)]));
    assert_eq!(
        MIXED.to_value_schema().unwrap_err().violations,
        vec!["schema.enum must hold values of one JSON type".to_owned()]
    );
    static TAG: SchemaSpec = SchemaSpec::new(SpecKind::Const(Literal::Str("circle")));
    assert_eq!(
        TAG.to_value_schema().unwrap().to_string(),
        r#"{"type":"string","const":"circle"}"#
    );
    static UNION: SchemaSpec = SchemaSpec {
        kind: SpecKind::OneOf(&[String::SCHEMA, <u8>::SCHEMA]),
        meta: dsh_tools::schema::Meta::described("text or a byte"),
        checks: dsh_tools::schema::Checks::NONE,
    };
    assert_eq!(
        UNION.to_parameter_value_schema().unwrap().to_string(),
        r#"{"oneOf":[{"type":"string"},{"type":"integer","minimum":0,"maximum":255}],"description":"text or a byte"}"#
    );
    // Option of a union adds one `null` branch to the same list.
    static OPT_UNION: SchemaSpec = SchemaSpec::new(SpecKind::Optional(&UNION));
    assert_eq!(
        OPT_UNION.to_value_schema().unwrap().to_string(),
        r#"{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}],"description":"text or a byte"}"#
    );
}

#[test]
fn non_finite_and_negative_zero_literals_are_rejected() {
    static NAN: SchemaSpec = SchemaSpec::new(SpecKind::Const(Literal::Float(f64::NAN)));
    assert_eq!(
        NAN.to_value_schema().unwrap_err().violations,
        vec!["schema holds a number that is not lossless JSON".to_owned()]
    );
    static NEG_ZERO: SchemaSpec = SchemaSpec::new(SpecKind::Const(Literal::Float(-0.0)));
    assert!(NEG_ZERO.to_value_schema().is_err());
}

#[test]
fn property_description_overrides_and_size_bounds() {
    static SHORT: SchemaSpec = SchemaSpec::new(SpecKind::String(SizeBounds {
        min: Some(1),
        max: Some(8),
    }))
    .described("own");
    static ARGS: [Property; 1] = [Property::new("code", &SHORT).described("from the parameter")];
    assert_eq!(
        SchemaSpec::object(&ARGS)
            .to_parameters_schema()
            .unwrap()
            .to_string(),
        r#"{"type":"object","properties":{"code":{"type":"string","description":"from the parameter","minLength":1,"maxLength":8}},"required":["code"]}"#
    );
}

#[test]
fn a_compiled_parameter_schema_validates_what_it_describes() {
    const ARGS: SchemaSpec = SchemaSpec::object(&[
        Property::new("count", &u8::SCHEMA),
        Property::new("letter", &char::SCHEMA),
    ]);
    let schema = ARGS.to_parameters_schema().unwrap();
    let compiled = dsh_tools::subset::CompiledSchema::compile(
        &schema,
        dsh_tools::subset::Vocabulary::Parameters,
    )
    .unwrap();
    let err = dsh_tools::args::validate_args(&compiled, &json!({"count": 256, "letter": "ab"}))
        .unwrap_err();
    assert_eq!(
        err.violations,
        vec![
            "\"count\" must be at most 255".to_owned(),
            "\"letter\" must be at most 1 character long".to_owned()
        ]
    );
    dsh_tools::args::validate_args(&compiled, &json!({"count": 255.0, "letter": "é"})).unwrap();
}
