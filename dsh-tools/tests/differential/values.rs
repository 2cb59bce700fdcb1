//! Values for a schema: half shaped after it (right keys, near-miss literals, bounds ±1,
//! format-shaped strings and their near misses, tuples one short or one long, duplicated
//! items, maps around their entry counts), half at random.

use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

use super::schemas::key;

pub(crate) fn negative_zero() -> Value {
    Value::Number(Number::from_f64(-0.0).expect("finite"))
}

/// Numbers at the edges: integral floats (`1.0` is an integer), 2^53 and 2^53 + 1 as integers
/// and floats, the 64-bit extremes, tiny and huge floats, and negative zero.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-4i64..5).prop_map(Value::from),
        3 => prop::sample::select(vec![
            json!(1.0),
            json!(2.0),
            json!(-3.0),
            json!(0.5),
            json!(1.5),
            json!(-0.25),
            json!(0.75),
            json!(0.3),
            json!(0.7),
            json!(0.07),
            json!(1.1),
            json!(1e-7),
            json!(1e300),
            json!(-1e300),
            json!(9_007_199_254_740_991_u64),
            json!(9_007_199_254_740_992_u64),
            json!(9_007_199_254_740_993_u64),
            json!(9_007_199_254_740_992.0),
            json!(-9_007_199_254_740_993_i64),
            json!(4_503_599_627_370_496_u64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(18_446_744_073_709_551_616.0),
        ]),
        1 => Just(negative_zero()),
    ]
}

/// Strings that exercise lengths, patterns (ASCII and not, digits of other scripts, the
/// ECMAScript line terminators and white space) and near misses of every format.
const STRINGS: &[&str] = &[
    "", "a", "b", "ab", "abc", "aa", "aaa", "cd", "foo", "a foo", "foobar", "é", "😀", "😀😀",
    "A\u{30a}", "Å", "\u{0}", "1", "123", "12", "true", "A", "Z", "_", "a_1", "٣", "١٢٣", " ",
    "\u{a0}", "\u{feff}", "\u{2028}", "\n", "a\nb",
];

/// Format-shaped strings and near misses, by format.
fn format_strings(format: &str) -> &'static [&'static str] {
    match format {
        "date-time" => &[
            "2024-05-01T12:00:00Z",
            "2024-05-01T12:00:00.123+01:00",
            "2024-05-01t12:00:00z",
            "2024-05-01 12:00:00Z",
            "2024-05-01T12:00:00",
            "1990-12-31T23:59:60Z",
            "1990-12-31T15:59:60-08:00",
            "2024-02-30T12:00:00Z",
            "2024-05-01T24:00:00Z",
            "2024-05-01T12:00:00+24:00",
        ],
        "date" => &[
            "2024-05-01",
            "2024-02-29",
            "2023-02-29",
            "2000-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-5-1",
            "20240501",
            "+2024-05-01",
            "٢٠٢٤-05-01",
        ],
        "time" => &[
            "12:00:00Z",
            "12:00:00.5+01:00",
            "12:00:00",
            "23:59:60Z",
            "24:00:00Z",
            "12:00:00z",
            "12:00Z",
            "12:00:00+1:00",
        ],
        "duration" => &[
            "P1D",
            "PT1H30M",
            "P1W",
            "P1Y2M3DT4H5M6S",
            "P",
            "PT",
            "P1DT",
            "1D",
            "P1.5D",
            "PT0.5S",
            "P1W2D",
        ],
        "email" => &[
            "a@b.co",
            "name@example.com",
            "x@",
            "@x.com",
            "a b@c.d",
            "\"quoted\"@example.com",
            "a@[192.0.2.1]",
            "a..b@c.d",
            "é@example.com",
        ],
        "uri" => &[
            "https://example.com/a?b#c",
            "urn:isbn:0451450523",
            "http://[::1]:80/",
            "http://ex%41mple.com/",
            "file:///tmp/x",
            "mailto:a@b.co",
            "/relative",
            "https://example.com:99999/",
            "http:",
            "x-y:z",
            "http://a b.com/",
        ],
        "uuid" => &[
            "67e55044-10b1-426f-9247-bb680e5fe0c8",
            "67E55044-10B1-426F-9247-BB680E5FE0C8",
            "67e5504410b1426f9247bb680e5fe0c8",
            "{67e55044-10b1-426f-9247-bb680e5fe0c8}",
            "67e55044-10b1-426f-9247-bb680e5fe0c",
            "g7e55044-10b1-426f-9247-bb680e5fe0c8",
        ],
        "ipv4" => &[
            "192.0.2.1",
            "0.0.0.0",
            "255.255.255.255",
            "256.1.1.1",
            "192.168.001.1",
            "1.2.3",
            "1.2.3.4.5",
            "١.2.3.4",
        ],
        "ipv6" => &[
            "::1",
            "2001:db8::1",
            "::ffff:192.0.2.1",
            "fe80::1%eth0",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7:8:9",
            "::",
            "12345::1",
            ":1",
        ],
        "hostname" => &[
            "example.com",
            "localhost",
            "-bad.com",
            "a..b",
            "xn--bcher-kva.example",
            "a.b.c.d.e",
            "ex_ample.com",
            "example.com.",
            "é.com",
        ],
        _ => &[],
    }
}

fn string() -> impl Strategy<Value = Value> {
    prop::sample::select(STRINGS).prop_map(Value::from)
}

fn leaf_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        3 => number(),
        2 => string(),
    ]
}

/// Arbitrary JSON, small.
pub(crate) fn any_value() -> BoxedStrategy<Value> {
    leaf_value()
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
        .boxed()
}

/// The schema a local `$ref` names.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// A value shaped after `schema` (with near misses), or any value. `root` resolves `$ref`s;
/// `depth` bounds how many times a recursive schema is unfolded.
pub(crate) fn shaped(root: &Value, schema: &Value, depth: u8) -> BoxedStrategy<Value> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return match resolve(root, reference) {
            Some(target) if depth > 0 => shaped(root, target, depth - 1),
            _ => any_value(),
        };
    }
    if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
        let options: Vec<BoxedStrategy<Value>> =
            branches.iter().map(|b| shaped(root, b, depth)).collect();
        return prop::strategy::Union::new(options).boxed();
    }
    let mut literals: Vec<Value> = schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    literals.extend(schema.get("const").cloned());
    for key in [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ] {
        if let Some(n) = schema.get(key).and_then(Value::as_f64) {
            literals.extend([
                json!(n),
                json!(n - 1.0),
                json!(n + 1.0),
                json!(n + 0.5),
                json!(n * 3.0),
            ]);
            if let Some(i) = schema.get(key).and_then(Value::as_i64) {
                literals.extend([json!(i - 1), json!(i + 1)]);
            }
        }
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        literals.extend(format_strings(format).iter().map(|s| json!(s)));
    }
    let shape = match schema.get("type").and_then(Value::as_str) {
        Some("object") => objects(root, schema, depth),
        Some("array") => arrays(root, schema, depth),
        Some("string") => string().boxed(),
        Some("number" | "integer") => number().boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("null") => Just(Value::Null).boxed(),
        _ => any_value(),
    };
    if literals.is_empty() {
        prop_oneof![4 => shape, 1 => any_value()].boxed()
    } else {
        prop_oneof![
            3 => prop::sample::select(literals),
            3 => shape,
            1 => any_value(),
        ]
        .boxed()
    }
}

fn objects(root: &Value, schema: &Value, depth: u8) -> BoxedStrategy<Value> {
    let properties: Vec<BoxedStrategy<Option<(String, Value)>>> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, child)| {
                    let name = name.clone();
                    prop::option::weighted(
                        0.8,
                        shaped(root, child, depth).prop_map(move |v| (name.clone(), v)),
                    )
                    .boxed()
                })
                .collect()
        })
        .unwrap_or_default();
    let extra_value = schema
        .get("additionalProperties")
        .filter(|a| a.is_object())
        .map_or_else(any_value, |values| shaped(root, values, depth));
    let extras = prop::option::weighted(0.4, prop::collection::vec((key(), extra_value), 1..4));
    (properties, extras)
        .prop_map(|(properties, extras)| {
            let mut map: Map<String, Value> = properties.into_iter().flatten().collect();
            for (key, value) in extras.into_iter().flatten() {
                map.insert(key, value);
            }
            Value::Object(map)
        })
        .boxed()
}

fn arrays(root: &Value, schema: &Value, depth: u8) -> BoxedStrategy<Value> {
    let items = schema
        .get("items")
        .filter(|i| i.is_object())
        .map_or_else(any_value, |items| shaped(root, items, depth));
    let prefix: Vec<BoxedStrategy<Value>> = schema
        .get("prefixItems")
        .and_then(Value::as_array)
        .map(|prefix| prefix.iter().map(|p| shaped(root, p, depth)).collect())
        .unwrap_or_default();
    let tail = prop::collection::vec(items, 0..4);
    // A duplicated element now and then, for `uniqueItems`.
    (prefix, tail, 0..4_u8)
        .prop_map(|(mut elements, tail, twist)| {
            match twist {
                1 => {
                    elements.pop();
                }
                2 => {
                    if let Some(first) = elements.first().or(tail.first()).cloned() {
                        elements.push(first);
                    }
                }
                _ => {}
            }
            elements.extend(tail);
            Value::Array(elements)
        })
        .boxed()
}
