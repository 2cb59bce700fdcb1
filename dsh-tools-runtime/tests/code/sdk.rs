//! The TypeScript SDK: `json_schema_to_ts` (`docs/CONTRACTS.md`, "TypeScript types", with exact
//! texts, then the wide path beyond the reference subset) and `render_tools_sdk` ("The SDK").

#![cfg(feature = "code-mode")]

use dsh_tools::ToolDefinition;
use dsh_tools_runtime::code::sdk::{
    INSTRUCTIONS, SdkTool, json_schema_to_ts, json_schema_to_ts_wide, render_tools_sdk,
    sdk_declarations, sdk_declarations_whole, sdk_tool_from,
};
use serde_json::{Value, json};

fn ts(schema: Value) -> String {
    json_schema_to_ts(&schema, 0)
}

fn tool(name: &str, description: &str, parameters: Value, output: Value) -> SdkTool {
    SdkTool {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
        output,
    }
}

// ------------------------------------------------ "TypeScript types", the reference subset

#[test]
fn rule_1_annotation_only_nodes_are_json_values() {
    assert_eq!(ts(json!({})), "JsonValue");
    assert_eq!(
        ts(json!({"description": "d", "title": "t", "default": 1, "examples": [1, "a"]})),
        "JsonValue"
    );
}

#[test]
fn rule_2_one_of_joins_branches_without_parentheses() {
    assert_eq!(
        ts(json!({"oneOf": [{"type": "string"}, {"type": "null"}]})),
        "string | null"
    );
    assert_eq!(
        ts(
            json!({"oneOf": [{"type": "string"}, {"oneOf": [{"type": "number"}, {"type": "null"}]}]})
        ),
        "string | number | null"
    );
    assert_eq!(
        ts(json!({"oneOf": [{}, {"type": "integer"}]})),
        "JsonValue | number"
    );
    assert_eq!(
        ts(json!({"oneOf": [{"type": "string"}, {"type": "string"}]})),
        "string | string"
    );
    let branches = json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "null"}
    ]});
    assert_eq!(
        json_schema_to_ts(&branches, 1),
        "{\n    a?: string;\n  } & Record<string, JsonValue> | null"
    );
}

#[test]
fn rule_3_scalars_and_literals() {
    for (kind, text) in [
        ("string", "string"),
        ("number", "number"),
        ("integer", "number"),
        ("boolean", "boolean"),
        ("null", "null"),
    ] {
        assert_eq!(ts(json!({"type": kind})), text);
    }
    // const wins over enum; enum duplicates are kept.
    assert_eq!(
        ts(json!({"type": "string", "const": "a", "enum": ["a", "b"]})),
        "\"a\""
    );
    assert_eq!(
        ts(json!({"type": "string", "enum": ["x", "x"]})),
        "\"x\" | \"x\""
    );
    assert_eq!(ts(json!({"type": "string", "enum": ["only"]})), "\"only\"");
    // Numbers print as JavaScript prints them.
    assert_eq!(ts(json!({"type": "number", "const": 1e21})), "1e+21");
    let numbers: Value = serde_json::from_str(
        r#"{"type": "number", "enum": [1e-7, 5e-324, 123456789012345678901, -2.5, 0.1, 100.0, 1e300]}"#,
    )
    .unwrap();
    assert_eq!(
        ts(numbers),
        "1e-7 | 5e-324 | 123456789012345680000 | -2.5 | 0.1 | 100 | 1e+300"
    );
    assert_eq!(
        ts(serde_json::from_str(r#"{"type": "integer", "const": 1.0}"#).unwrap()),
        "1"
    );
    assert_eq!(
        ts(json!({"type": "boolean", "enum": [true, false]})),
        "true | false"
    );
    assert_eq!(ts(json!({"type": "null", "const": null})), "null");
    // Strings use JSON.stringify escaping (DEL, U+2028 and non-ASCII stay raw).
    assert_eq!(
        ts(
            json!({"type": "string", "enum": ["a\"b", "\\", "\n\t", "\u{1}", "\u{7f}", "\u{2028}", "é"]})
        ),
        "\"a\\\"b\" | \"\\\\\" | \"\\n\\t\" | \"\\u0001\" | \"\u{7f}\" | \"\u{2028}\" | \"é\""
    );
}

#[test]
fn rule_4_array_items_are_parenthesised_on_bar_or_ampersand() {
    assert_eq!(ts(json!({"type": "array"})), "JsonValue[]");
    assert_eq!(ts(json!({"type": "array", "items": {}})), "JsonValue[]");
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": "array"}})),
        "JsonValue[][]"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]}})),
        "(\"x\" | \"y\")[]"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": "string", "const": "a|b"}})),
        "(\"a|b\")[]"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": "string", "const": "a&b"}})),
        "(\"a&b\")[]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "items": {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "null"}]}}})
        ),
        "((string | null)[])[]"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}})),
        "number[][]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}})
        ),
        "({\n  a?: string;\n} & Record<string, JsonValue>)[]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}})
        ),
        "{\n  a?: string;\n}[]"
    );
    // Even a doc comment counts.
    assert_eq!(
        ts(
            json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string", "description": "a & b"}}, "additionalProperties": false}})
        ),
        "({\n  /** a & b */\n  a?: string;\n})[]"
    );
}

#[test]
fn rule_5_objects_without_properties_are_records() {
    assert_eq!(ts(json!({"type": "object"})), "Record<string, JsonValue>");
    assert_eq!(
        ts(json!({"type": "object", "properties": {}})),
        "Record<string, JsonValue>"
    );
    assert_eq!(
        ts(json!({"type": "object", "additionalProperties": true})),
        "Record<string, JsonValue>"
    );
    assert_eq!(
        ts(json!({"type": "object", "additionalProperties": false})),
        "Record<string, never>"
    );
    assert_eq!(
        ts(json!({"type": "object", "properties": {}, "additionalProperties": false})),
        "Record<string, never>"
    );
}

#[test]
fn rule_6_objects_print_members_with_docs_and_indentation() {
    let schema = json!({
        "type": "object",
        "description": "Root descriptions never become doc lines.",
        "properties": {
            "a": {"type": "string", "description": "The A."},
            "b": {"type": "object", "properties": {"c": {"type": "integer"}}, "required": ["c"], "additionalProperties": false},
            "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": "boolean"}}}}
        },
        "required": ["a"]
    });
    assert_eq!(
        json_schema_to_ts(&schema, 0),
        "{\n  /** The A. */\n  a: string;\n  b?: {\n    c: number;\n  };\n  d?: ({\n    e?: boolean;\n  } & Record<string, JsonValue>)[];\n} & Record<string, JsonValue>"
    );
    let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(json_schema_to_ts(&closed, 1), "{\n    a?: string;\n  }");
    assert_eq!(json_schema_to_ts(&closed, 2), "{\n      a?: string;\n    }");
}

#[test]
fn rule_6_doc_lines_collapse_whitespace_and_escape_comment_ends() {
    let object = |description: Value| {
        ts(
            json!({"type": "object", "properties": {"p": {"type": "string", "description": description}}, "additionalProperties": false}),
        )
    };
    assert_eq!(object(json!("   ")), "{\n  /**  */\n  p?: string;\n}");
    assert_eq!(object(json!("")), "{\n  p?: string;\n}");
    assert_eq!(
        object(json!(
            " a\u{a0}b\u{feff}c\u{2028}d\u{2029}e\tf\n\ng\u{b}h\u{c}i\u{3000}j "
        )),
        "{\n  /** a b c d e f g h i j */\n  p?: string;\n}"
    );
    assert_eq!(
        object(json!("keep\u{85}nel")),
        "{\n  /** keep\u{85}nel */\n  p?: string;\n}"
    );
    assert_eq!(
        object(json!("ends */ here and **/ there /* */")),
        "{\n  /** ends *\\/ here and **\\/ there /* *\\/ */\n  p?: string;\n}"
    );
}

#[test]
fn keys_are_bare_only_when_identifier_like() {
    let schema = json!({"type": "object", "properties": {
        "plain": {"type": "null"}, "_x$": {"type": "null"}, "class": {"type": "null"}, "__proto__": {"type": "null"},
        "my-key": {"type": "null"}, "ünïcödé": {"type": "null"}, "new\nline": {"type": "null"}, "1a": {"type": "null"}, "": {"type": "null"}
    }, "additionalProperties": false});
    assert_eq!(
        ts(schema),
        "{\n  plain?: null;\n  _x$?: null;\n  class?: null;\n  __proto__?: null;\n  \"my-key\"?: null;\n  \"ünïcödé\"?: null;\n  \"new\\nline\"?: null;\n  \"1a\"?: null;\n  \"\"?: null;\n}"
    );
}

// ------------------------------------------------------------------- beyond: the wide path

#[test]
fn one_unsupported_keyword_degrades_only_its_node() {
    let schema = json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "description": "The URL."},
            "count": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["url"]
    });
    // The reference renders this whole tool as `unknown`; we keep every property typed.
    assert_eq!(
        ts(schema),
        "{\n  /** The URL. @format uri */\n  url: string;\n  count?: number;\n  tags?: string[];\n} & Record<string, JsonValue>"
    );
    let odd = json!({"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "strange"}, "c": {"$ref": "other.json#/x"}, "d": 42, "e": {"type": "array", "items": 5}
    }, "additionalProperties": false});
    assert_eq!(
        ts(odd),
        "{\n  a?: string;\n  b?: unknown;\n  c?: unknown;\n  d?: unknown;\n  e?: unknown[];\n}"
    );
}

#[test]
fn root_schema_and_id_are_ignored() {
    assert_eq!(
        ts(
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "$id": "urn:x", "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})
        ),
        "{\n  a?: string;\n}"
    );
}

#[test]
fn any_of_is_a_union_and_all_of_an_intersection() {
    assert_eq!(
        ts(json!({"anyOf": [{"type": "string"}, {"type": "number"}]})),
        "string | number"
    );
    assert_eq!(
        ts(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
            {"type": "object", "properties": {"b": {"type": "number"}}, "additionalProperties": false}
        ]})),
        "{\n  a: string;\n} & {\n  b?: number;\n}"
    );
    // Open parts share one `Record<string, JsonValue>`; unions inside intersections get parentheses.
    assert_eq!(
        ts(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}, {"type": "null"}]})
        ),
        "{\n  a?: string;\n} & Record<string, JsonValue> & ({\n  a: JsonValue;\n} & Record<string, JsonValue> | null)"
    );
    // Parts that constrain nothing drop out.
    assert_eq!(
        ts(json!({"allOf": [{}, {"type": "string"}, {"description": "x"}]})),
        "string"
    );
    // A union with an untypeable branch is `unknown`.
    assert_eq!(
        ts(json!({"anyOf": [{"type": "string"}, {"type": "what"}]})),
        "unknown"
    );
}

#[test]
fn refs_are_inlined_and_cycles_guarded() {
    let schema = json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address"},
            "work": {"$ref": "#/definitions/Address"},
            "same": {"$ref": "#/properties/home"},
            "missing": {"$ref": "#/$defs/Nope"}
        },
        "additionalProperties": false,
        "$defs": {"Address": {"type": "object", "description": "A postal address.", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}},
        "definitions": {"Address": {"type": "string"}}
    });
    assert_eq!(
        ts(schema),
        "{\n  /** A postal address. */\n  home?: {\n    city: string;\n  };\n  work?: string;\n  /** A postal address. */\n  same?: {\n    city: string;\n  };\n  missing?: unknown;\n}"
    );
    // A recursive schema: the text inlines it once and cuts the cycle with `unknown`.
    let tree = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name"], "additionalProperties": false}}
    });
    assert_eq!(ts(tree), "{\n  name: string;\n  children?: unknown[];\n}");
    let root = json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": false});
    assert_eq!(ts(root), "{\n  next?: unknown;\n}");
    assert_eq!(ts(json!({"$ref": "#"})), "unknown");
}

#[test]
fn type_arrays_and_nullable_are_unions_with_null() {
    assert_eq!(ts(json!({"type": ["string", "null"]})), "string | null");
    assert_eq!(
        ts(json!({"type": ["integer", "number", "string"]})),
        "number | string"
    );
    assert_eq!(
        ts(
            json!({"type": ["object", "null"], "properties": {"a": {"type": "string"}}, "additionalProperties": false})
        ),
        "{\n  a?: string;\n} | null"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": {"type": ["string", "null"]}})),
        "(string | null)[]"
    );
    assert_eq!(
        ts(json!({"type": "string", "nullable": true})),
        "string | null"
    );
    assert_eq!(
        ts(json!({"type": "string", "enum": ["a", "b"], "nullable": true})),
        "\"a\" | \"b\" | null"
    );
    assert_eq!(
        ts(json!({"type": "object", "nullable": true})),
        "Record<string, JsonValue> | null"
    );
    assert_eq!(
        ts(json!({"type": ["string", "null"], "nullable": true})),
        "string | null"
    );
    assert_eq!(ts(json!({"nullable": true})), "JsonValue");
}

#[test]
fn formats_and_bounds_become_doc_tags() {
    let schema = json!({"type": "object", "properties": {
        "when": {"type": "string", "format": "date-time", "description": "  When\nit starts. "},
        "n": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 1},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1e21},
        "code": {"type": "string", "pattern": "^/\\*.*\\*/$", "minLength": 2, "maxLength": 64},
        "list": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5, "uniqueItems": true},
        "map": {"type": "object", "minProperties": 1, "maxProperties": 2},
        "old": {"type": "string", "deprecated": true},
        "maybe": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "description": "Optional."}
    }, "additionalProperties": false});
    assert_eq!(
        ts(schema),
        "{\n  /** When it starts. @format date-time */\n  when?: string;\n  /** @minimum 1 @maximum 10 @multipleOf 1 */\n  n?: number;\n  \
         /** @exclusiveMinimum 0 @exclusiveMaximum 1e+21 */\n  ratio?: number;\n  /** @pattern ^/\\*.*\\*\\/$ @minLength 2 @maxLength 64 */\n  code?: string;\n  \
         /** @minItems 1 @maxItems 5 @uniqueItems */\n  list?: string[];\n  /** @minProperties 1 @maxProperties 2 */\n  map?: Record<string, JsonValue>;\n  \
         /** @deprecated */\n  old?: string;\n  /** Optional. @minimum 0 */\n  maybe?: number | null;\n}"
    );
}

#[test]
fn schema_valued_additional_properties_are_index_signatures() {
    assert_eq!(
        ts(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        "Record<string, string>"
    );
    assert_eq!(
        ts(
            json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "additionalProperties": {"type": "string"}})
        ),
        "{\n  n: number;\n} & Record<string, string | number>"
    );
    assert_eq!(
        ts(
            json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}, "^n-": {"type": "number"}}, "additionalProperties": false})
        ),
        "Record<string, string | number>"
    );
    assert_eq!(
        ts(json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}})),
        "Record<string, JsonValue>"
    );
    assert_eq!(
        ts(
            json!({"type": "object", "additionalProperties": {"type": "string"}, "propertyNames": {"pattern": "^[A-Z]+$"}})
        ),
        "Record<string, string>"
    );
    // Required names that `properties` does not declare take the index type.
    assert_eq!(
        ts(
            json!({"type": "object", "required": ["id"], "additionalProperties": {"type": "integer"}})
        ),
        "{\n  id: number;\n} & Record<string, number>"
    );
    assert_eq!(
        ts(json!({"type": "object", "required": ["id"], "additionalProperties": false})),
        "{\n  id: never;\n}"
    );
    assert_eq!(
        ts(json!({"required": ["id"]})),
        "{\n  id: JsonValue;\n} & Record<string, JsonValue>"
    );
}

#[test]
fn tuples() {
    assert_eq!(
        ts(
            json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}], "items": false, "minItems": 2})
        ),
        "[number, string]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": ["string", "null"]}], "minItems": 1})
        ),
        "[number, (string | null)?, ...JsonValue[]]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "prefixItems": [{"type": "number"}], "items": {"type": "boolean"}})
        ),
        "[number?, ...boolean[]]"
    );
    assert_eq!(
        ts(
            json!({"type": "array", "items": [{"type": "integer"}, {"type": "integer"}], "additionalItems": false, "minItems": 2})
        ),
        "[number, number]"
    );
    assert_eq!(
        ts(json!({"type": "array", "items": [{"type": "string"}], "maxItems": 1})),
        "[string?]"
    );
    assert_eq!(ts(json!({"type": "array", "items": false})), "[]");
}

#[test]
fn boolean_schemas_literals_and_enums() {
    assert_eq!(ts(json!(true)), "JsonValue");
    assert_eq!(ts(json!(false)), "never");
    assert_eq!(ts(json!(5)), "unknown");
    assert_eq!(ts(json!(null)), "unknown");
    assert_eq!(
        ts(json!({"enum": ["a", 1, true, null, [1, "b"], {"k": [2]}, {}]})),
        "\"a\" | 1 | true | null | [1, \"b\"] | {\n  k: [2];\n} | Record<string, never>"
    );
    assert_eq!(ts(json!({"const": {"x": 0}})), "{\n  x: 0;\n}");
    assert_eq!(
        ts(json!({"type": "integer", "enum": [1, 2.5, "3", 4]})),
        "1 | 4"
    );
    assert_eq!(ts(json!({"type": "string", "enum": [1]})), "never");
    assert_eq!(ts(json!({"enum": []})), "never");
    assert_eq!(ts(json!({"enum": "nope"})), "unknown");
}

#[test]
fn untyped_object_and_array_keywords_infer_their_type() {
    assert_eq!(
        ts(json!({"properties": {"a": {"type": "string"}}, "required": ["a"]})),
        "{\n  a: string;\n} & Record<string, JsonValue>"
    );
    assert_eq!(ts(json!({"items": {"type": "string"}})), "string[]");
    // Ignored keywords only widen the type.
    assert_eq!(
        ts(json!({"type": "string", "not": {"const": ""}})),
        "string"
    );
    assert_eq!(
        ts(
            json!({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}, "unevaluatedProperties": false})
        ),
        "Record<string, JsonValue>"
    );
}

#[test]
fn the_wide_path_agrees_with_the_reference_on_subset_schemas() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk/schemas");
    let mut schemas: Vec<Value> = vec![
        json!({}),
        json!({"oneOf": [{"type": "string"}, {"oneOf": [{}, {"type": "null"}]}]}),
        json!({"type": "array", "items": {"type": "array", "items": {"type": "string", "enum": ["a|b", "c"]}}}),
        json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string", "description": "x & y */"}}, "required": ["b"]}}, "additionalProperties": false}),
    ];
    for entry in std::fs::read_dir(dir).unwrap() {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        schemas.push(fixture["parameters"].clone());
        schemas.push(fixture.get("output").cloned().unwrap_or_else(|| json!({})));
    }
    let mut subset = 0;
    for schema in &schemas {
        if dsh_tools::subset::assert_supported(schema).is_ok() {
            subset += 1;
            for indent in [0, 1, 3] {
                assert_eq!(
                    json_schema_to_ts_wide(schema, indent),
                    json_schema_to_ts(schema, indent),
                    "{schema}"
                );
            }
        }
    }
    assert!(subset >= 20, "only {subset} subset schemas");
}

// --------------------------------------------------------------------------- depth and size

/// Runs `f` on a thread with a 256 KiB stack.
fn on_small_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn_scoped(scope, f)
            .unwrap()
            .join()
            .unwrap()
    })
}

/// Builds and drops deep schemas on a big stack (`serde_json::Value` drops recursively).
fn with_big_stack(f: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 * 1024 * 1024)
            .spawn_scoped(scope, f)
            .unwrap()
            .join()
            .unwrap();
    });
}

fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |inner, _| wrap(inner))
}

/// An object schema from `pairs`, moving the values (`json!` would deep-copy an interpolated
/// `Value`, which makes building 5,000-deep schemas quadratic).
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

const DEEP: usize = 5000;

#[test]
fn five_thousand_deep_schemas_on_a_256_kib_stack() {
    with_big_stack(|| {
        let arrays = nest(DEEP, json!({"type": "number"}), |i| {
            obj(vec![("type", json!("array")), ("items", i)])
        });
        let text = on_small_stack(|| json_schema_to_ts(&arrays, 0));
        assert_eq!(text, format!("number{}", "[]".repeat(DEEP)));

        let unions = nest(DEEP, json!({"type": "string"}), |i| {
            obj(vec![(
                "oneOf",
                Value::Array(vec![json!({"type": "null"}), i]),
            )])
        });
        let text = on_small_stack(|| json_schema_to_ts(&unions, 0));
        assert_eq!(text, format!("{}string", "null | ".repeat(DEEP)));

        let any_of = nest(DEEP, json!({"type": "string", "format": "x"}), |i| {
            obj(vec![(
                "anyOf",
                Value::Array(vec![json!({"type": "null"}), i]),
            )])
        });
        let text = on_small_stack(|| json_schema_to_ts(&any_of, 0));
        assert_eq!(text, format!("{}string", "null | ".repeat(DEEP)));

        let nullable = nest(DEEP, json!({"type": "string"}), |i| {
            obj(vec![("type", json!(["array", "null"])), ("items", i)])
        });
        let innermost = String::from("string[] | null");
        let expected = (1..DEEP).fold(innermost, |inner, _| format!("({inner})[] | null"));
        assert_eq!(on_small_stack(|| json_schema_to_ts(&nullable, 0)), expected);

        let all_of = nest(DEEP, json!({"type": "boolean"}), |i| {
            obj(vec![
                ("allOf", Value::Array(vec![i])),
                ("minimum", json!(1)),
            ])
        });
        assert_eq!(on_small_stack(|| json_schema_to_ts(&all_of, 0)), "boolean");

        let mut defs = serde_json::Map::new();
        for i in 0..DEEP {
            defs.insert(
                format!("A{i}"),
                json!({"type": "array", "items": {"$ref": format!("#/$defs/A{}", i + 1)}}),
            );
        }
        defs.insert(format!("A{DEEP}"), json!({"type": "number"}));
        let chain = json!({"$ref": "#/$defs/A0", "$defs": defs});
        assert_eq!(
            on_small_stack(|| json_schema_to_ts(&chain, 0)),
            format!("number{}", "[]".repeat(DEEP))
        );

        let objects = nest(500, json!({"type": "null"}), |i| {
            obj(vec![
                ("properties", obj(vec![("a", i)])),
                ("additionalProperties", json!(false)),
                ("minProperties", json!(1)),
            ])
        });
        let text = on_small_stack(|| json_schema_to_ts(&objects, 0));
        assert!(
            text.starts_with(
                "{\n  /** @minProperties 1 */\n  a?: {\n    /** @minProperties 1 */\n"
            )
        );
        assert_eq!(text.matches("a?: ").count(), 500);
    });
}

#[test]
fn five_thousand_deep_schemas_in_the_sdk() {
    with_big_stack(|| {
        let arrays = nest(DEEP, json!({"type": "number"}), |i| {
            obj(vec![("type", json!("array")), ("items", i)])
        });
        let unions = nest(DEEP, json!({"type": "string"}), |i| {
            obj(vec![(
                "anyOf",
                Value::Array(vec![json!({"type": "null"}), i]),
            )])
        });
        let objects = nest(DEEP, json!({"type": "null"}), |i| {
            obj(vec![
                ("properties", obj(vec![("a", i)])),
                ("required", json!(["a"])),
                ("additionalProperties", json!(false)),
                ("minProperties", json!(1)),
            ])
        });
        let records = nest(DEEP, json!({"type": "boolean"}), |i| {
            obj(vec![("type", json!("object")), ("additionalProperties", i)])
        });
        let tools = vec![
            tool("arrays", "Deep arrays.", arrays, objects),
            tool("unions", "A long union.", unions, records),
        ];
        let sdk = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(scope, || sdk_declarations(&tools))
                .unwrap()
                .join()
                .unwrap()
        });
        // `JsonValue[]` in the JsonValue alias, then the 5,000 levels (cut into aliases).
        assert_eq!(sdk.matches("[]").count(), DEEP + 1);
        assert!(
            sdk.contains("type DeepType1 = "),
            "deep types move to aliases"
        );
        assert!(sdk.contains(&format!("unions: {}string;", "null | ".repeat(DEEP))));
        assert_eq!(sdk.matches("a: ").count(), DEEP);
        assert_eq!(sdk.matches("Record<string, ").count(), DEEP);
        assert!(
            sdk.len() < 2 * 1024 * 1024,
            "aliases keep the indentation shallow"
        );
    });
}

#[test]
fn exponential_ref_fan_out_stops_at_the_budget() {
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
        defs.insert(format!("D{i}"), json!({"type": "object", "properties": {"a": next, "b": next}, "additionalProperties": false}));
    }
    defs.insert("D40".into(), json!({"type": "string"}));
    let schema = json!({"$ref": "#/$defs/D0", "$defs": defs});
    let text = json_schema_to_ts(&schema, 0);
    assert!(text.contains("unknown"));
    assert!(text.len() < 64 * 1024 * 1024);
}

// ------------------------------------------------------------------------------- "The SDK"

const EMPTY_DECLARATIONS: &str = "type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;\n\n\
type JsonObject = {\n[key: string]: JsonValue;\n};\n\n\
interface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n\ntype ToolName = keyof ToolArgsMap;\n\n\
declare class ToolCallError extends Error {\nreadonly name: \"ToolCallError\";\nreadonly toolName: ToolName;\n}\n\n\
declare const tools: {\n[K in ToolName]: (args: ToolArgsMap[K]) => Promise<K extends keyof ToolOutputMap ? ToolOutputMap[K] : JsonValue>;\n};";

#[test]
fn empty_tool_set() {
    assert_eq!(sdk_declarations(&[]), EMPTY_DECLARATIONS);
    assert_eq!(
        render_tools_sdk(&[]),
        format!("{INSTRUCTIONS}\n\n```ts\n{EMPTY_DECLARATIONS}\n```")
    );
}

#[test]
fn instructions_keep_the_pinned_fragments() {
    assert!(INSTRUCTIONS.starts_with("## Writing code for run_code"));
    assert!(INSTRUCTIONS.ends_with("\nThe available tools:"));
    for fragment in [
        "two required arguments",
        "`code`",
        "`description`",
        "erasable syntax only",
        "rejects with `ToolCallError`",
        "MAY overlap under `Promise.all`",
        "lossless JSON",
        "await tools.name(args)",
        "tools[\"my-tool\"](args)",
        "console.log(",
        "return",
    ] {
        assert!(INSTRUCTIONS.contains(fragment), "{fragment}");
    }
}

#[test]
fn one_tool_exactly() {
    let read = tool(
        "read_file",
        "Read a\nfile. */",
        json!({"type": "object", "properties": {"path": {"type": "string", "description": "The path."}, "limit": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}}, "required": ["path"]}),
        json!({"type": "object", "properties": {"lines": {"type": "array", "items": {"type": "string"}}}, "required": ["lines"], "additionalProperties": false}),
    );
    let expected = "interface ToolArgsMap {\n// Read a file. */\nread_file: {\n// The path.\npath: string;\n// @minimum 0\nlimit?: number | null;\n} & JsonObject;\n}\n\n\
interface ToolOutputMap {\nread_file: {\nlines: string[];\n};\n}";
    assert!(sdk_declarations(&[read]).contains(expected));
}

#[test]
fn tools_sort_by_utf16_code_units_and_keep_input_order_for_equal_names() {
    let names = ["ｚ", "\u{1f600}", "b", "B", "a"];
    let tools: Vec<SdkTool> = names
        .iter()
        .map(|n| tool(n, "", json!({}), json!({})))
        .collect();
    let sdk = sdk_declarations(&tools);
    let args = &sdk
        [sdk.find("interface ToolArgsMap").unwrap()..sdk.find("interface ToolOutputMap").unwrap()];
    assert_eq!(
        args,
        "interface ToolArgsMap {\nB: JsonValue;\na: JsonValue;\nb: JsonValue;\n\"\u{1f600}\": JsonValue;\n\"ｚ\": JsonValue;\n}\n\n"
    );
    let twins = [
        tool("dup", "first", json!({}), json!({})),
        tool("dup", "second", json!({}), json!({})),
        tool("aaa", "third", json!({}), json!({})),
    ];
    let sdk = sdk_declarations(&twins);
    let (first, second, third) = (
        sdk.find("first").unwrap(),
        sdk.find("second").unwrap(),
        sdk.find("third").unwrap(),
    );
    assert!(third < first && first < second);
}

#[test]
fn output_is_byte_identical_and_order_independent() {
    let tools = vec![
        tool(
            "zeta",
            "Z.",
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}}),
            json!({"type": "number"}),
        ),
        tool(
            "alpha",
            "A.",
            json!({"$ref": "#/$defs/N", "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}}}),
            json!({}),
        ),
        tool(
            "my-tool",
            "",
            json!({"type": "object"}),
            json!({"type": "array", "items": {"enum": [1, "a|b"]}}),
        ),
    ];
    let first = render_tools_sdk(&tools);
    assert_eq!(first, render_tools_sdk(&tools));
    let mut reversed = tools.clone();
    reversed.reverse();
    assert_eq!(first, render_tools_sdk(&reversed));
}

#[test]
fn exotic_names_are_quoted_and_descriptions_escaped() {
    let tools = [
        tool("my-mcp.tool", "   ", json!({}), json!({})),
        tool("ünïcödé", "", json!({}), json!({})),
        tool("new\nline", "end */ and /* start", json!({}), json!({})),
        tool(
            "class",
            "\u{feff}Reserved\u{a0}words\u{85}stay bare.",
            json!({}),
            json!({}),
        ),
    ];
    let sdk = sdk_declarations(&tools);
    for line in [
        // A whitespace-only description gives no doc line.
        "class: JsonValue;\n\"my-mcp.tool\": JsonValue;",
        "\n\"ünïcödé\": JsonValue;",
        "\n// end */ and /* start\n\"new\\nline\": JsonValue;",
        "\n// Reserved words\u{85}stay bare.\nclass: JsonValue;",
    ] {
        assert!(sdk.contains(line), "{line}\n---\n{sdk}");
    }
    // A description is one line comment: it can never end early or swallow the next line.
    for tool in &tools {
        assert!(!tool.name.contains("//") && !sdk.contains("//  "));
    }
    assert!(!sdk.contains("/*\n") && !sdk.contains("/**"), "{sdk}");
}

#[test]
fn sdk_types_degrade_per_node_and_type_outputs() {
    let tools = [tool(
        "fetch",
        "Fetch a URL.",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
            "url": {"type": "string", "format": "uri"},
            "max_length": {"type": "integer", "exclusiveMinimum": 0},
            "raw": {"type": "boolean"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}}
        }, "required": ["url"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"status": {"type": "integer"}, "body": {"type": "string"}}, "required": ["status", "body"], "additionalProperties": false}),
    )];
    let sdk = sdk_declarations(&tools);
    assert!(sdk.contains(
        "\nfetch: {\n// @format uri\nurl: string;\n// @exclusiveMinimum 0\nmax_length?: number;\nraw?: boolean;\nheaders?: Record<string, string>;\n};"
    ), "{sdk}");
    assert!(
        sdk.contains("interface ToolOutputMap {\nfetch: {\nstatus: number;\nbody: string;\n};\n}")
    );
}

#[test]
fn recursive_schemas_become_named_aliases_in_the_sdk() {
    let tree = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "additionalProperties": false,
        "$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name"], "additionalProperties": false}}
    });
    let other = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {"title": "Node", "anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/Node"}}]}}});
    let direct = json!({"$ref": "#/$defs/Loop", "$defs": {"Loop": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Loop"}]}}});
    let sdk = sdk_declarations(&[
        tool("tree", "", tree, json!({})),
        tool(
            "list",
            "",
            other,
            json!({"type": "object", "properties": {"next": {"$ref": "#"}}, "additionalProperties": false}),
        ),
        tool("loop", "", direct, json!({})),
    ]);
    assert!(sdk.contains("\ntree: {\nroot: $Node2;\n};"), "{sdk}");
    assert!(sdk.contains("\nlist: $Node;"), "{sdk}");
    assert!(sdk.contains("type $Node = string | $Node[];"), "{sdk}");
    assert!(
        sdk.contains("type $Node2 = {\nname: string;\nchildren?: $Node2[];\n};"),
        "{sdk}"
    );
    assert!(sdk.contains("\nlist: $Root;"), "{sdk}");
    assert!(sdk.contains("type $Root = {\nnext?: $Root;\n};"), "{sdk}");
    // `Loop = string | Loop` would be a circular alias for TypeScript: inlined, recurring as unknown.
    assert!(sdk.contains("\nloop: string | unknown;"), "{sdk}");
}

#[test]
fn sdk_tool_from_a_definition() {
    let def = ToolDefinition::builder("echo")
        .description("Echo the text back.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false}))
        .execute(|args, _ctx| async move { Ok(json!({"text": args["text"].clone()})) })
        .build()
        .unwrap();
    let tool = sdk_tool_from(&def);
    assert_eq!(tool.name, "echo");
    assert_eq!(tool.description, "Echo the text back.");
    assert_eq!(&tool.parameters, def.parameters());
    assert_eq!(&tool.output, def.output_schema());
    let sdk = render_tools_sdk(&[tool]);
    assert!(sdk.contains("interface ToolOutputMap {\necho: {\ntext: string;\n};\n}"));
}

#[test]
fn a_member_typed_like_an_earlier_one_refers_to_it() {
    let job = json!({"type": "object", "properties": {
        "id": {"type": "string", "description": "Import job identifier"},
        "progress": {"type": "number", "description": "Between 0 and 1"}
    }, "required": ["id"]});
    let args = json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false});
    let tools = [
        tool(
            "import_tmx",
            "Import a TMX file.",
            args.clone(),
            job.clone(),
        ),
        tool(
            "check_import",
            "Check an import.",
            args.clone(),
            job.clone(),
        ),
        // Equal names never refer to themselves.
        tool("twin", "", job.clone(), json!({})),
        tool("twin", "", job.clone(), json!({})),
    ];
    let sdk = sdk_declarations(&tools);
    let outputs = &sdk[sdk.find("interface ToolOutputMap").unwrap()..];
    assert!(
        outputs.starts_with(
            "interface ToolOutputMap {\ncheck_import: {\n// Import job identifier\nid: string;\n"
        ),
        "{outputs}"
    );
    assert!(
        outputs.contains("\nimport_tmx: ToolOutputMap[\"check_import\"];\n}"),
        "{outputs}"
    );
    // A type shorter than the reference is written out.
    assert!(
        sdk.contains("// Check an import.\ncheck_import: {\nid: string;\n};\n// Import a TMX file.\nimport_tmx: {\nid: string;\n};"),
        "{sdk}"
    );
    assert_eq!(
        sdk.matches("\ntwin: {\n// Import job identifier").count(),
        2,
        "{sdk}"
    );
    assert_eq!(sdk, sdk_declarations_whole(&tools));
}

#[test]
fn array_items_are_parenthesised_only_around_unions_and_intersections() {
    let tools = [tool(
        "shapes",
        "",
        json!({"type": "object", "properties": {
            "closed": {"type": "array", "items": {"type": "object", "properties": {"k": {"enum": ["a", "b"]}}, "additionalProperties": false}},
            "open": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
            "either": {"type": "array", "items": {"type": ["string", "null"]}},
            "loops": {"type": "array", "items": {"$ref": "#/$defs/Loop"}}
        }, "additionalProperties": false, "$defs": {"Loop": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Loop"}]}}}),
        json!({}),
    )];
    let sdk = sdk_declarations(&tools);
    for line in [
        "closed?: {\nk?: \"a\" | \"b\";\n}[];",
        "open?: ({\nk?: string;\n} & JsonObject)[];",
        "either?: (string | null)[];",
        // An inline recursive alias prints its union in place: parenthesised like one.
        "loops?: (string | unknown)[];",
    ] {
        assert!(sdk.contains(line), "{line}\n---\n{sdk}");
    }
}
