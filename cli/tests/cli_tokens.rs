//! `dsh-tools tokens`: the token cost of a tool set, natively and in Code Mode.

mod support;

use serde_json::Value;

fn tokens(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut all = vec!["tokens"];
    all.extend_from_slice(args);
    support::dsh_tools(&std::env::temp_dir(), &all, stdin)
}

fn figures(text: &str) -> (u64, u64, f64) {
    let v: Value = serde_json::from_str(text).expect("one JSON document");
    assert_eq!(v["tokenizer"], "o200k_base", "{v}");
    let (native, sdk) = (v["native"].as_u64().unwrap(), v["sdk"].as_u64().unwrap());
    let ratio = v["ratio"].as_f64().unwrap();
    assert!((ratio - sdk as f64 / native as f64).abs() < 0.0006, "{v}");
    (native, sdk, ratio)
}

#[test]
fn the_example_tools_without_input() {
    let (code, text, stderr) = tokens(&[], "");
    assert_eq!(code, 0, "{stderr}");
    let (native, sdk, _) = figures(&text);
    assert!(native > 100 && sdk > 100, "{text}");
    let (code, python, stderr) = tokens(&["--language", "python"], "");
    assert_eq!(code, 0, "{stderr}");
    let (python_native, python_sdk, _) = figures(&python);
    assert_eq!(
        python_native, native,
        "the native form does not depend on the language"
    );
    assert_ne!(python_sdk, sdk);
}

#[test]
fn a_tool_list_inline_and_on_stdin() {
    let list = r#"[{"name":"echo","description":"Echo the text.","parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]"#;
    let (code, inline, stderr) = tokens(&[list], "");
    assert_eq!(code, 0, "{stderr}");
    let (code, piped, stderr) = tokens(&["-"], list);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(inline, piped);
    let (native, sdk, _) = figures(&inline);
    // {"type":"function","function":{"name":"echo","description":"Echo the text.",
    // "parameters":{…}} in o200k_base.
    assert!((20..60).contains(&native), "{inline}");
    assert!(
        sdk > native,
        "one tool costs less natively than run_code and the SDK: {inline}"
    );
}

#[test]
fn a_malformed_list_is_bad_input() {
    let (code, _, stderr) = tokens(&["-"], r#"{"not": "a list"}"#);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("dsh-tools: <stdin>: not a list of tools"),
        "{stderr}"
    );
    let (code, _, stderr) = tokens(&["-"], "[{");
    assert_eq!(code, 2);
    assert!(stderr.contains("line 1"), "{stderr}");
}

/// Tool results whose value reaches the model through the default renderer are pretty JSON
/// (2-space indentation; `docs/CONTRACTS.md`, "Tools and results"). What that costs against
/// compact JSON, on the structured values of the example tools run over this repository's own
/// `cli/` tree: printed as the figures of BENCHMARKS.md ("Tool results: pretty or compact
/// JSON"), and compact must cost less on every value that has structure.
#[test]
fn result_values_pretty_against_compact_json() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let calls: [(&str, &str); 5] = [
        ("list_dir", r#"{"path": "src"}"#),
        ("glob", r#"{"pattern": "**/*.rs", "limit": 60}"#),
        ("grep", r#"{"pattern": "fn main", "max_matches": 40}"#),
        (
            "grep",
            r#"{"pattern": "pub\\(crate\\) fn", "max_matches": 200}"#,
        ),
        (
            "bash",
            r#"{"command": "ls src | head -20", "description": "List"}"#,
        ),
    ];
    let (mut pretty_total, mut compact_total) = (0, 0);
    for (tool, args) in calls {
        let (code, out, stderr) =
            support::dsh_tools(root, &["call", "--json", "--yes", tool, args], "");
        assert_eq!(code, 0, "{tool} {args}: {stderr}");
        let result: Value = serde_json::from_str(&out).expect("the result as JSON");
        let value = &result["value"];
        assert!(value.is_object() || value.is_array(), "{tool}: {value}");
        let pretty = dsh_tools_runtime::dsh_tools::json::render_pretty(value);
        let compact = serde_json::to_string(value).unwrap();
        let (p, c) = (
            dsh_tools_runtime::tokens::count(&pretty),
            dsh_tools_runtime::tokens::count(&compact),
        );
        println!(
            "{tool} {args}: pretty {p} tokens, compact {c} ({:.2}x)",
            p as f64 / c as f64
        );
        assert!(c < p, "{tool}: compact {c} >= pretty {p}");
        pretty_total += p;
        compact_total += c;
    }
    println!(
        "all: pretty {pretty_total} tokens, compact {compact_total} ({:.2}x)",
        pretty_total as f64 / compact_total as f64
    );
}
