//! Malformed model JSON, part 2: a corpus of malformed arguments through the full pipeline
//! (`ToolRegistry::execute`). Every case must end as an `INVALID_ARGS` failure whose message
//! names each violation, in validation order, without entering the tool body and without a
//! panic.
//!
//! How raw model text reaches the pipeline: `ToolExecutionInput::arguments` is a
//! `serde_json::Value`, so a host that receives arguments as text either parses them (text that
//! does not parse never becomes arguments) or forwards the text itself as a JSON string. The
//! truncated-JSON cases are that second path: every proper prefix of a valid arguments text,
//! as a string value.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools_runtime::ToolRegistry;
use serde_json::{Map, Value, json};

const MAX_SAFE: u64 = (1 << 53) - 1;

/// The parameters of a typical file tool, closed at the root and in `options`.
fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "maxLength": 4096},
            "count": {"type": "integer", "minimum": 0, "maximum": MAX_SAFE},
            "mode": {"type": "string", "enum": ["read", "write"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 64},
            "options": {
                "type": "object",
                "properties": {
                    "depth": {"type": "integer", "minimum": 0, "maximum": 255},
                    "follow": {"type": "boolean"}
                },
                "additionalProperties": false
            }
        },
        "required": ["path", "count"],
        "additionalProperties": false
    })
}

/// The tool and how many times its body was entered.
fn probe() -> (ToolDefinition, Arc<AtomicUsize>) {
    let entered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&entered);
    let def = ToolDefinition::builder("read_file")
        .description("Reads a file.")
        .parameters_json(parameters())
        .execute(move |args, _ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok(args["count"].clone()) }
        })
        .build()
        .expect("the probe builds");
    (def, entered)
}

fn registry() -> (ToolRegistry, Arc<AtomicUsize>) {
    let registry = ToolRegistry::new();
    let (def, entered) = probe();
    registry.register(def).expect("registers").keep();
    (registry, entered)
}

/// A value nested `depth` arrays deep around `inner`, built without recursion.
fn nested_arrays(depth: usize, inner: Value) -> Value {
    (0..depth).fold(inner, |value, _| Value::Array(vec![value]))
}

/// A value nested `depth` objects deep (`{"k": {"k": …}}`) around `inner`.
fn nested_objects(depth: usize, inner: Value) -> Value {
    (0..depth).fold(inner, |value, _| object(vec![("k", value)]))
}

/// An object from its entries, moved in. (`json!` copies a non-literal value through
/// `serde_json::to_value`, recursively: no good for a 10,000-deep one.)
fn object(entries: Vec<(&str, Value)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect::<Map<String, Value>>(),
    )
}

fn ten_mib(c: char) -> String {
    std::iter::repeat_n(c, 10 << 20).collect()
}

const UNDECLARED: &str = "is not a parameter of read_file; its parameters are \"path\", \"count\", \"mode\", \"tags\", \"options\"";

/// An unknown key of the arguments object, far from every parameter.
fn undeclared(key: &str) -> String {
    format!("\"{key}\" {UNDECLARED}")
}

fn not_an_object() -> Vec<String> {
    vec!["\"arguments\" must be an object".to_owned()]
}

/// The corpus: `(label, arguments, every expected violation in order)`.
fn corpus() -> Vec<(String, Value, Vec<String>)> {
    let mut cases: Vec<(String, Value, Vec<String>)> = Vec::new();
    let mut case = |label: &str, arguments: Value, violations: Vec<&str>| {
        cases.push((
            label.to_owned(),
            arguments,
            violations.into_iter().map(str::to_owned).collect(),
        ));
    };

    // Not an object at all.
    for (label, root) in [
        ("null root", json!(null)),
        ("number root", json!(1)),
        ("boolean root", json!(true)),
        ("array root", json!([{"path": "a", "count": 1}])),
        ("empty string root", json!("")),
    ] {
        case(label, root, vec!["\"arguments\" must be an object"]);
    }
    // Wrong types, each field.
    case(
        "wrong types",
        json!({"path": 1, "count": "3", "mode": true, "tags": "a,b", "options": []}),
        vec![
            "\"path\" must be a string",
            "\"count\" must be an integer",
            "\"mode\" must be a string",
            "\"tags\" must be an array",
            "\"options\" must be an object",
        ],
    );
    case(
        "wrong element and nested types",
        json!({"path": "a", "count": 1, "tags": ["x", 2, null], "options": {"depth": "1", "follow": "yes"}}),
        vec![
            "\"tags[1]\" must be a string",
            "\"tags[2]\" must be a string",
            "\"options.depth\" must be an integer",
            "\"options.follow\" must be a boolean",
        ],
    );
    case(
        "null for required fields",
        json!({"path": null, "count": null}),
        vec!["\"path\" must be a string", "\"count\" must be an integer"],
    );
    // Missing required.
    case(
        "empty object",
        json!({}),
        vec![
            "missing required property \"path\"",
            "missing required property \"count\"",
        ],
    );
    case(
        "one required missing",
        json!({"count": 3}),
        vec!["missing required property \"path\""],
    );
    // Unknown fields under additionalProperties: false.
    case(
        "unknown fields",
        json!({"path": "a", "count": 1, "recursive": true, "options": {"depth": 1, "folow": true}}),
        vec![
            "\"options.folow\" is not a property of \"options\"; did you mean \"follow\"?",
            &undeclared("recursive"),
        ],
    );
    // Numbers: fractions, the 2^53 boundary, out of range, enum near misses.
    case(
        "fraction for an integer",
        json!({"path": "a", "count": 1.5}),
        vec!["\"count\" must be an integer"],
    );
    case(
        "2^53 + 1",
        json!({"path": "a", "count": MAX_SAFE + 2}),
        vec!["\"count\" must be at most 9007199254740991"],
    );
    case(
        "-(2^53 + 1)",
        json!({"path": "a", "count": -9_007_199_254_740_993_i64}),
        vec!["\"count\" must be at least 0"],
    );
    case(
        "2^53 + 1 where 255 is the maximum",
        json!({"path": "a", "count": 0, "options": {"depth": MAX_SAFE + 2}}),
        vec!["\"options.depth\" must be at most 255"],
    );
    case(
        "1e300 and u64::MAX",
        json!({"path": "a", "count": 1e300, "options": {"depth": u64::MAX}}),
        vec![
            "\"count\" must be at most 9007199254740991",
            "\"options.depth\" must be at most 255",
        ],
    );
    case(
        "enum near misses",
        json!({"path": "a", "count": 0, "mode": "READ"}),
        vec!["\"mode\" must be one of [\"read\",\"write\"]"],
    );
    // Prototype keys are data: undeclared like any other name.
    case(
        "__proto__ and constructor keys",
        json!({"path": "a", "count": 1, "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}},
               "options": {"__proto__": {"depth": 1}}}),
        vec![
            "\"options.__proto__\" is not a property of \"options\"; its properties are \"depth\", \"follow\"",
            &undeclared("__proto__"),
            &undeclared("constructor"),
        ],
    );
    case(
        "__proto__ instead of a required property",
        json!({"__proto__": {"path": "a", "count": 1}}),
        vec![
            "missing required property \"path\"",
            "missing required property \"count\"",
            &undeclared("__proto__"),
        ],
    );
    cases.extend(deep_and_huge());
    cases.extend(truncated());
    cases
}

/// 10,000-deep nesting and 10 MiB strings.
fn deep_and_huge() -> Vec<(String, Value, Vec<String>)> {
    const DEPTH: usize = 10_000;
    let huge = ten_mib('x');
    vec![
        (
            "10,000-deep array as the root".to_owned(),
            nested_arrays(DEPTH, json!(1)),
            not_an_object(),
        ),
        (
            "10,000-deep arrays in a string array".to_owned(),
            object(vec![
                ("path", json!("a")),
                ("count", json!(1)),
                ("tags", Value::Array(vec![nested_arrays(DEPTH, json!("x"))])),
            ]),
            vec!["\"tags[0]\" must be a string".to_owned()],
        ),
        (
            "10,000-deep objects under an unknown key".to_owned(),
            object(vec![
                ("path", json!("a")),
                ("count", json!(1)),
                ("deep", nested_objects(DEPTH, json!(null))),
            ]),
            vec![undeclared("deep")],
        ),
        (
            "10,000-deep objects for an integer".to_owned(),
            object(vec![
                ("path", json!("a")),
                ("count", nested_objects(DEPTH, json!(1))),
            ]),
            vec!["\"count\" must be an integer".to_owned()],
        ),
        (
            "10 MiB path".to_owned(),
            object(vec![
                ("path", Value::String(huge.clone())),
                ("count", json!(1)),
            ]),
            vec!["\"path\" must be at most 4096 characters long".to_owned()],
        ),
        (
            "10 MiB of digits for an integer".to_owned(),
            object(vec![
                ("path", json!("a")),
                ("count", Value::String(ten_mib('7'))),
            ]),
            vec!["\"count\" must be an integer".to_owned()],
        ),
        (
            "10 MiB enum miss and unknown value".to_owned(),
            object(vec![
                ("path", json!("a")),
                ("count", json!(1)),
                ("mode", Value::String(huge.clone())),
                ("blob", Value::String(huge)),
            ]),
            vec![
                "\"mode\" must be one of [\"read\",\"write\"]".to_owned(),
                undeclared("blob"),
            ],
        ),
    ]
}

/// Every proper prefix of a valid arguments text, forwarded as a string.
fn truncated() -> Vec<(String, Value, Vec<String>)> {
    let text = r#"{"path": "/tmp/é.txt", "count": 3, "tags": ["a"], "options": {"follow": true}}"#;
    assert!(serde_json::from_str::<Value>(text).is_ok());
    text.char_indices()
        .map(|(at, _)| &text[..at])
        .map(|prefix| {
            assert!(
                serde_json::from_str::<Value>(prefix).is_err(),
                "{prefix:?} parses: it would not reach the pipeline as text"
            );
            (
                format!("truncated text {prefix:?}"),
                Value::String(prefix.to_owned()),
                not_an_object(),
            )
        })
        .collect()
}

fn assert_invalid_args(label: &str, result: &ToolExecutionResult, violations: &[String]) {
    let error = result
        .error()
        .unwrap_or_else(|| panic!("{label}: expected a failure, got {result:?}"));
    let info = error
        .info()
        .unwrap_or_else(|| panic!("{label}: no error info: {error:?}"));
    assert_eq!(
        (&*info.name, &*info.code),
        ("ToolArgsError", "INVALID_ARGS"),
        "{label}"
    );
    let expected = format!("invalid arguments: {}", violations.join("; "));
    assert!(
        error.message() == expected,
        "{label}: got {:.300}, expected {:.300}",
        error.message(),
        expected
    );
}

#[tokio::test]
async fn every_malformed_argument_is_invalid_args_and_never_enters_the_body() {
    let (registry, entered) = registry();
    let cases = corpus();
    let total = cases.len();
    for (n, (label, arguments, violations)) in cases.into_iter().enumerate() {
        let input = ToolExecutionInput::new(format!("m{n}"), "read_file", arguments);
        let result = registry.execute(input).await;
        assert_invalid_args(&label, &result, &violations);
    }
    assert_eq!(entered.load(Ordering::SeqCst), 0, "the body was entered");
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "malformed-args",
        &format!(
            "malformed arguments through ToolRegistry::execute: {total} cases, all INVALID_ARGS naming every violation, tool body entered 0 times"
        ),
    );
    // The registry still runs valid calls afterwards.
    let ok = registry
        .execute(ToolExecutionInput::new(
            "ok",
            "read_file",
            json!({"path": "a", "count": 7}),
        ))
        .await;
    assert!(!ok.is_error(), "{ok:?}");
    assert_eq!(entered.load(Ordering::SeqCst), 1);
}

/// `1.0` is an integer (JSON Schema and JavaScript agree: `1.0 === 1`), so it is not malformed:
/// it validates and the body receives it. The documented exception to "every numeric oddity is
/// `INVALID_ARGS`".
#[tokio::test]
async fn an_integral_float_for_an_integer_is_accepted_as_javascript_does() {
    let (registry, entered) = registry();
    let result = registry
        .execute(ToolExecutionInput::new(
            "f",
            "read_file",
            json!({"path": "a", "count": 1.0, "options": {"depth": 255.0}}),
        ))
        .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.value(), Some(&json!(1.0)));
    assert_eq!(entered.load(Ordering::SeqCst), 1);
}
