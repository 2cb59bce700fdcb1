//! Generated schemas inside the `Parameters` vocabulary: every keyword of it, typed and
//! type-less, nested, and behind local `$ref`s (plain definitions and recursive ones).

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Property names: plain, JavaScript object-prototype names, escapes, multi-byte, empty.
pub(crate) const KEYS: &[&str] = &[
    "a",
    "b",
    "c",
    "__proto__",
    "constructor",
    "toString",
    "foo\nbar",
    "é",
    "",
];

pub(crate) fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_owned)
}

/// ECMAScript patterns (with the `u` flag) whose meaning the crate's translation keeps:
/// anchors, classes and their escapes, quantifiers, alternation, Unicode properties, code-point
/// `.`, and a lookahead. `\b` is ASCII in ECMAScript, not in the crate (`AsciiWordBoundary` in
/// `differential.rs`).
pub(crate) const PATTERNS: &[&str] = &[
    "^a",
    "a+$",
    "^[a-z]+$",
    "^\\d{3}$",
    "^\\w+$",
    "^\\W",
    "\\bfoo",
    "\\bé",
    "^[^@]+@[^@]+$",
    "^.$",
    "^.{2}$",
    "^\\p{L}+$",
    "^[\\u0041-\\u005A]$",
    "^\\S+$",
    "(ab|cd)",
    "^a{2,3}$",
    "^$",
    "😀",
    "^(?=.*\\d)",
    "^\\D*$",
    "é",
    "^[0-9]{4}-[0-9]{2}",
];

/// Every format the vocabulary asserts.
pub(crate) const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
];

/// Adds annotations (never constraints) to some schemas.
fn annotate(schema: Value, annotations: u8) -> Value {
    let mut schema = schema;
    if let Value::Object(map) = &mut schema {
        if annotations & 1 != 0 {
            map.insert("description".into(), json!("A value."));
        }
        if annotations & 2 != 0 {
            map.insert("default".into(), json!({"not": "validated"}));
        }
        if annotations & 4 != 0 {
            map.insert("examples".into(), json!([1, "x", null]));
        }
    }
    schema
}

fn string_schema() -> impl Strategy<Value = Value> {
    let literals = prop::sample::subsequence(vec!["", "a", "ab", "é", "😀", "A\u{30a}", "Å"], 1..4);
    (
        prop::option::of(0u8..3),
        prop::option::of(0u8..4),
        prop::option::weighted(0.2, literals),
        any::<bool>(),
        prop::option::weighted(0.35, prop::sample::select(PATTERNS)),
        prop::option::weighted(0.35, prop::sample::select(FORMATS)),
    )
        .prop_map(|(min, max, literals, constant, pattern, format)| {
            let mut node = json!({"type": "string"});
            if let Some(min) = min {
                node["minLength"] = json!(min);
            }
            if let Some(max) = max {
                node["maxLength"] = json!(max);
            }
            if let Some(pattern) = pattern {
                node["pattern"] = json!(pattern);
            }
            if let Some(format) = format {
                node["format"] = json!(format);
            }
            if let Some(literals) = literals {
                if constant {
                    node["const"] = json!(literals[0]);
                } else {
                    node["enum"] = json!(literals);
                }
            }
            node
        })
}

/// Bounds: integers, integral floats, fractions, and the 2^53 boundary.
pub(crate) fn bound() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..4).prop_map(Value::from),
        prop::sample::select(vec![
            json!(0.5),
            json!(-1.5),
            json!(2.0),
            json!(1e300),
            json!(9_007_199_254_740_991_u64),
            json!(9_007_199_254_740_992_u64),
            json!(-9_007_199_254_740_991_i64),
        ]),
    ]
}

/// `multipleOf` values: integers, dyadic rationals (whose double is the decimal itself) and
/// short decimals (`0.1`, whose double is not). On values below 2^53 our decimal reading and
/// the crate's agree for all of them; past 2^53 they differ (`BinaryMultipleOf` in
/// `differential.rs`).
pub(crate) fn multiple() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!(1),
        json!(2),
        json!(3),
        json!(0.5),
        json!(0.25),
        json!(1.5),
        json!(2.0),
        json!(4_503_599_627_370_496_u64),
        json!(0.1),
        json!(0.01),
        json!(0.3),
    ])
}

fn numeric_schema() -> impl Strategy<Value = Value> {
    let integer_literals = prop::sample::subsequence(
        vec![
            json!(0),
            json!(1),
            json!(2.0),
            json!(-3),
            json!(9_007_199_254_740_992_u64),
        ],
        1..3,
    );
    let number_literals = prop::sample::subsequence(
        vec![json!(0), json!(1.5), json!(2), json!(-0.25), json!(1e300)],
        1..3,
    );
    let bounds = (
        prop::option::of(bound()),
        prop::option::of(bound()),
        prop::option::weighted(0.3, bound()),
        prop::option::weighted(0.3, bound()),
        prop::option::weighted(0.3, multiple()),
    );
    (
        any::<bool>(),
        bounds,
        prop::option::weighted(0.3, (integer_literals, number_literals)),
        any::<bool>(),
    )
        .prop_map(
            |(integer, (min, max, xmin, xmax, multiple_of), literals, constant)| {
                let mut node = json!({"type": if integer { "integer" } else { "number" }});
                for (key, value) in [
                    ("minimum", min),
                    ("maximum", max),
                    ("exclusiveMinimum", xmin),
                    ("exclusiveMaximum", xmax),
                    ("multipleOf", multiple_of),
                ] {
                    if let Some(value) = value {
                        node[key] = value;
                    }
                }
                if let Some((integers, numbers)) = literals {
                    let literals = if integer { integers } else { numbers };
                    if constant {
                        node["const"] = literals[0].clone();
                    } else {
                        node["enum"] = Value::Array(literals);
                    }
                }
                node
            },
        )
}

/// Assertions without `type`: each applies to the values of its own type.
fn typeless_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        bound().prop_map(|b| json!({"minimum": b})),
        bound().prop_map(|b| json!({"exclusiveMaximum": b})),
        multiple().prop_map(|m| json!({"multipleOf": m})),
        prop::sample::select(PATTERNS).prop_map(|p| json!({"pattern": p})),
        prop::sample::select(FORMATS).prop_map(|f| json!({"format": f})),
        (0u8..3).prop_map(|n| json!({"maxLength": n})),
        (0u8..3).prop_map(|n| json!({"minItems": n})),
        Just(json!({"uniqueItems": true})),
        (0u8..3).prop_map(|n| json!({"minProperties": n})),
        (0u8..3).prop_map(|n| json!({"maxProperties": n})),
    ]
}

fn leaf_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        1 => Just(json!({})),
        4 => string_schema(),
        4 => numeric_schema(),
        2 => typeless_schema(),
        1 => Just(json!({"type": "boolean"})),
        1 => Just(json!({"type": "boolean", "enum": [false]})),
        1 => Just(json!({"type": "boolean", "const": true})),
        1 => Just(json!({"type": "null"})),
        1 => Just(json!({"type": "null", "const": null})),
        1 => Just(json!({"type": "object"})),
        1 => Just(json!({"type": "array"})),
    ];
    (leaf, 0u8..8).prop_map(|(schema, annotations)| annotate(schema, annotations))
}

fn object_schema(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let additional = prop_oneof![
        2 => Just(None),
        2 => Just(Some(json!(false))),
        1 => Just(Some(json!(true))),
        1 => inner.clone().prop_map(Some),
    ];
    (
        prop::collection::vec((key(), inner, any::<bool>()), 0..4),
        additional,
        prop::option::weighted(0.25, 0u8..3),
        prop::option::weighted(0.25, 0u8..4),
    )
        .prop_map(|(entries, additional, min, max)| {
            let mut properties = Map::new();
            let mut required: Vec<Value> = Vec::new();
            for (name, child, is_required) in entries {
                if is_required && !required.contains(&json!(name)) {
                    required.push(json!(name));
                }
                properties.insert(name, child);
            }
            let mut node = json!({"type": "object", "properties": properties});
            if !required.is_empty() {
                node["required"] = Value::Array(required);
            }
            if let Some(additional) = additional {
                node["additionalProperties"] = additional;
            }
            if let Some(min) = min {
                node["minProperties"] = json!(min);
            }
            if let Some(max) = max {
                node["maxProperties"] = json!(max);
            }
            node
        })
}

fn array_schema(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let tuple = prop::option::weighted(0.3, (prop::collection::vec(inner.clone(), 1..3), 0u8..3));
    (
        prop::option::of(inner),
        prop::option::of(0u8..3),
        prop::option::of(0u8..4),
        prop::option::weighted(0.3, any::<bool>()),
        tuple,
    )
        .prop_map(|(items, min, max, unique, tuple)| {
            let mut node = json!({"type": "array"});
            if let Some(items) = items {
                node["items"] = items;
            }
            if let Some(min) = min {
                node["minItems"] = json!(min);
            }
            if let Some(max) = max {
                node["maxItems"] = json!(max);
            }
            if let Some(unique) = unique {
                node["uniqueItems"] = json!(unique);
            }
            if let Some((prefix, rest)) = tuple {
                node["prefixItems"] = Value::Array(prefix);
                // A closed tuple one time in three; open (whatever `items` says) otherwise.
                if rest == 0 {
                    node["items"] = json!(false);
                }
            }
            node
        })
}

fn tree() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(4, 32, 4, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            3 => object_schema(inner.clone()),
            2 => array_schema(inner.clone()),
            1 => prop::collection::vec(inner, 2..4).prop_map(|branches| json!({"oneOf": branches})),
        ]
    })
}

/// A schema: a tree as it is, a tree behind a `$ref` to its definition (with a sibling
/// definition referred to from inside), or a recursive type (a node whose children are
/// itself).
pub(crate) fn schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => tree(),
        1 => (tree(), leaf_schema()).prop_map(|(body, leaf)| {
            let mut body = body;
            // A property that refers to the sibling definition.
            if let Some(properties) = body.get_mut("properties").and_then(Value::as_object_mut) {
                properties.insert("r".into(), json!({"$ref": "#/$defs/Leaf"}));
            }
            json!({"$defs": {"Node": body, "Leaf": leaf}, "$ref": "#/$defs/Node"})
        }),
        2 => (leaf_schema(), 0u8..3, any::<bool>()).prop_map(|(value, max, required)| {
            let mut node = json!({
                "type": "object",
                "properties": {
                    "v": value,
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}, "maxItems": max}
                },
                "additionalProperties": false
            });
            if required {
                node["required"] = json!(["v"]);
            }
            json!({"$defs": {"Tree": node}, "$ref": "#/$defs/Tree"})
        }),
    ]
}
