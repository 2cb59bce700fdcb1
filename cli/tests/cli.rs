//! The `dsh-tools` binary: every command, its exit statuses (0 valid, 1 invalid, 2 bad input),
//! file and stdin input, and the exact output of reference cases.

mod support;

use std::path::Path;

use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_tool};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The exit status, stdout and stderr of one run.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary in `dir` with `args`, feeding `stdin` (or nothing).
fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let (code, stdout, stderr) = support::dsh_tools(dir, args, stdin.unwrap_or_default());
    Run {
        code,
        stdout,
        stderr,
    }
}

/// A temporary directory holding `files`.
fn dir_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn run(args: &[&str], stdin: Option<&str>) -> Run {
    run_in(&std::env::temp_dir(), args, stdin)
}

/// Asserts a successful-or-invalid run printed exactly `json` and a newline, and nothing on stderr.
fn assert_output(run: &Run, code: i32, json: &str) {
    assert_eq!(run.code, code, "{run:?}");
    assert_eq!(run.stdout, format!("{json}\n"), "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
}

/// Asserts a bad-input run: exit status 2, nothing on stdout, exactly one stderr line.
fn assert_bad_input(run: &Run, line: &str) {
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert_eq!(run.stderr, format!("{line}\n"), "{run:?}");
}

const SCHEMA_A: &str = r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#;

// --- schema check ----------------------------------------------------------------------------

#[test]
fn schema_check_accepts_a_supported_schema_from_a_file_or_stdin() {
    let dir = dir_with(&[("s.json", SCHEMA_A)]);
    assert_output(
        &run_in(dir.path(), &["schema", "check", "s.json"], None),
        0,
        r#"{"ok":true}"#,
    );
    assert_output(
        &run(&["schema", "check"], Some(SCHEMA_A)),
        0,
        r#"{"ok":true}"#,
    );
    assert_output(
        &run(&["schema", "check", "-"], Some("{}")),
        0,
        r#"{"ok":true}"#,
    );
}

#[test]
fn schema_check_lists_every_violation() {
    assert_output(
        &run(&["schema", "check"], Some(r#"{"type":["string","null"]}"#)),
        1,
        r#"{"ok":false,"code":"UNSUPPORTED_SCHEMA","violations":["schema.type must be a single type string (type arrays are not supported)"]}"#,
    );
    let schema = r#"{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n","m"]}"#;
    assert_output(
        &run(
            &["schema", "check", "--vocabulary", "reference"],
            Some(schema),
        ),
        1,
        concat!(
            r#"{"ok":false,"code":"UNSUPPORTED_SCHEMA","violations":["#,
            r#""schema.properties.n.minimum is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)","#,
            r#""schema.required names \"m\" which is not in properties"]}"#
        ),
    );
}

#[test]
fn schema_check_judges_a_tools_parameters_by_default() {
    let schema = r#"{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$","maxLength":8},"n":{"type":"integer","minimum":1}}}"#;
    assert_output(
        &run(&["schema", "check"], Some(schema)),
        0,
        r#"{"ok":true}"#,
    );
    let output = run(&["schema", "check", "--vocabulary", "output"], Some(schema));
    assert_eq!(output.code, 1, "{output:?}");
    assert!(
        output
            .stdout
            .contains(r#""schema.properties.id.pattern is not a supported keyword"#),
        "{output:?}"
    );
}

// --- schema validate -------------------------------------------------------------------------

#[test]
fn schema_validate_reference_cases() {
    let dir = dir_with(&[
        ("s.json", SCHEMA_A),
        ("empty.json", "{}"),
        ("array.json", "[]"),
        ("good.json", r#"{"a":"x","extra":1}"#),
    ]);
    let validate = |value: &str| {
        run_in(
            dir.path(),
            &["schema", "validate", "--schema", "s.json", value],
            None,
        )
    };
    // `docs/CONTRACTS.md`, "Validating a value", rule 3: a missing property is named by its child
    // path (`value.a`).
    assert_output(
        &validate("empty.json"),
        1,
        r#"{"valid":false,"violations":["missing required property \"value.a\""]}"#,
    );
    assert_output(
        &validate("array.json"),
        1,
        r#"{"valid":false,"violations":["\"value\" must be an object"]}"#,
    );
    assert_output(
        &validate("good.json"),
        0,
        r#"{"valid":true,"violations":[]}"#,
    );
}

#[test]
fn schema_validate_reads_the_value_from_stdin() {
    let dir = dir_with(&[("s.json", r#"{"type":"array","items":{"type":"integer"}}"#)]);
    assert_output(
        &run_in(
            dir.path(),
            &["schema", "validate", "--schema", "s.json"],
            Some("[1, 2.5, \"x\"]"),
        ),
        1,
        r#"{"valid":false,"violations":["\"value[1]\" must be an integer","\"value[2]\" must be an integer"]}"#,
    );
    assert_output(
        &run_in(
            dir.path(),
            &["schema", "validate", "--schema", "s.json", "-"],
            Some("[1, 2.0]"),
        ),
        0,
        r#"{"valid":true,"violations":[]}"#,
    );
}

#[test]
fn schema_validate_needs_a_supported_schema() {
    let dir = dir_with(&[
        ("s.json", r#"{"type":"string","format":"uri"}"#),
        ("v.json", "\"x\""),
    ]);
    assert_bad_input(
        &run_in(
            dir.path(),
            &["schema", "validate", "--schema", "s.json", "v.json"],
            None,
        ),
        "dsh-tools: s.json: unsupported JSON schema: schema.format is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)",
    );
}

#[test]
fn schema_validate_reads_stdin_once_only() {
    assert_bad_input(
        &run(&["schema", "validate", "--schema", "-"], Some("{}")),
        "dsh-tools: <stdin>: standard input can feed only one document: pass the other one as a file",
    );
}

// --- args validate ---------------------------------------------------------------------------

#[test]
fn args_validate_reference_cases_use_parameter_root_paths() {
    let dir = dir_with(&[("p.json", SCHEMA_A)]);
    let validate = |args: &str| {
        run_in(
            dir.path(),
            &["args", "validate", "--schema", "p.json"],
            Some(args),
        )
    };
    assert_output(
        &validate("{}"),
        1,
        r#"{"valid":false,"violations":["missing required property \"a\""]}"#,
    );
    assert_output(
        &validate("[]"),
        1,
        r#"{"valid":false,"violations":["\"arguments\" must be an object"]}"#,
    );
    assert_output(
        &validate(r#"{"a":1}"#),
        1,
        r#"{"valid":false,"violations":["\"a\" must be a string"]}"#,
    );
    assert_output(
        &validate(r#"{"a":"x","b":true}"#),
        0,
        r#"{"valid":true,"violations":[]}"#,
    );
}

#[test]
fn args_validate_accepts_the_parameter_vocabulary() {
    let schema =
        r#"{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":10}}}"#;
    let dir = dir_with(&[
        ("p.json", schema),
        ("ok.json", r#"{"limit":10}"#),
        ("bad.json", r#"{"limit":0}"#),
    ]);
    let validate = |args: &str| {
        run_in(
            dir.path(),
            &["args", "validate", "--schema", "p.json", args],
            None,
        )
    };
    assert_output(&validate("ok.json"), 0, r#"{"valid":true,"violations":[]}"#);
    let bad = validate("bad.json");
    assert_eq!(bad.code, 1, "{bad:?}");
    let report: Value = serde_json::from_str(&bad.stdout).unwrap();
    assert_eq!(report["valid"], false);
    let violations = report["violations"].as_array().unwrap();
    assert_eq!(violations.len(), 1);
    assert!(
        violations[0].as_str().unwrap().starts_with("\"limit\""),
        "{violations:?}"
    );
}

#[test]
fn args_validate_rejects_unusable_parameter_schemas() {
    let dir = dir_with(&[
        (
            "bad.json",
            r#"{"type":"object","properties":{"a":{"type":"text"}}}"#,
        ),
        ("str.json", r#"{"type":"string"}"#),
    ]);
    let bad = run_in(
        dir.path(),
        &["args", "validate", "--schema", "bad.json"],
        Some("{}"),
    );
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr
            .starts_with("dsh-tools: bad.json: unsupported JSON schema: "),
        "{bad:?}"
    );
    assert_eq!(bad.stderr.lines().count(), 1);
    assert_bad_input(
        &run_in(
            dir.path(),
            &["args", "validate", "--schema", "str.json"],
            Some("\"x\""),
        ),
        r#"dsh-tools: str.json: a parameter schema must be an object schema ("type": "object")"#,
    );
}

// --- malformed and unreadable input ----------------------------------------------------------

#[test]
fn json_syntax_errors_name_the_file_line_and_column() {
    let dir = dir_with(&[("p.json", SCHEMA_A), ("args.json", "{\n  \"a\":\n    }\n")]);
    assert_bad_input(
        &run_in(
            dir.path(),
            &["args", "validate", "--schema", "p.json", "args.json"],
            None,
        ),
        "dsh-tools: args.json: invalid JSON at line 3, column 5: expected value",
    );
    assert_bad_input(
        &run_in(dir.path(), &["schema", "check"], Some("{} x")),
        "dsh-tools: <stdin>: invalid JSON at line 1, column 4: trailing characters",
    );
    assert_bad_input(
        &run_in(dir.path(), &["schema", "check", "-"], Some("")),
        "dsh-tools: <stdin>: invalid JSON at line 1, column 0: EOF while parsing a value",
    );
    assert_bad_input(
        &run_in(
            dir.path(),
            &["schema", "validate", "--schema", "args.json"],
            Some("1"),
        ),
        "dsh-tools: args.json: invalid JSON at line 3, column 5: expected value",
    );
}

#[test]
fn unreadable_files_are_named() {
    let dir = dir_with(&[("p.json", SCHEMA_A)]);
    for args in [
        &["schema", "check", "missing.json"][..],
        &["schema", "validate", "--schema", "missing.json", "p.json"],
        &["args", "validate", "--schema", "p.json", "missing.json"],
    ] {
        let run = run_in(dir.path(), args, None);
        assert_eq!((run.code, run.stdout.as_str()), (2, ""), "{run:?}");
        assert!(
            run.stderr
                .starts_with("dsh-tools: missing.json: cannot read: "),
            "{run:?}"
        );
        assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    }
    let directory = run_in(dir.path(), &["schema", "check", "."], None);
    assert!(
        directory.stderr.starts_with("dsh-tools: .: cannot read: "),
        "{directory:?}"
    );
}

#[test]
fn usage_errors_exit_with_status_2() {
    assert_eq!(run(&[], None).code, 2);
    assert_eq!(run(&["schema", "validate", "v.json"], None).code, 2);
    assert_eq!(run(&["frobnicate"], None).code, 2);
    let help = run(&["--help"], None);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("schema"), "{help:?}");
}

// --- list ------------------------------------------------------------------------------------

#[test]
fn list_prints_the_example_tools_schemas_sorted_by_name() {
    let run = run(&["list"], None);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert!(run.stdout.ends_with('\n') && run.stdout.lines().count() == 1);
    let listed: Value = serde_json::from_str(&run.stdout).unwrap();
    let expected: Vec<Value> = dsh_tools_examples::coding::coding_tools()
        .unwrap()
        .iter()
        .map(|tool| serde_json::to_value(tool.schema()).unwrap())
        .collect();
    assert_eq!(listed, Value::Array(expected));
    let first = listed[0].as_object().unwrap();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["name", "description", "parameters"]
    );
    assert_eq!(listed[0]["name"], json!("bash"));
}

#[test]
fn list_renders_each_provider_dialect() {
    let tools = dsh_tools_examples::coding::coding_tools().unwrap();
    for dialect in Dialect::ALL {
        let run = run(&["list", "--dialect", dialect.as_str()], None);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (0, ""),
            "{dialect}: {run:?}"
        );
        let listed: Value = serde_json::from_str(&run.stdout).unwrap();
        let expected: Vec<Value> = tools
            .iter()
            .map(|tool| {
                render_tool(tool, dialect, &DialectOptions::default())
                    .unwrap()
                    .wire
            })
            .collect();
        assert_eq!(listed, Value::Array(expected), "{dialect}");
        let first = listed[0].as_object().unwrap();
        let keys: Vec<&str> = first.keys().map(String::as_str).collect();
        match dialect {
            Dialect::Mcp => {
                assert_eq!(
                    keys,
                    [
                        "name",
                        "description",
                        "inputSchema",
                        "outputSchema",
                        "annotations"
                    ]
                );
                assert_eq!(
                    listed[0]["annotations"],
                    json!({"destructiveHint": true, "openWorldHint": true})
                );
            }
            Dialect::OpenAiStrict => {
                assert_eq!(keys, ["type", "function"]);
                // Every example tool fits strict mode.
                for tool in listed.as_array().unwrap() {
                    assert_eq!(tool["function"]["strict"], json!(true), "{tool}");
                    assert_eq!(
                        tool["function"]["parameters"]["additionalProperties"],
                        json!(false)
                    );
                }
            }
            Dialect::Gemini => assert_eq!(keys, ["name", "description", "parameters"]),
            Dialect::Anthropic => assert_eq!(keys, ["name", "description", "input_schema"]),
        }
    }
}

#[test]
fn list_rejects_an_unknown_dialect() {
    let run = run(&["list", "--dialect", "openai"], None);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains(
            "unknown dialect \"openai\" (expected one of: mcp, openai-strict, gemini, anthropic)"
        ),
        "{run:?}"
    );
}

// --- inline JSON ---------------------------------------------------------------------------------

#[test]
fn json_arguments_may_be_inline_text() {
    assert_output(
        &run(&["schema", "check", SCHEMA_A], None),
        0,
        r#"{"ok":true}"#,
    );
    assert_output(
        &run(
            &["schema", "validate", "--schema", SCHEMA_A, r#"{"a": 1}"#],
            None,
        ),
        1,
        r#"{"valid":false,"violations":["\"value.a\" must be a string"]}"#,
    );
    assert_output(
        &run(
            &["args", "validate", "--schema", SCHEMA_A, r#" {"a": "x"}"#],
            None,
        ),
        0,
        r#"{"valid":true,"violations":[]}"#,
    );
    // One inline document and one from stdin.
    assert_output(
        &run(
            &["schema", "validate", "--schema", SCHEMA_A, "-"],
            Some(r#"{"a": "x"}"#),
        ),
        0,
        r#"{"valid":true,"violations":[]}"#,
    );
}

#[test]
fn inline_json_errors_name_the_line_and_column_of_the_argument() {
    assert_bad_input(
        &run(&["schema", "check", "{\n  \"type\": }"], None),
        "dsh-tools: <argument>: invalid JSON at line 2, column 11: expected value",
    );
    assert_bad_input(
        &run(&["args", "validate", "--schema", SCHEMA_A, "[1,"], None),
        "dsh-tools: <argument>: invalid JSON at line 1, column 3: EOF while parsing a value",
    );
    // Not JSON text by its first character: a path, named as such.
    let missing = run(&["schema", "check", "type: object"], None);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .starts_with("dsh-tools: type: object: cannot read:"),
        "{missing:?}"
    );
}
