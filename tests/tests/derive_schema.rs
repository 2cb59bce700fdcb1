//! `#[derive(ToolSchema)]`: every serde representation and attribute, as exact JSON (key order
//! included).

#![allow(dead_code, reason = "the types exist for their schemas")]

use std::collections::HashMap;

use dsh_tools::ToolSchema;
use dsh_tools::schema::SchemaSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The parameter-vocabulary schema (bounds kept) must be exactly `expected`, key order included.
#[track_caller]
fn exact(spec: &SchemaSpec, expected: Value) {
    let actual = spec.to_parameter_value_schema().unwrap();
    assert_eq!(actual.to_string(), expected.to_string());
}

const U8: fn() -> Value = || json!({"type": "integer", "minimum": 0, "maximum": 255});

// ----- structs -----

/// A search request.
///
/// Second paragraph.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Search {
    /// The pattern.
    pattern: String,
    /// How many results.
    limit: Option<u8>,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(rename = "dir")]
    directory: String,
    #[serde(skip)]
    cache: Vec<u8>,
    #[serde(skip_deserializing)]
    computed: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    globs: Vec<String>,
    r#type: u8,
    #[serde(default = "ten")]
    depth: u8,
    #[serde(default, skip_serializing)]
    trace: bool,
}

fn ten() -> u8 {
    10
}

#[test]
fn struct_fields_docs_options_and_defaults() {
    exact(
        &Search::SCHEMA,
        json!({
            "type": "object",
            "description": "A search request.\n\nSecond paragraph.",
            "additionalProperties": true,
            "properties": {
                "pattern": {"type": "string", "description": "The pattern."},
                "limit": {"oneOf": [U8(), {"type": "null"}], "description": "How many results."},
                "case_sensitive": {"type": "boolean"},
                "dir": {"type": "string"},
                "after": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                "globs": {"type": "array", "items": {"type": "string"}},
                "type": U8(),
                "depth": U8(),
                "trace": {"type": "boolean"}
            },
            "required": ["pattern", "dir", "type"]
        }),
    );
}

#[test]
fn output_schemas_drop_bounds() {
    #[derive(Serialize, Deserialize, ToolSchema)]
    struct Out {
        n: u8,
    }
    assert_eq!(
        Out::SCHEMA.to_value_schema().unwrap().to_string(),
        r#"{"type":"object","additionalProperties":true,"properties":{"n":{"type":"integer"}},"required":["n"]}"#
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(
    deny_unknown_fields,
    default,
    rename = "Renamed",
    bound = "",
    expecting = "a config",
    crate = "serde"
)]
struct Config {
    verbose: bool,
    depth: u8,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            verbose: false,
            depth: 3,
        }
    }
}

#[test]
fn deny_unknown_fields_container_default_and_harmless_attributes() {
    exact(
        &Config::SCHEMA,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"verbose": {"type": "boolean"}, "depth": U8()}
        }),
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Aliased {
    #[serde(alias = "file")]
    path: String,
    #[serde(rename(serialize = "n", deserialize = "n", deserialize = "count"))]
    number: u8,
}

#[test]
fn aliases_list_the_main_name_and_deny_other_keys() {
    // serde reads `{"path": .., "file": ..}` as a duplicate field: only a closed object is sound.
    exact(
        &Aliased::SCHEMA,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"path": {"type": "string"}, "n": U8()},
            "required": ["path", "n"]
        }),
    );
}

/// A user id.
#[derive(Serialize, Deserialize, ToolSchema)]
struct UserId(u8);

/// An opaque name.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(transparent)]
struct Name {
    value: String,
    #[serde(skip)]
    cache: Option<u8>,
}

/// Nothing at all.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Nothing;

#[test]
fn newtype_transparent_and_unit_structs() {
    exact(
        &UserId::SCHEMA,
        json!({"type": "integer", "description": "A user id.", "minimum": 0, "maximum": 255}),
    );
    exact(
        &Name::SCHEMA,
        json!({"type": "string", "description": "An opaque name."}),
    );
    exact(
        &Nothing::SCHEMA,
        json!({"type": "null", "description": "Nothing at all."}),
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "kind", rename = "point")]
struct Point {
    x: u8,
}

#[test]
fn a_tagged_struct_may_carry_its_tag() {
    exact(
        &Point::SCHEMA,
        json!({
            "type": "object",
            "additionalProperties": true,
            "properties": {"kind": {"type": "string", "const": "point"}, "x": U8()},
            "required": ["x"]
        }),
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Outer {
    id: u8,
    #[serde(flatten)]
    inner: Inner,
    #[serde(flatten)]
    maybe: Option<Maybe>,
    #[serde(flatten)]
    rest: HashMap<String, bool>,
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Inner {
    /// Inner docs.
    name: String,
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Maybe {
    extra: u8,
}

#[test]
fn flatten_merges_properties_and_the_last_map_takes_the_rest() {
    // Output vocabulary: the reference subset has only boolean `additionalProperties`, so the
    // map's value schema is dropped there (parameter schemas keep it).
    assert_eq!(
        Outer::SCHEMA.to_value_schema().unwrap().to_string(),
        json!({
            "type": "object",
            "additionalProperties": true,
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string", "description": "Inner docs."},
                "extra": {"type": "integer"}
            },
            "required": ["id", "name"]
        })
        .to_string()
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Page<T> {
    items: Vec<T>,
    next: Option<T>,
}

#[test]
fn generic_types_bound_their_parameters() {
    exact(
        &Page::<bool>::SCHEMA,
        json!({
            "type": "object",
            "additionalProperties": true,
            "properties": {
                "items": {"type": "array", "items": {"type": "boolean"}},
                "next": {"oneOf": [{"type": "boolean"}, {"type": "null"}]}
            },
            "required": ["items"]
        }),
    );
}

// ----- rename_all -----

macro_rules! renamed_fields {
    ($($ty:ident, $m:ident => $rule:literal, $field:literal, $variant:literal;)*) => {$(
        #[derive(Serialize, Deserialize, ToolSchema)]
        #[serde(rename_all = $rule)]
        struct $ty {
            very_tasty_field: u8,
        }

        mod $m {
            use super::*;
            #[derive(Serialize, Deserialize, ToolSchema)]
            #[serde(rename_all = $rule)]
            pub(super) enum Variants {
                VeryTastyVariant,
                Other,
            }
        }
    )*

    #[test]
    fn rename_all_follows_serde_for_fields_and_variants() {
        $(
            let schema = $ty::SCHEMA.to_parameter_value_schema().unwrap();
            let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
            assert_eq!(keys, [$field], "fields, {}", $rule);
            serde_json::from_value::<$ty>(json!({$field: 1})).unwrap();
            let variants = $m::Variants::SCHEMA.to_parameter_value_schema().unwrap();
            assert_eq!(variants["enum"][0], $variant, "variants, {}", $rule);
            serde_json::from_value::<$m::Variants>(json!($variant)).unwrap();
        )*
    }
    };
}

renamed_fields! {
    Lower, lower => "lowercase", "very_tasty_field", "verytastyvariant";
    Upper, upper => "UPPERCASE", "VERY_TASTY_FIELD", "VERYTASTYVARIANT";
    Pascal, pascal => "PascalCase", "VeryTastyField", "VeryTastyVariant";
    Camel, camel => "camelCase", "veryTastyField", "veryTastyVariant";
    Snake, snake => "snake_case", "very_tasty_field", "very_tasty_variant";
    ScreamingSnake, screaming_snake => "SCREAMING_SNAKE_CASE", "VERY_TASTY_FIELD", "VERY_TASTY_VARIANT";
    Kebab, kebab => "kebab-case", "very-tasty-field", "very-tasty-variant";
    ScreamingKebab, screaming_kebab => "SCREAMING-KEBAB-CASE", "VERY-TASTY-FIELD", "VERY-TASTY-VARIANT";
}

// ----- enums -----

/// A color.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    #[serde(rename = "GREEN", alias = "verde")]
    Green,
    #[serde(skip)]
    Hidden,
    #[serde(skip_deserializing)]
    WriteOnly,
    #[serde(skip_serializing)]
    ReadOnly,
}

#[test]
fn unit_enums_are_string_enums() {
    exact(
        &Color::SCHEMA,
        json!({"type": "string", "description": "A color.", "enum": ["red", "GREEN", "readonly"]}),
    );
}

/// A shape.
#[derive(Serialize, Deserialize, ToolSchema)]
enum Shape {
    /// Ignored: unit variants share one branch.
    Empty,
    /// A circle's radius.
    Circle(u8),
    /// A rectangle.
    #[serde(rename_all = "UPPERCASE")]
    Rect {
        width: u8,
        height: Option<u8>,
    },
    Point,
}

#[test]
fn externally_tagged_enums() {
    exact(
        &Shape::SCHEMA,
        json!({
            "oneOf": [
                {"type": "string", "enum": ["Empty", "Point"]},
                {
                    "type": "object",
                    "description": "A circle's radius.",
                    "additionalProperties": false,
                    "properties": {"Circle": U8()},
                    "required": ["Circle"]
                },
                {
                    "type": "object",
                    "description": "A rectangle.",
                    "additionalProperties": false,
                    "properties": {"Rect": {
                        "type": "object",
                        "additionalProperties": true,
                        "properties": {"WIDTH": U8(), "HEIGHT": {"oneOf": [U8(), {"type": "null"}]}},
                        "required": ["WIDTH"]
                    }},
                    "required": ["Rect"]
                }
            ],
            "description": "A shape."
        }),
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
enum MaybeNewtype {
    Some(Option<u8>),
    None,
}

#[test]
fn an_externally_tagged_option_payload_is_still_required() {
    let schema = MaybeNewtype::SCHEMA.to_parameter_value_schema().unwrap();
    assert_eq!(schema["oneOf"][0]["required"], json!(["Some"]));
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Event {
    Started,
    /// Moved by a delta.
    Moved {
        dx: i8,
    },
    Wrapped(Inner),
}

#[test]
fn internally_tagged_enums() {
    let tag = |name: &str| json!({"type": "string", "const": name});
    exact(
        &Event::SCHEMA,
        json!({"oneOf": [
            {
                "type": "object",
                "additionalProperties": false,
                "properties": {"type": tag("started")},
                "required": ["type"]
            },
            {
                "type": "object",
                "description": "Moved by a delta.",
                "additionalProperties": false,
                "properties": {"type": tag("moved"), "dx": {"type": "integer", "minimum": -128, "maximum": 127}},
                "required": ["type", "dx"]
            },
            {
                "type": "object",
                "additionalProperties": false,
                "properties": {"type": tag("wrapped"), "name": {"type": "string", "description": "Inner docs."}},
                "required": ["type", "name"]
            }
        ]}),
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "op")]
enum OpenEvent {
    Ping,
    Wrapped(Inner),
}

#[test]
fn internally_tagged_enums_without_deny_stay_open() {
    let schema = OpenEvent::SCHEMA.to_parameter_value_schema().unwrap();
    assert_eq!(schema["oneOf"][0]["additionalProperties"], json!(true));
    assert_eq!(schema["oneOf"][1]["additionalProperties"], json!(true));
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    Newtype(u8),
    Struct { a: String },
}

#[test]
fn adjacently_tagged_enums() {
    let tag = |name: &str| json!({"type": "string", "const": name});
    exact(
        &Adjacent::SCHEMA,
        json!({"oneOf": [
            {
                "type": "object",
                "additionalProperties": true,
                "properties": {"t": tag("Unit"), "c": {"type": "null"}},
                "required": ["t"]
            },
            {
                "type": "object",
                "additionalProperties": true,
                "properties": {"t": tag("Newtype"), "c": U8()},
                "required": ["t", "c"]
            },
            {
                "type": "object",
                "additionalProperties": true,
                "properties": {"t": tag("Struct"), "c": {
                    "type": "object",
                    "additionalProperties": true,
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"]
                }},
                "required": ["t", "c"]
            }
        ]}),
    );
}

/// A loose value.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(untagged)]
enum Loose {
    Nothing,
    /// A number.
    Number(u8),
    Named {
        a: String,
    },
}

#[test]
fn untagged_enums() {
    exact(
        &Loose::SCHEMA,
        json!({
            "oneOf": [
                {"type": "null"},
                {"type": "integer", "description": "A number.", "minimum": 0, "maximum": 255},
                {
                    "type": "object",
                    "additionalProperties": true,
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"]
                }
            ],
            "description": "A loose value."
        }),
    );
}

/// Only one way in.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "type")]
enum Single {
    /// Ignored: the enum's docs win.
    Only { a: u8 },
    #[serde(skip_deserializing)]
    Gone,
}

#[test]
fn a_single_branch_is_emitted_directly() {
    exact(
        &Single::SCHEMA,
        json!({
            "type": "object",
            "description": "Only one way in.",
            "additionalProperties": true,
            "properties": {"type": {"type": "string", "const": "Only"}, "a": U8()},
            "required": ["type", "a"]
        }),
    );
}

#[test]
fn derived_schemas_compose_as_tool_parameters() {
    assert_eq!(
        Search::SCHEMA.to_parameters_schema().unwrap()["required"],
        json!(["pattern", "dir", "type"])
    );
    let err = Shape::SCHEMA.to_parameters_schema().unwrap_err();
    assert!(err.to_string().contains("object"), "{err}");
}

// ----- length on maps -----

/// Labels of a deployment.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Labels {
    /// Between one and three labels.
    #[schema(length(min = 1, max = 3))]
    labels: HashMap<String, u8>,
    /// At most two annotations, when given.
    #[validate(length(max = 2))]
    annotations: Option<std::collections::BTreeMap<String, String>>,
    /// Exactly one entry of anything.
    #[schemars(length(equal = 1))]
    extra: serde_json::Map<String, Value>,
}

#[test]
fn length_on_a_map_bounds_its_entries() {
    exact(
        &Labels::SCHEMA,
        json!({
            "type": "object",
            "description": "Labels of a deployment.",
            "additionalProperties": true,
            "properties": {
                "labels": {"type": "object", "description": "Between one and three labels.", "additionalProperties": U8(), "minProperties": 1, "maxProperties": 3},
                "annotations": {"oneOf": [
                    {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2},
                    {"type": "null"}
                ], "description": "At most two annotations, when given."},
                "extra": {"type": "object", "description": "Exactly one entry of anything.", "additionalProperties": true, "minProperties": 1, "maxProperties": 1}
            },
            "required": ["labels", "extra"]
        }),
    );
    // Output schemas keep the shape only.
    assert_eq!(
        Labels::SCHEMA.to_value_schema().unwrap()["properties"]["labels"],
        json!({"type": "object", "description": "Between one and three labels.", "additionalProperties": true})
    );
    let def = dsh_tools::ToolDefinition::builder("labels")
        .description("Set labels.")
        .parameters_spec(&Labels::SCHEMA)
        .output_json(json!({}))
        .execute(|_args, _ctx| async { Ok(Value::Null) })
        .build()
        .expect("builds");
    let ok = json!({"labels": {"a": 1}, "annotations": null, "extra": {"x": [1]}});
    def.validate_args(&ok).expect("valid");
    let bad = json!({"labels": {}, "annotations": {"a": "1", "b": "2", "c": "3"}, "extra": {}});
    assert_eq!(
        def.validate_args(&bad).unwrap_err().violations,
        vec![
            "\"labels\" must have at least 1 property",
            "\"annotations\" must have at most 2 properties",
            "\"extra\" must have at least 1 property",
        ]
    );
}

/// `length` on a struct has no meaning: the spec compiler says so.
#[test]
fn length_on_a_struct_is_refused() {
    const SPEC: SchemaSpec = <Labels as ToolSchema>::SCHEMA;
    let boxed = SchemaSpec::lazy(|| &SPEC).with_checks(dsh_tools::schema::Checks {
        max_length: Some(1),
        ..dsh_tools::schema::Checks::NONE
    });
    let err = boxed.to_parameter_value_schema().unwrap_err();
    assert_eq!(
        err.violations,
        vec![
            "schema: constraint attributes do not apply to a struct (an object with named properties) (`range` applies to numbers, `length` to strings, arrays and maps, `regex`/`email`/`url`/`format` to strings)"
        ]
    );
}

// ----- #[schema(with = "path")] -----

/// A semantic version, `1.2.3`, written as a string. It has no `ToolSchema` of its own.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Version(pub String);

/// The schema of [`Version`], for `#[schema(with = ...)]`.
pub const fn version_schema() -> SchemaSpec {
    <String as ToolSchema>::SCHEMA
        .with_checks(dsh_tools::schema::Checks {
            pattern: Some(r"^\d+\.\d+\.\d+$"),
            ..dsh_tools::schema::Checks::NONE
        })
        .described("A semantic version.")
}

/// A release.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct Release {
    /// The version being released.
    #[schema(with = "version_schema")]
    version: Version,
    /// The version it replaces; the override's checks and the field's own add up.
    #[schema(with = crate::version_schema, length(max = 8))]
    previous: Version,
}

#[test]
fn with_replaces_the_schema_and_keeps_the_fields_constraints() {
    exact(
        &Release::SCHEMA,
        json!({
            "type": "object",
            "description": "A release.",
            "additionalProperties": true,
            "properties": {
                "version": {"type": "string", "description": "The version being released.", "pattern": "^\\d+\\.\\d+\\.\\d+$"},
                "previous": {"type": "string", "description": "The version it replaces; the override's checks and the field's own add up.", "maxLength": 8, "pattern": "^\\d+\\.\\d+\\.\\d+$"}
            },
            "required": ["version", "previous"]
        }),
    );
    let def = dsh_tools::ToolDefinition::builder("release")
        .description("Release.")
        .parameters_spec(&Release::SCHEMA)
        .output_json(json!({}))
        .execute(|_args, _ctx| async { Ok(Value::Null) })
        .build()
        .expect("builds");
    let good = json!({"version": "1.2.3", "previous": "1.2.2"});
    def.validate_args(&good).expect("valid");
    let release: Release = serde_json::from_value(good).expect("deserialises");
    assert_eq!(release.version, Version("1.2.3".into()));
    assert_eq!(
        def.validate_args(&json!({"version": "1.2", "previous": "10.20.300"}))
            .unwrap_err()
            .violations,
        vec![
            "\"version\" must match the pattern \"^\\\\d+\\\\.\\\\d+\\\\.\\\\d+$\"",
            "\"previous\" must be at most 8 characters long"
        ]
    );
}

// Rust's range syntax is a spelling of `range(min = .., max = ..)`: `a..=b` closed, `a..b`
// half-open (an exclusive maximum), either end optional; the type's own bounds stay.
#[derive(Serialize, Deserialize, ToolSchema)]
struct RangeSpellings {
    #[schema(range(1..=50))]
    closed: u32,
    #[schema(range(1..50))]
    half_open: u32,
    #[schema(range(..=50))]
    up_to: i64,
    #[schema(range(-1.5..))]
    from: f64,
}

#[test]
fn range_expressions_are_bounds() {
    exact(
        &RangeSpellings::SCHEMA,
        json!({"type": "object", "additionalProperties": true, "properties": {
            "closed": {"type": "integer", "minimum": 1, "maximum": 50},
            "half_open": {"type": "integer", "minimum": 1, "maximum": 4_294_967_295_u64, "exclusiveMaximum": 50},
            "up_to": {"type": "integer", "minimum": -9_007_199_254_740_991_i64, "maximum": 50},
            "from": {"type": "number", "minimum": -1.5}
        }, "required": ["closed", "half_open", "up_to", "from"]}),
    );
}
