//! Value compatibility: a value valid under the canonical schema, sent the way each provider
//! sends it (OpenAI strict: omitted optionals as `null`), validates against the rendered schema
//! (`jsonschema`, Draft 2020-12; Gemini's `nullable` read as a `null` type), and
//! `restore_omitted` turns strict arguments back into the canonical ones.

use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_schema, restore_omitted};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Map, Value, json};

/// A Draft 2020-12 validator.
pub(crate) fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::new(schema)
        .unwrap_or_else(|e| panic!("{schema} is not a valid schema: {e}"))
}

/// Gemini's OpenAPI schema read as JSON Schema: `nullable: true` → a `null` type (and `null`
/// in an `enum`).
pub(crate) fn gemini_as_json_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let converted = match key.as_str() {
            "nullable" => continue,
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), gemini_as_json_schema(v)))
                    .collect(),
            ),
            "anyOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(gemini_as_json_schema)
                    .collect(),
            ),
            "items" => gemini_as_json_schema(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        if let Some(Value::String(t)) = out.get("type").cloned() {
            out.insert("type".into(), json!([t, "null"]));
        }
        if let Some(Value::Array(members)) = out.get_mut("enum") {
            members.push(Value::Null);
        }
    }
    Value::Object(out)
}

/// The target of a local `$ref` (`#`, `#/$defs/X`, `#/definitions/X`), else the schema.
fn deref<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some("#") => root,
        Some(r) => r
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(schema),
        None => schema,
    }
}

/// Whether `value` has the shape a (rendered) union branch declares: its type, and for objects
/// only declared keys with matching `enum` tags.
fn fits(root: &Value, branch: &Value, value: &Value) -> bool {
    let branch = deref(root, branch);
    let own = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let typed = match branch.get("type") {
        Some(Value::String(t)) => t == own || (t == "number" && own == "integer"),
        Some(Value::Array(ts)) => ts
            .iter()
            .any(|t| t == own || (t == "number" && own == "integer")),
        _ => true,
    };
    let keys = match (value, branch.get("properties").and_then(Value::as_object)) {
        (Value::Object(v), Some(props)) => v.iter().all(|(k, x)| {
            props.get(k).is_some_and(|p| {
                p.get("enum")
                    .and_then(Value::as_array)
                    .is_none_or(|m| m.contains(x))
            })
        }),
        _ => true,
    };
    typed && keys
}

/// What a strict model sends for a canonical value: every property the rendered strict schema
/// declares and the value lacks, as `null`.
pub(crate) fn strict_form(root: &Value, schema: &Value, value: &Value) -> Value {
    let schema = deref(root, schema);
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        return match branches.iter().find(|b| fits(root, b, value)) {
            Some(branch) => strict_form(root, branch, value),
            None => value.clone(),
        };
    }
    match value {
        Value::Object(members) => {
            let mut out = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (key, property) in props {
                    let member = members
                        .get(key)
                        .map_or(Value::Null, |m| strict_form(root, property, m));
                    out.insert(key.clone(), member);
                }
            }
            for (key, member) in members {
                out.entry(key.clone()).or_insert_with(|| member.clone());
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let item = schema.get("items").unwrap_or(&Value::Bool(true));
            Value::Array(items.iter().map(|i| strict_form(root, item, i)).collect())
        }
        other => other.clone(),
    }
}

/// A canonical schema with one valid value, what a strict model sends for it, and what
/// `restore_omitted` must give back.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub schema: Value,
    pub value: Value,
    pub strict: Value,
    pub restored: Value,
    pub nullable: bool,
}

fn same(schema: Value, value: Value) -> Case {
    Case {
        schema,
        strict: value.clone(),
        restored: value.clone(),
        value,
        nullable: false,
    }
}

fn leaf() -> impl Strategy<Value = Case> {
    prop_oneof![
        "[a-z]{0,4}".prop_map(|s| same(json!({"type": "string"}), json!(s))),
        (0u8..=255).prop_map(|n| same(
            json!({"type": "integer", "minimum": 0, "maximum": 255}),
            json!(n)
        )),
        any::<bool>().prop_map(|b| same(json!({"type": "boolean"}), json!(b))),
        prop_oneof![Just("red"), Just("green")].prop_map(|c| same(
            json!({"type": "string", "enum": ["red", "green"], "description": "A color."}),
            json!(c)
        )),
        "[a-z]{0,3}".prop_map(|s| same(
            json!({"type": "string", "maxLength": 3, "pattern": "^[a-z]*$"}),
            json!(s)
        )),
        (-4i32..4).prop_map(|n| same(json!({"type": "number"}), json!(f64::from(n) / 2.0))),
    ]
}

fn option(inner: Case, some: bool) -> Case {
    if inner.nullable {
        return inner;
    }
    let schema = json!({"oneOf": [inner.schema, {"type": "null"}]});
    if some {
        Case {
            schema,
            nullable: true,
            ..inner
        }
    } else {
        Case {
            schema,
            value: Value::Null,
            strict: Value::Null,
            restored: Value::Null,
            nullable: true,
        }
    }
}

fn array(inner: Case, count: usize) -> Case {
    let n = |v: &Value| Value::Array(vec![v.clone(); count]);
    Case {
        schema: json!({"type": "array", "items": inner.schema}),
        value: n(&inner.value),
        strict: n(&inner.strict),
        restored: n(&inner.restored),
        nullable: false,
    }
}

fn object(fields: Vec<(Case, bool, bool)>, additional: u8) -> Case {
    let mut properties = Map::new();
    let (mut value, mut strict, mut restored) = (Map::new(), Map::new(), Map::new());
    let mut required = Vec::new();
    for (i, (field, is_required, present)) in fields.into_iter().enumerate() {
        let name = format!("p{i}");
        properties.insert(name.clone(), field.schema);
        if is_required {
            required.push(json!(name));
        }
        if is_required || present {
            value.insert(name.clone(), field.value);
            strict.insert(name.clone(), field.strict);
            restored.insert(name, field.restored);
        } else {
            strict.insert(name.clone(), Value::Null);
            if field.nullable {
                restored.insert(name, Value::Null);
            }
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    match additional {
        0 => {}
        1 => {
            schema.insert("additionalProperties".into(), true.into());
        }
        _ => {
            schema.insert("additionalProperties".into(), false.into());
        }
    }
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    Case {
        schema: Value::Object(schema),
        value: Value::Object(value),
        strict: Value::Object(strict),
        restored: Value::Object(restored),
        nullable: false,
    }
}

fn tagged(inner: Case, first: bool) -> Case {
    let schema = json!({"oneOf": [
        {"type": "object", "additionalProperties": false,
         "properties": {"kind": {"type": "string", "const": "a"}, "v": inner.schema}, "required": ["kind", "v"]},
        {"type": "object", "additionalProperties": false,
         "properties": {"kind": {"type": "string", "const": "b"}}, "required": ["kind"]}
    ]});
    if first {
        Case {
            schema,
            value: json!({"kind": "a", "v": inner.value}),
            strict: json!({"kind": "a", "v": inner.strict}),
            restored: json!({"kind": "a", "v": inner.restored}),
            nullable: false,
        }
    } else {
        same(schema, json!({"kind": "b"}))
    }
}

fn map(inner: Case) -> Case {
    Case {
        schema: json!({"type": "object", "additionalProperties": inner.schema}),
        value: json!({"k": inner.value}),
        strict: json!({"k": inner.strict}),
        restored: json!({"k": inner.restored}),
        nullable: false,
    }
}

pub(crate) fn case() -> impl Strategy<Value = Case> {
    leaf().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(c, some)| option(c, some)),
            (inner.clone(), 0usize..3).prop_map(|(c, n)| array(c, n)),
            (
                prop::collection::vec((inner.clone(), any::<bool>(), any::<bool>()), 1..4),
                0u8..3
            )
                .prop_map(|(fields, additional)| object(fields, additional)),
            (inner.clone(), any::<bool>()).prop_map(|(c, first)| tagged(c, first)),
            inner.prop_map(map),
        ]
    })
}

/// The arguments object of a tool: the root is always an object.
pub(crate) fn root_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((case(), any::<bool>(), any::<bool>()), 0..4),
        0u8..3,
    )
        .prop_map(|(fields, additional)| object(fields, additional))
}

/// Checks one case in every dialect.
pub(crate) fn check(case: &Case) {
    let canonical = validator(&case.schema);
    assert!(canonical.is_valid(&case.value), "generator bug: {case:?}");
    for dialect in Dialect::ALL {
        let rendered = render_schema(&case.schema, dialect, &DialectOptions::default()).unwrap();
        let (schema, sent) = match dialect {
            Dialect::OpenAiStrict if rendered.strict => (rendered.schema.clone(), &case.strict),
            Dialect::Gemini => (gemini_as_json_schema(&rendered.schema), &case.value),
            _ => (rendered.schema.clone(), &case.value),
        };
        assert!(
            validator(&schema).is_valid(sent),
            "{dialect}: {sent} does not validate against {schema} (canonical {})",
            case.schema
        );
        if dialect == Dialect::OpenAiStrict && rendered.strict {
            assert_eq!(
                strict_form(&rendered.schema, &rendered.schema, &case.value),
                case.strict,
                "strict_form, rendered {}",
                rendered.schema
            );
            let restored = restore_omitted(&case.schema, &case.strict);
            assert_eq!(
                restored, case.restored,
                "restore_omitted, canonical {}",
                case.schema
            );
            assert!(
                canonical.is_valid(&restored),
                "restored {restored} is not canonical-valid"
            );
        }
    }
}

proptest! {
    #![proptest_config(Config {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))),
        ..Config::default()
    })]

    #[test]
    fn values_survive_every_dialect(case in root_case()) {
        check(&case);
    }
}

/// Values serialized from the Rust types of `derived.rs` validate against each rendering.
#[test]
fn serialized_rust_values_validate_in_every_dialect() {
    use super::derived::{Change, Edit, Loose, Order, Range, Shape, Wrap, params};
    let cases: Vec<(Value, Vec<Value>)> = vec![
        (
            params::<Wrap<Shape>>(),
            vec![
                serde_json::to_value(Wrap { v: Shape::Empty }).unwrap(),
                serde_json::to_value(Wrap {
                    v: Shape::Circle(3),
                })
                .unwrap(),
                serde_json::to_value(Wrap {
                    v: Shape::Rect {
                        width: 2,
                        height: None,
                    },
                })
                .unwrap(),
            ],
        ),
        (
            params::<Wrap<Edit>>(),
            vec![
                serde_json::to_value(Wrap {
                    v: Edit::Insert {
                        at: 1,
                        text: "x".into(),
                    },
                })
                .unwrap(),
                serde_json::to_value(Wrap {
                    v: Edit::Delete {
                        range: Range {
                            from: 1,
                            to: Some(2),
                        },
                    },
                })
                .unwrap(),
                serde_json::to_value(Wrap { v: Edit::Clear }).unwrap(),
            ],
        ),
        (
            params::<Wrap<Change>>(),
            vec![
                serde_json::to_value(Wrap { v: Change::Noop }).unwrap(),
                serde_json::to_value(Wrap {
                    v: Change::Rename("b".into()),
                })
                .unwrap(),
            ],
        ),
        (
            params::<Wrap<Option<Loose>>>(),
            vec![
                serde_json::to_value(Wrap {
                    v: Some(Loose::Flag(true)),
                })
                .unwrap(),
                serde_json::to_value(Wrap::<Option<Loose>> { v: None }).unwrap(),
            ],
        ),
        (
            params::<Wrap<Option<Vec<Order>>>>(),
            vec![json!({"v": ["newest", "oldest"]}), json!({"v": null})],
        ),
    ];
    for (schema, values) in cases {
        for value in values {
            assert!(validator(&schema).is_valid(&value), "canonical: {value}");
            for dialect in Dialect::ALL {
                let rendered = render_schema(&schema, dialect, &DialectOptions::default()).unwrap();
                let (checked, sent) = match dialect {
                    Dialect::Gemini => (gemini_as_json_schema(&rendered.schema), value.clone()),
                    Dialect::OpenAiStrict if rendered.strict => {
                        let sent = strict_form(&rendered.schema, &rendered.schema, &value);
                        let restored = restore_omitted(&schema, &sent);
                        assert!(
                            validator(&schema).is_valid(&restored),
                            "restored {restored}"
                        );
                        (rendered.schema, sent)
                    }
                    _ => (rendered.schema, value.clone()),
                };
                assert!(
                    validator(&checked).is_valid(&sent),
                    "{dialect}: {sent} against {checked}"
                );
            }
        }
    }
}
