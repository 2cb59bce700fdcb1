//! Soundness of the generated schemas: whenever a tool's parameter validation accepts an
//! argument, deserialising it into the parameter's Rust type succeeds.
//!
//! Each property wraps the type as the only parameter of a tool (`{"v": T}`, the path a
//! `#[tool]` takes), generates JSON values biased towards the schema's shape (right keys with
//! wrong types, integer edges ±1, integral floats, 2^53 + 1, strings of 0, 1 and 2 characters,
//! `null` where a value is optional, extra and aliased keys) mixed with arbitrary JSON, and
//! checks `validate_args` accepts ⇒ `__private::deserialize_args` succeeds. Each property must
//! also see both accepted and rejected cases, so it never holds vacuously.

#![allow(dead_code, reason = "the types are only deserialised")]

use std::cell::Cell;
use std::collections::HashMap;

use dsh_tools::ToolDefinition;
use dsh_tools::schema::ToolSchema;
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

// ----- the types under test -----

/// The single parameter `v` of a tool.
#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
struct Wrap<T> {
    v: T,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Person {
    first_name: String,
    #[serde(default)]
    age_years: u8,
    nick_name: Option<String>,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
struct Record {
    id: u32,
    #[serde(flatten)]
    person: Person,
    #[serde(flatten)]
    extra: Option<Extra>,
    tags: Vec<String>,
    #[serde(alias = "lvl")]
    level: i8,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
struct Extra {
    note: String,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(deny_unknown_fields, rename_all = "SCREAMING_SNAKE_CASE")]
struct Strict {
    flag: bool,
    #[serde(default)]
    count: Option<u16>,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(default)]
struct Defaults {
    a: u8,
    b: String,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            a: 7,
            b: "b".into(),
        }
    }
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(rename_all = "kebab-case")]
enum Mode {
    FastForward,
    #[serde(rename = "slow", alias = "Slow")]
    Slow,
    #[serde(skip)]
    _Hidden,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
enum External {
    Unit,
    Other,
    Newtype(u8),
    Maybe(Option<i16>),
    Struct { a: u8, b: Option<String> },
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(deny_unknown_fields)]
struct Closed {
    z: u8,
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Internal {
    Unit,
    Person(Person),
    Closed(Closed),
    Point {
        x: i16,
        #[serde(alias = "why")]
        y: i16,
    },
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    Newtype(u8),
    Optional(Option<char>),
    Struct { x: i16 },
}

#[derive(Debug, Deserialize, dsh_tools::ToolSchema)]
#[serde(untagged)]
enum Untagged {
    Nothing,
    Small(u8),
    Float(f32),
    Text(String),
    Named { x: String },
}

/// Maps whose number of entries is bounded (`minProperties`/`maxProperties`).
#[derive(Debug, Deserialize, serde::Serialize, dsh_tools::ToolSchema)]
struct BoundedMaps {
    #[schema(length(min = 1, max = 3))]
    labels: HashMap<String, u8>,
    #[schema(length(max = 1))]
    rest: Option<std::collections::BTreeMap<String, String>>,
}

// ----- the property -----

fn config() -> Config {
    Config {
        cases: 2000,
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..Config::default()
    }
}

fn definition<T: ToolSchema + 'static>() -> ToolDefinition {
    ToolDefinition::builder("sound")
        .description("Soundness probe.")
        .parameters_spec(&<Wrap<T> as ToolSchema>::SCHEMA)
        .output_json(json!({}))
        .execute(|_args, _ctx| async { Ok(Value::Null) })
        .build()
        .unwrap()
}

/// Runs the property for `T` (`name` is the test's, `label` the type's) and records how many
/// cases validated.
fn check<T: ToolSchema + DeserializeOwned + std::fmt::Debug + 'static>(name: &str, label: &str) {
    let tool = definition::<T>();
    // The schema validation uses (the one shown leaves out the integer types' widths).
    let full = <Wrap<T> as ToolSchema>::SCHEMA
        .to_parameters_schema()
        .unwrap();
    let schema = &full["properties"]["v"];
    let keys = property_names(schema);
    let values = prop::option::weighted(0.95, arguments(schema, &keys));
    let accepted = Cell::new(0_u32);
    let rejected = Cell::new(0_u32);
    let mut runner = TestRunner::new(config());
    let outcome = runner.run(&values, |v| {
        let args = match v {
            Some(v) => json!({ "v": v }),
            None => json!({}),
        };
        if tool.validate_args(&args).is_err() {
            rejected.set(rejected.get() + 1);
            return Ok(());
        }
        accepted.set(accepted.get() + 1);
        match dsh_tools::__private::deserialize_args::<Wrap<T>>(&args) {
            Ok(_) => Ok(()),
            Err(e) => Err(TestCaseError::fail(format!(
                "{label}: {args} validates against {schema} but does not deserialise: {e}"
            ))),
        }
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    let (accepted, rejected) = (accepted.get(), rejected.get());
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        &format!("soundness-{name}"),
        &format!("soundness {label}: {accepted} validated and deserialised, {rejected} rejected"),
    );
    assert!(
        accepted > 0,
        "{label}: no generated value validated; the property is vacuous"
    );
    assert!(
        rejected > 0,
        "{label}: every generated value validated; the generator is too tame"
    );
}

// ----- value generation -----

/// Every property name of a schema (all branches, all depths): extra keys are drawn from them,
/// so a branch meets the keys of its siblings (`{"t": "Unit", "c": 5}`).
fn property_names(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    names.extend(properties.keys().cloned());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Values for `schema`: mostly shaped after it, sometimes anything.
fn arguments(schema: &Value, keys: &[String]) -> BoxedStrategy<Value> {
    prop_oneof![9 => shaped(schema, keys), 1 => any_json()].boxed()
}

/// Arbitrary JSON (small).
fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6..1e6_f64).prop_map(Value::from),
        "[a-zA-Z_é😀]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Object keys: the schema's own property names, the aliases of the test types, and noise.
fn extra_key(keys: &[String]) -> BoxedStrategy<String> {
    if keys.is_empty() {
        return key();
    }
    prop_oneof![prop::sample::select(keys.to_vec()), key()].boxed()
}

/// Object keys: the names and aliases the test types use, and noise.
fn key() -> BoxedStrategy<String> {
    prop_oneof![
        Just("v"),
        Just("type"),
        Just("t"),
        Just("c"),
        Just("x"),
        Just("y"),
        Just("why"),
        Just("lvl"),
        Just("level"),
        Just("note"),
        Just("NOTE"),
        Just("firstName"),
        Just("first_name"),
        Just("Unit"),
        Just("Newtype"),
        Just("extra"),
        Just(""),
    ]
    .prop_map(str::to_owned)
    .boxed()
}

fn shaped(schema: &Value, keys: &[String]) -> BoxedStrategy<Value> {
    if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
        return Union::new(branches.iter().map(|b| shaped(b, keys))).boxed();
    }
    let noise = any_json();
    if let Some(members) = schema.get("enum").and_then(Value::as_array) {
        return prop_oneof![4 => literal(members.clone()), 1 => noise].boxed();
    }
    if let Some(value) = schema.get("const") {
        return prop_oneof![4 => literal(vec![value.clone()]), 1 => noise].boxed();
    }
    let shape = match schema.get("type").and_then(Value::as_str) {
        None => return any_json(),
        Some("null") => Just(Value::Null).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("integer") | Some("number") => numbers(schema),
        Some("string") => strings(schema),
        Some("array") => arrays(schema, keys),
        Some("object") => objects(schema, keys),
        Some(_) => Just(Value::Null).boxed(),
    };
    prop_oneof![5 => shape, 1 => noise].boxed()
}

/// A listed literal, or a near miss of one (case changed, cut, extended).
fn literal(members: Vec<Value>) -> BoxedStrategy<Value> {
    (prop::sample::select(members), 0..4_u8)
        .prop_map(|(value, twist)| match (value.as_str(), twist) {
            (Some(s), 1) => Value::from(s.to_uppercase()),
            (Some(s), 2) => Value::from(s.chars().skip(1).collect::<String>()),
            (Some(s), 3) => Value::from(format!("{s}_")),
            _ => value,
        })
        .boxed()
}

/// Mostly in-range values, then integer edges ±1, integral and fractional floats, the 2^53
/// boundary, anything.
fn numbers(schema: &Value) -> BoxedStrategy<Value> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let safe = 2f64.powi(53);
    let (low, high) = (
        bound("minimum").unwrap_or(-1e6).max(-safe) as i64,
        bound("maximum").unwrap_or(1e6).min(safe) as i64,
    );
    let mut edges: Vec<f64> = vec![0.0, 1.0, -1.0, safe, -safe, 1e39, f64::MAX];
    for b in [bound("minimum"), bound("maximum")].into_iter().flatten() {
        edges.extend([b, b - 1.0, b + 1.0]);
    }
    let edges: Vec<Value> = edges
        .into_iter()
        .flat_map(|f| {
            let int = (f.abs() < 9.3e18).then(|| Value::from(f as i64));
            [Some(Value::from(f)), int].into_iter().flatten()
        })
        .collect();
    let wild = prop_oneof![
        Just(Value::from(9_007_199_254_740_993_u64)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
        any::<i64>().prop_map(Value::from),
        (-300.0..300.0_f64).prop_map(Value::from),
        Just(Value::from(1.5)),
    ];
    prop_oneof![
        3 => (low..=high).prop_map(Value::from),
        1 => (low..=high).prop_map(|i| Value::from(i as f64)),
        2 => prop::sample::select(edges),
        1 => wild,
    ]
    .boxed()
}

/// Strings of 0, 1 and 2 characters (multi-byte included) and a few longer ones; for a
/// `format`, near misses of that format (each piece valid or just out of range).
fn strings(schema: &Value) -> BoxedStrategy<Value> {
    let plain = prop_oneof![
        Just(String::new()),
        "[a-z]",
        "[é😀a]",
        "[a-z😀]{2}",
        "[a-z]{3,6}",
    ];
    let date = "[0-9]{4}-(0[0-9]|1[0-3])-([0-2][0-9]|3[0-2])";
    let time = "([01][0-9]|2[0-4]):[0-6][0-9]:[0-6][0-9](\\.[0-9]{1,10})?";
    let offset = "([Zz]|[+-]([01][0-9]|2[0-4]):[0-6][0-9])";
    // Near misses of the clock, offset and calendar forms of chrono's and time's types.
    let clock = "([01][0-9]|2[0-4]):[0-6][0-9]:[0-6][0-9](\\.[0-9]{1,10})?";
    let time_offset = "[+-]([01][0-9]|2[0-9]):[0-6][0-9]:[0-6][0-9]";
    let day = prop_oneof![
        4 => prop::string::string_regex(date).expect("regex"),
        1 => prop::sample::select(EDGE_DATES).prop_map(str::to_owned),
    ];
    let pattern = schema.get("pattern").and_then(Value::as_str).unwrap_or("");
    let shaped: BoxedStrategy<String> = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => prop::string::string_regex(&format!("{date}[Tt ]{time}{offset}?")).expect("regex").boxed(),
        Some("date") => prop::string::string_regex(&format!("[+-]?{date}")).expect("regex").boxed(),
        Some("uuid") => prop_oneof![
            "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            "[0-9a-fA-F]{32}",
            "\\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\}",
            "[0-9a-gA-G-]{36}",
        ]
        .boxed(),
        Some("uri") => "(https?|ftp|file|urn|mailto|ws|x-y)(:|://)([a-z0-9.@\\[\\]:%-]{0,12})(:[0-9]{0,6})?(/[a-z0-9%/.]{0,6})?(\\?[a-z=&]{0,5})?(#[a-z]{0,3})?".boxed(),
        Some("ipv4") => "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,4}".boxed(),
        Some("ipv6") => "([0-9a-f]{0,4}:){2,8}[0-9a-f]{0,4}".boxed(),
        _ if pattern.starts_with("^([01]") => time.boxed(),
        // chrono's NaiveDateTime, time's PrimitiveDateTime/UtcDateTime and OffsetDateTime.
        _ if pattern.contains("-02-29") => {
            let rest = prop::string::string_regex(&format!("[T ]{clock}( {time_offset})?"))
                .expect("regex");
            (day, rest).prop_map(|(d, r)| format!("{d}{r}")).boxed()
        }
        _ if pattern.starts_with("^[+-]") => time_offset.boxed(),
        // time's Duration and rust_decimal's Decimal.
        _ if pattern.starts_with("^-?\\d") => prop_oneof![
            "[+-]?[0-9]{0,3}(\\.[0-9]{0,10})?(e[0-9])?",
            "-?[0-9]{17,30}(\\.[0-9]{1,40})?",
            "-?9{18,19}\\.[0-9]",
        ]
        .boxed(),
        _ => return plain.prop_map(Value::from).boxed(),
    };
    prop_oneof![1 => plain, 4 => shaped]
        .prop_map(Value::from)
        .boxed()
}

/// Dates at the edges of the calendar and of the years the schemas take.
const EDGE_DATES: &[&str] = &[
    "0000-01-01",
    "0000-02-29",
    "1900-02-29",
    "2000-02-29",
    "2023-02-29",
    "2024-02-29",
    "2100-02-29",
    "9999-12-31",
    "2024-04-31",
];

fn arrays(schema: &Value, keys: &[String]) -> BoxedStrategy<Value> {
    if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array) {
        // A tuple: the right elements, one short, one too many, or swapped neighbours.
        let elements: Vec<BoxedStrategy<Value>> = prefix.iter().map(|p| shaped(p, keys)).collect();
        return (elements, 0..4_u8, any_json())
            .prop_map(|(mut items, twist, extra)| {
                match twist {
                    1 => {
                        items.pop();
                    }
                    2 => items.push(extra),
                    3 if items.len() > 1 => items.swap(0, 1),
                    _ => {}
                }
                Value::Array(items)
            })
            .boxed();
    }
    let items = schema
        .get("items")
        .map_or_else(any_json, |items| shaped(items, keys));
    let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let fitting = min..=max.unwrap_or(min + 3);
    let around = min.saturating_sub(1)..=max.map_or(min + 4, |m| m + 1);
    prop_oneof![
        3 => prop::collection::vec(items.clone(), fitting),
        1 => prop::collection::vec(items, around),
    ]
    .prop_map(Value::Array)
    .boxed()
}

fn objects(schema: &Value, keys: &[String]) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties: Vec<BoxedStrategy<Option<(String, Value)>>> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| {
                    let p = if required.contains(&name.as_str()) {
                        0.9
                    } else {
                        0.5
                    };
                    let name = name.clone();
                    prop::option::weighted(
                        p,
                        shaped(property, keys).prop_map(move |v| (name.clone(), v)),
                    )
                    .boxed()
                })
                .collect()
        })
        .unwrap_or_default();
    let counted = ["minProperties", "maxProperties"]
        .iter()
        .any(|k| schema.get(*k).is_some());
    if let Some(values) = schema.get("additionalProperties").filter(|_| counted) {
        // A map with an entry count: entries around the bounds.
        let count = |key: &str| schema.get(key).and_then(Value::as_u64).map(|n| n as usize);
        let (min, max) = (count("minProperties").unwrap_or(0), count("maxProperties"));
        let around = min.saturating_sub(1)..=max.map_or(min + 3, |m| m + 1);
        let values = if values.is_object() {
            shaped(values, keys)
        } else {
            any_json()
        };
        return prop::collection::btree_map("[a-f]{1,2}", values, around)
            .prop_map(|entries| Value::Object(entries.into_iter().collect()))
            .boxed();
    }
    let extras = prop::collection::vec((extra_key(keys), any_json()), 1..3);
    (properties, prop::option::weighted(0.4, extras))
        .prop_map(|(properties, extras)| {
            let mut object: Map<String, Value> = properties.into_iter().flatten().collect();
            for (key, value) in extras.into_iter().flatten() {
                object.insert(key, value);
            }
            Value::Object(object)
        })
        .boxed()
}

// ----- one property per type -----

macro_rules! sound {
    ($($name:ident: $ty:ty;)*) => {$(
        #[test]
        fn $name() {
            check::<$ty>(stringify!($name), stringify!($ty));
        }
    )*};
}

sound! {
    unsigned_8: u8;
    unsigned_16: u16;
    unsigned_32: u32;
    unsigned_64: u64;
    signed_8: i8;
    signed_16: i16;
    signed_32: i32;
    signed_64: i64;
    float_32: f32;
    float_64: f64;
    character: char;
    string: String;
    optional_strings: Option<Vec<String>>;
    byte_triple: [u8; 3];
    json_value: Value;
    flattened_record: Record;
    strict_flattened: Strict;
    container_default: Defaults;
    unit_enum: Mode;
    externally_tagged: External;
    internally_tagged: Internal;
    adjacently_tagged: Adjacent;
    untagged: Untagged;
    string_set: std::collections::BTreeSet<String>;
    number_set: std::collections::HashSet<u8>;
    deque: std::collections::VecDeque<i8>;
    pair: (u8, String);
    triple: (bool, Option<u16>, char);
    non_zero_unsigned: std::num::NonZeroU16;
    non_zero_signed: std::num::NonZeroI8;
    duration: std::time::Duration;
    ip_address: std::net::IpAddr;
    uuid: uuid::Uuid;
    url: url::Url;
    date_time_utc: chrono::DateTime<chrono::Utc>;
    date_time_offset: chrono::DateTime<chrono::FixedOffset>;
    naive_date: chrono::NaiveDate;
    naive_time: chrono::NaiveTime;
    index_set: indexmap::IndexSet<String>;
    bounded_maps: BoundedMaps;
    naive_date_time: chrono::NaiveDateTime;
    time_date: time::Date;
    time_time: time::Time;
    time_primitive_date_time: time::PrimitiveDateTime;
    time_utc_date_time: time::UtcDateTime;
    time_offset_date_time: time::OffsetDateTime;
    time_utc_offset: time::UtcOffset;
    time_duration: time::Duration;
    time_weekday: time::Weekday;
    time_month: time::Month;
    decimal: rust_decimal::Decimal;
}

/// Maps validate their values through a schema-valued `additionalProperties` (parameter
/// vocabulary).
#[test]
fn string_map() {
    check::<HashMap<String, u16>>("string_map", "HashMap<String, u16>");
}

// ----- serialised values validate -----

/// The other direction, for the types whose schema states a serialised form: every value the
/// type's `Serialize` writes validates (generated across the type's range, edges included).
fn serialised_values_validate<T: ToolSchema + serde::Serialize + std::fmt::Debug + 'static>(
    name: &str,
    values: impl Strategy<Value = T>,
) {
    let tool = definition::<T>();
    let cases = Cell::new(0_u32);
    let mut runner = TestRunner::new(config());
    let outcome = runner.run(&values, |value| {
        let json = serde_json::to_value(&value).expect("serialises");
        cases.set(cases.get() + 1);
        match tool.validate_args(&json!({ "v": json })) {
            Ok(()) => Ok(()),
            Err(e) => Err(TestCaseError::fail(format!(
                "{name}: {value:?} serialises to {json}, which does not validate: {e}"
            ))),
        }
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        &format!("serialised-{name}"),
        &format!(
            "serialised {name}: {} generated values serialise to JSON that validates",
            cases.get()
        ),
    );
}

fn chrono_date() -> impl Strategy<Value = chrono::NaiveDate> {
    (0..=9999_i32, 1..=366_u32).prop_map(|(year, ordinal)| {
        chrono::NaiveDate::from_yo_opt(year, ordinal)
            .or_else(|| chrono::NaiveDate::from_yo_opt(year, 365))
            .expect("every year has 365 days")
    })
}

fn chrono_time() -> impl Strategy<Value = chrono::NaiveTime> {
    (0..24_u32, 0..60_u32, 0..60_u32, nanos()).prop_map(|(h, m, s, n)| {
        chrono::NaiveTime::from_hms_nano_opt(h, m, s, n).expect("in range")
    })
}

/// Nanoseconds: zero, whole milliseconds and microseconds (the fraction lengths chrono and
/// time shorten to), and anything.
fn nanos() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0_u32),
        (0..1000_u32).prop_map(|ms| ms * 1_000_000),
        (0..1_000_000_u32).prop_map(|us| us * 1000),
        0..1_000_000_000_u32,
        Just(999_999_999),
    ]
}

fn time_dates() -> impl Strategy<Value = time::Date> {
    (0..=9999_i32, 1..=366_u16).prop_map(|(year, ordinal)| {
        time::Date::from_ordinal_date(year, ordinal)
            .or_else(|_| time::Date::from_ordinal_date(year, 365))
            .expect("every year has 365 days")
    })
}

fn time_times() -> impl Strategy<Value = time::Time> {
    (0..24_u8, 0..60_u8, 0..60_u8, nanos())
        .prop_map(|(h, m, s, n)| time::Time::from_hms_nano(h, m, s, n).expect("in range"))
}

fn time_offset() -> impl Strategy<Value = time::UtcOffset> {
    prop_oneof![Just(0), Just(93_599), Just(-93_599), -93_599..=93_599_i32]
        .prop_map(|seconds| time::UtcOffset::from_whole_seconds(seconds).expect("in range"))
}

#[test]
fn serialised_chrono_values_validate() {
    serialised_values_validate("chrono-NaiveDate", chrono_date());
    serialised_values_validate("chrono-NaiveTime", chrono_time());
    serialised_values_validate(
        "chrono-NaiveDateTime",
        (chrono_date(), chrono_time()).prop_map(|(d, t)| d.and_time(t)),
    );
    serialised_values_validate(
        "chrono-DateTime-Utc",
        (chrono_date(), chrono_time()).prop_map(|(d, t)| d.and_time(t).and_utc()),
    );
}

#[test]
fn serialised_time_values_validate() {
    serialised_values_validate("time-Date", time_dates());
    serialised_values_validate("time-Time", time_times());
    serialised_values_validate(
        "time-PrimitiveDateTime",
        (time_dates(), time_times()).prop_map(|(d, t)| time::PrimitiveDateTime::new(d, t)),
    );
    serialised_values_validate(
        "time-UtcDateTime",
        (time_dates(), time_times()).prop_map(|(d, t)| time::UtcDateTime::new(d, t)),
    );
    serialised_values_validate(
        "time-OffsetDateTime",
        (time_dates(), time_times(), time_offset())
            .prop_map(|(d, t, o)| time::PrimitiveDateTime::new(d, t).assume_offset(o)),
    );
    serialised_values_validate("time-UtcOffset", time_offset());
    serialised_values_validate(
        "time-Duration",
        (
            -999_999_999_999_999_999..=999_999_999_999_999_999_i64,
            0..1_000_000_000_i32,
        )
            .prop_map(|(s, n)| time::Duration::new(s, if s < 0 { -n } else { n })),
    );
    serialised_values_validate(
        "time-Weekday",
        prop::sample::select(vec![time::Weekday::Monday, time::Weekday::Sunday]),
    );
    serialised_values_validate(
        "time-Month",
        (1..=12_u8).prop_map(|m| time::Month::try_from(m).expect("a month")),
    );
}

#[test]
fn serialised_decimals_validate() {
    // Magnitudes below 10^28 (the schema's 28 integer digits), every scale.
    let mantissa = prop_oneof![
        -9_999_999_999_999_999_999_999_999_999..=9_999_999_999_999_999_999_999_999_999_i128,
        -1000..=1000_i128,
    ];
    serialised_values_validate(
        "rust_decimal-Decimal",
        (mantissa, 0..=28_u32)
            .prop_map(|(m, scale)| rust_decimal::Decimal::from_i128_with_scale(m, scale)),
    );
}

#[test]
fn serialised_bounded_maps_validate() {
    let labels = prop::collection::hash_map("[a-z]{0,3}", any::<u8>(), 1..=3);
    let rest = prop::option::of(prop::collection::btree_map(".{0,3}", ".{0,3}", 0..=1));
    serialised_values_validate(
        "bounded-maps",
        (labels, rest).prop_map(|(labels, rest)| BoundedMaps { labels, rest }),
    );
}

/// The extremes of the forms: the last and first instants with the widest offsets, the longest
/// fractions, the largest decimals and durations the schemas take.
#[test]
fn edge_values_validate_and_deserialise() {
    fn both<T: ToolSchema + DeserializeOwned + 'static>(value: Value) {
        let args = json!({ "v": value });
        definition::<T>()
            .validate_args(&args)
            .unwrap_or_else(|e| panic!("{args} does not validate: {e}"));
        dsh_tools::__private::deserialize_args::<Wrap<T>>(&args)
            .unwrap_or_else(|e| panic!("{args} does not deserialise: {e}"));
    }
    both::<time::OffsetDateTime>(json!("9999-12-31 23:59:59.999999999 -25:59:59"));
    both::<time::OffsetDateTime>(json!("0000-01-01 00:00:00.0 +25:59:59"));
    both::<time::OffsetDateTime>(json!("2000-02-29 12:00:00.5 -00:00:00"));
    both::<time::UtcDateTime>(json!("9999-12-31 23:59:59.9"));
    both::<time::Duration>(json!("-999999999999999999.999999999"));
    both::<time::Duration>(json!("-0.000000001"));
    both::<chrono::NaiveDateTime>(json!("0000-02-29T00:00:00.123456789"));
    both::<rust_decimal::Decimal>(json!(
        "-9999999999999999999999999999.99999999999999999999999999999"
    ));
    both::<rust_decimal::Decimal>(json!("0.00000000000000000000000000005"));
}
