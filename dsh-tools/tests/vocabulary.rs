//! The keywords of the parameter vocabulary beyond the reference subset (`docs/CONTRACTS.md`,
//! "Schema vocabulary"): each one's violation text at its path, every violation at once,
//! recursion through `$defs`/`$ref`, and the schemas refused at registration.

use dsh_tools::ToolDefinition;
use dsh_tools::error::HarnessError;
use dsh_tools::subset::{CompiledSchema, Vocabulary, assert_supported_in};
use serde_json::{Value, json};

fn compile(schema: Value) -> CompiledSchema {
    CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported")
}

fn rejected(schema: Value) -> Vec<String> {
    assert_supported_in(&schema, Vocabulary::Parameters)
        .expect_err("unsupported")
        .violations
}

/// The user-shaped schema: every new keyword in one object.
fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100},
            "score": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.05},
            "labels": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": true},
            "since": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "range": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false, "minItems": 2},
            "outline": {"$ref": "#/$defs/Outline"}
        },
        "required": ["repo"],
        "$defs": {
            "Outline": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Outline"}}
                },
                "required": ["title", "children"],
                "additionalProperties": false
            }
        }
    })
}

#[test]
fn a_good_value_passes_every_entry_point() {
    let compiled = compile(search_schema());
    let good = json!({
        "repo": "rust-lang/rust",
        "per_page": 100,
        "score": 0.35,
        "labels": ["bug", "A-macros"],
        "since": "2024-05-01T12:00:00Z",
        "id": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "range": [3, "x"],
        "outline": {"title": "a", "children": [{"title": "b", "children": []}]}
    });
    assert!(compiled.is_valid(&good));
    assert!(compiled.validate(&good, "").is_empty());
}

#[test]
fn every_bad_value_is_reported_at_its_path() {
    let compiled = compile(search_schema());
    let bad = json!({
        "repo": "no slash",
        "per_page": 0,
        "score": 1,
        "labels": ["bug", "", "bug"],
        "since": "yesterday",
        "id": "67e5504410b1426f9247bb680e5fe0c8",
        "range": [3, "x", true],
        "outline": {"title": "a", "children": [{"title": 1, "children": [], "x": 0}]}
    });
    assert!(!compiled.is_valid(&bad));
    assert_eq!(
        compiled.validate(&bad, ""),
        vec![
            "\"repo\" must match the pattern \"^[\\\\w.-]+/[\\\\w.-]+$\"",
            "\"per_page\" must be at least 1",
            "\"score\" must be less than 1",
            "\"labels\" must not contain duplicate items (items 0 and 2 are equal)",
            "\"labels[1]\" must be at least 1 character long",
            "\"since\" must be a date-time (RFC 3339, like \"2024-05-01T12:00:00Z\" or \"2024-05-01T14:00:00.5+02:00\")",
            "\"id\" must be a UUID (like \"67e55044-10b1-426f-9247-bb680e5fe0c8\")",
            "\"range\" must have at most 2 items",
            "\"outline.children[0].title\" must be a string",
            "\"outline.children[0].x\" is not a property of \"outline.children[0]\"; its properties are \"title\", \"children\"",
        ]
    );
}

#[test]
fn numbers_follow_their_decimals() {
    let compiled = compile(json!({"type": "number", "multipleOf": 0.1, "exclusiveMinimum": -1}));
    for ok in [json!(0.3), json!(0), json!(7), json!(-0.9), json!(1e300)] {
        assert!(compiled.is_valid(&ok), "{ok}");
    }
    assert_eq!(
        compiled.validate(&json!(0.35), "x"),
        vec!["\"x\" must be a multiple of 0.1"]
    );
    assert_eq!(
        compiled.validate(&json!(-1), "x"),
        vec!["\"x\" must be greater than -1"]
    );
    let ints = compile(json!({"type": "integer", "multipleOf": 3}));
    assert!(ints.is_valid(&json!(9.0)) && !ints.is_valid(&json!(10)));
}

#[test]
fn recursion_validates_to_any_depth() {
    let list = compile(json!({
        "$defs": {"Node": {"type": "object", "properties": {
            "value": {"type": "integer"},
            "next": {"oneOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
        }, "required": ["value", "next"]}},
        "$ref": "#/$defs/Node"
    }));
    let mut value = json!({"value": 0, "next": null});
    for i in 1..500 {
        value = json!({"value": i, "next": value});
    }
    assert!(list.is_valid(&value));
    let mut broken = json!({"value": "x", "next": null});
    for i in 1..50 {
        broken = json!({"value": i, "next": broken});
    }
    let violations = list.validate(&broken, "list");
    // Each `next` is an object, which only the list branch admits: the violation is the deep one.
    assert_eq!(
        violations,
        vec![format!(
            "\"list{}.value\" must be an integer",
            ".next".repeat(49)
        )]
    );
}

#[test]
fn bad_schemas_are_refused_with_their_paths() {
    assert_eq!(
        rejected(
            json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "(a"}}})
        ),
        vec![
            "schema.properties.p.pattern is not a valid ECMAScript regular expression: Unbalanced parenthesis"
        ]
    );
    let hostile = rejected(json!({"type": "string", "pattern": "^(a+)+$"}));
    assert_eq!(
        hostile,
        vec![
            "schema.pattern can take exponential time on a non-matching string (a repeated group repeats inside); rewrite it without nested repetition"
        ]
    );
    assert_eq!(
        rejected(json!({"type": "string", "format": "iri"})),
        vec![
            "schema.format must be one of date-time, date, time, duration, email, uri, uuid, ipv4, ipv6, hostname (got \"iri\")"
        ]
    );
    assert_eq!(
        rejected(json!({"type": "integer", "multipleOf": -2, "exclusiveMaximum": "9"})),
        vec![
            "schema.exclusiveMaximum must be a finite number",
            "schema.multipleOf must be a number greater than 0"
        ]
    );
    assert_eq!(
        rejected(json!({"type": "array", "items": false, "uniqueItems": "yes"})),
        vec![
            "schema.items must be a schema object (or false after prefixItems)",
            "schema.uniqueItems must be a boolean"
        ]
    );
    assert_eq!(
        rejected(json!({"$ref": "#/$defs/Missing", "type": "string"})),
        vec![
            "schema.$ref must be a local reference to a schema of this document (like \"#/$defs/Name\")",
            "schema.type is not supported beside $ref"
        ]
    );
    assert_eq!(
        rejected(json!({
            "$defs": {"A": {"oneOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}},
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}}
        })),
        vec![
            "schema.$defs.A.oneOf[0].$ref leads back to itself without passing through a property or an item (a cycle validation could never leave)"
        ]
    );
    assert_eq!(
        rejected(json!({
            "$defs": {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]}},
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}}
        })),
        vec![
            "schema.properties.a.$ref refers to a schema no finite value satisfies (its recursion has no base case)",
            "schema.$defs.A.properties.a.$ref refers to a schema no finite value satisfies (its recursion has no base case)"
        ]
    );
}

#[test]
fn registration_of_a_raw_schema_names_the_path() {
    let error = ToolDefinition::builder("search")
        .description("Search.")
        .parameters_json(
            json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "[z-a]"}}}),
        )
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap_err();
    let dsh_tools::DefinitionError::Schema(schema_error) = &error else {
        panic!("not a schema error: {error}");
    };
    assert_eq!(schema_error.info().code, "UNSUPPORTED_SCHEMA");
    assert!(
        error
            .to_string()
            .starts_with("unsupported JSON schema: schema.properties.q.pattern is not a valid ECMAScript regular expression"),
        "{error}"
    );
}

#[test]
fn outputs_take_tuples_and_refs_but_no_assertions() {
    let tuple = json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false});
    assert!(assert_supported_in(&tuple, Vocabulary::Output).is_ok());
    assert!(assert_supported_in(&tuple, Vocabulary::Reference).is_err());
    assert!(
        assert_supported_in(
            &json!({"type": "string", "pattern": "a"}),
            Vocabulary::Output
        )
        .is_err()
    );
}
