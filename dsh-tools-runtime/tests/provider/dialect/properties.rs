//! Property tests over generated schemas — valid, odd and broken ones: rendering never panics,
//! and whenever it succeeds the dialect's invariants hold. Plus very deep schemas.

use dsh_tools_runtime::dialect::{
    Dialect, DialectOptions, OnUnsupported, render_schema, restore_omitted,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Map, Value, json};

use super::invariants::violations;

fn leaf() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!({}),
        json!(true),
        json!(false),
        json!(3),
        json!(null),
        json!("string"),
        json!({"type": "string"}),
        json!({"type": "integer", "minimum": 0, "maximum": 9}),
        json!({"type": "number", "exclusiveMinimum": true, "minimum": 0}),
        json!({"type": "boolean", "default": false}),
        json!({"type": "null"}),
        json!({"type": ["string", "null"]}),
        json!({"type": ["integer", "boolean", "null"], "minimum": 1}),
        json!({"type": []}),
        json!({"type": 7}),
        json!({"type": "date"}),
        json!({"$ref": "#"}),
        json!({"$ref": "#/$defs/A"}),
        json!({"$ref": "#/$defs/B", "description": "b"}),
        json!({"$ref": "#/$defs/missing"}),
        json!({"$ref": "https://example.com/other.json"}),
        json!({"$ref": 5}),
        json!({"const": "a"}),
        json!({"const": 1}),
        json!({"const": null}),
        json!({"enum": ["a", 1, null]}),
        json!({"enum": []}),
        json!({"enum": "x"}),
        json!({"type": "string", "enum": ["x"], "nullable": true}),
        json!({"type": "string", "format": "uri", "minLength": 2, "pattern": "^a"}),
        json!({"type": "integer", "exclusiveMinimum": 3, "multipleOf": 2}),
        json!({"type": "array"}),
        json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false}),
        json!({"type": "object"}),
        json!({"required": ["x"]}),
        json!({"not": {"type": "string"}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "title": "T"}),
    ])
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            (
                prop::collection::vec(("[a-c/~]{1,2}", inner.clone()), 0..4),
                prop::collection::vec("[a-d]", 0..3),
                prop::option::of(prop_oneof![Just(json!(true)), Just(json!(false)), inner.clone()]),
                any::<bool>(),
            )
                .prop_map(|(props, required, additional, typed)| {
                    let mut m = Map::new();
                    if typed {
                        m.insert("type".into(), "object".into());
                    }
                    m.insert("properties".into(), Value::Object(props.into_iter().collect()));
                    m.insert("required".into(), json!(required));
                    if let Some(a) = additional {
                        m.insert("additionalProperties".into(), a);
                    }
                    Value::Object(m)
                }),
            (inner.clone(), any::<bool>()).prop_map(|(items, tuple)| if tuple {
                json!({"type": "array", "items": [items], "minItems": 1})
            } else {
                json!({"type": "array", "items": items, "uniqueItems": true})
            }),
            (
                prop::collection::vec(inner.clone(), 0..4),
                prop::sample::select(vec!["anyOf", "oneOf", "allOf"]),
                prop::option::of(inner.clone()),
            )
                .prop_map(|(branches, keyword, sibling)| {
                    let mut m = match sibling {
                        Some(Value::Object(m)) => m,
                        _ => Map::new(),
                    };
                    m.insert(keyword.into(), Value::Array(branches));
                    Value::Object(m)
                }),
            inner.clone().prop_map(|s| match s {
                Value::Object(mut m) => {
                    m.insert("nullable".into(), true.into());
                    m.insert("description".into(), "d".into());
                    Value::Object(m)
                }
                other => other,
            }),
            inner.clone().prop_map(|s| json!({"$ref": "#/$defs/A", "description": "r", "properties": {"z": s}})),
            inner.clone().prop_map(|s| json!({"type": "object", "additionalProperties": s, "patternProperties": {"^x": s}})),
        ]
    })
}

/// A root: mostly objects with `$defs`, sometimes anything at all.
fn root() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (schema(), schema(), schema(), prop::option::of(schema())).prop_map(|(a, b, body, union)| {
            let mut m = match body {
                Value::Object(m) => m,
                other => {
                    let mut m = Map::new();
                    m.insert("properties".into(), json!({"x": other}));
                    m
                }
            };
            m.insert("$defs".into(), json!({"A": a, "B": b}));
            if let Some(u) = union {
                m.insert("anyOf".into(), json!([u, {"required": ["x"]}]));
            }
            Value::Object(m)
        }),
        1 => schema(),
    ]
}

proptest! {
    #![proptest_config(Config {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))),
        ..Config::default()
    })]

    #[test]
    fn rendering_never_panics_and_keeps_its_invariants(schema in root()) {
        for dialect in Dialect::ALL {
            if let Ok(rendered) = render_schema(&schema, dialect, &DialectOptions::default()) {
                let broken = violations(&rendered, dialect);
                prop_assert!(broken.is_empty(), "{dialect}: {broken:?}\ninput {schema}\noutput {}", rendered.schema);
                for issue in &rendered.issues {
                    prop_assert!(issue.path.starts_with('#'), "{issue:?}");
                }
            }
            let strict = DialectOptions::default().on_unsupported(OnUnsupported::Error);
            if let Ok(rendered) = render_schema(&schema, dialect, &strict) {
                prop_assert!(dialect != Dialect::OpenAiStrict || rendered.strict);
            }
        }
        let _ = restore_omitted(&schema, &json!({"x": null, "z": [null]}));
    }
}

/// 5,000 levels of nesting, through `properties`, `items`, `anyOf` and `$ref` chains.
#[test]
fn deep_schemas_do_not_overflow_the_stack() {
    let mut properties = json!({"type": "string"});
    let mut items = json!({"type": "string"});
    let mut unions = json!({"type": "string"});
    // `json!` would serialise the interpolated value (recursively): build by moving instead.
    let node = |entries: Vec<(&str, Value)>| -> Value {
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    };
    for _ in 0..5_000 {
        properties = node(vec![
            ("type", json!("object")),
            ("properties", node(vec![("a", properties)])),
        ]);
        items = node(vec![("type", json!("array")), ("items", items)]);
        unions = node(vec![(
            "anyOf",
            Value::Array(vec![unions, json!({"type": "null"})]),
        )]);
    }
    let mut defs = Map::new();
    for i in 0..5_000 {
        defs.insert(format!("D{i}"), json!({"type": "object", "properties": {"next": {"$ref": format!("#/$defs/D{}", i + 1)}}}));
    }
    defs.insert("D5000".into(), json!({"type": "string"}));
    let chain =
        json!({"type": "object", "properties": {"start": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let object = |name: &str, schema: Value| {
        node(vec![
            ("type", json!("object")),
            ("properties", node(vec![(name, schema)])),
        ])
    };
    let roots = [
        properties,
        object("items", items),
        object("u", unions),
        chain,
    ];
    for root in roots {
        let checked = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                check_deep(&root);
                // Dropping a 5,000-deep `serde_json::Value` recurses: leak it instead.
                std::mem::forget(root);
            })
            .unwrap()
            .join();
        assert!(checked.is_ok(), "a deep schema overflowed or panicked");
    }
}

/// Renders one deep root in every dialect (on a 512 KiB stack).
fn check_deep(root: &Value) {
    for dialect in Dialect::ALL {
        let rendered = render_schema(root, dialect, &DialectOptions::default()).unwrap();
        assert!(violations(&rendered, dialect).is_empty(), "{dialect}");
    }
    let _ = restore_omitted(root, &json!({"a": {"a": null}}));
}

/// `$ref` fan-out that doubles at every level stays within the node budget.
#[test]
fn exponential_ref_fan_out_is_bounded() {
    let mut defs = Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/N{}", i + 1);
        defs.insert(
            format!("N{i}"),
            json!({"type": "object", "properties": {
                "l": {"$ref": next, "description": "left"},
                "r": {"$ref": next, "description": "right"}
            }}),
        );
    }
    defs.insert("N40".into(), json!({"type": "string"}));
    let root =
        json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/N0"}}, "$defs": defs});
    for dialect in Dialect::ALL {
        let rendered = render_schema(&root, dialect, &DialectOptions::default()).unwrap();
        assert!(violations(&rendered, dialect).is_empty(), "{dialect}");
    }
}
