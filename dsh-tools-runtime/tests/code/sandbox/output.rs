//! Completion values, console capture, the output ledger, source handling and error positions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools_runtime::code::CodeErrorKind;
use dsh_tools_runtime::code::quickjs::QuickJsConfig;
use dsh_tools_runtime::code::strip::SourceLimits;
use serde_json::json;

use super::support::*;

fn limited(max_output_bytes: usize) -> dsh_tools_runtime::code::quickjs::QuickJsRuntime {
    runtime_with(QuickJsConfig {
        max_output_bytes,
        ..config()
    })
}

#[tokio::test]
async fn the_ledger_boundary_is_the_reference_one() {
    let result = run_on(&limited(7), "return '€';", vec![]).await;
    assert_eq!(value(&result), &json!("€"));
    let result = run_on(&limited(6), "return '€';", vec![]).await;
    assert_eq!(
        failure(&result),
        (CodeErrorKind::OutputLimit, "outer output exceeded 6 bytes")
    );
    assert_eq!(result.value, None);
}

#[tokio::test]
async fn log_floods_stop_at_the_budget_with_the_longest_fitting_prefix() {
    let result = run_on(
        &limited(200),
        "for (;;) console.log('x'.repeat(30));",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::OutputLimit,
            "outer output exceeded 200 bytes"
        )
    );
    // The message's JSON is 33 bytes, leaving 167 for the logs: five 32-byte entries (166).
    assert_eq!(result.logs, vec!["x".repeat(30); 5]);
    let result = run_on(
        &limited(200),
        "for (;;) console.log('y'.repeat(40));",
        vec![],
    )
    .await;
    // Four 42-byte entries take 2 + 4 * 42 + 3 = 173 > 167: three (130), then 37 bytes of room
    // for `,"…"`: a 37 - 3 = 34-character cut of the fourth.
    assert_eq!(
        result.logs,
        [
            "y".repeat(40),
            "y".repeat(40),
            "y".repeat(40),
            "y".repeat(34)
        ]
    );
    // A single huge entry is cut at a code point.
    let result = run_on(&limited(100), "console.log('€'.repeat(1000));", vec![]).await;
    assert_eq!(failure(&result).0, CodeErrorKind::OutputLimit);
    assert!(result.logs[0].chars().all(|c| c == '€') && !result.logs[0].is_empty());
    // Failure messages count too.
    let result = run_on(&limited(40), "throw new Error('x'.repeat(100));", vec![]).await;
    assert_eq!(
        failure(&result),
        (CodeErrorKind::OutputLimit, "outer output exceeded 40 bytes")
    );
}

#[tokio::test]
async fn console_renders_like_node_approximately() {
    let program = "console.log('a', 1, -0, 1.5, 10n, null, undefined, true, Symbol('s'));\n\
                   console.info({ a: [1, { b: 'c' }], 'x-y': null, [Symbol('k')]: 1 });\n\
                   console.warn([1, 2, 3], [], {}, new Map([[1, 'one']]), new Set([1]));\n\
                   console.error(function named() {}, async () => 1, class K {});\n\
                   console.debug(new Date(0), /x/g, Object.create(null), new (class Point { constructor() { this.x = 1; } })());\n\
                   const c = { depth: { one: { two: { three: { four: 1 } } } } }; c.self = c; console.log(c);\n\
                   console.log({ get g() { throw new Error('never run'); } }, 'it\\'s', ['it\\'s']);\n\
                   console.log(new Array(150).fill(0).length, new Array(101).fill(7));";
    let result = run(program).await;
    assert!(
        result.error.is_none() && result.value.is_none(),
        "{result:?}"
    );
    let logs = &result.logs;
    assert_eq!(logs[0], "a 1 -0 1.5 10n null undefined true Symbol(s)");
    assert_eq!(
        logs[1],
        "{ a: [ 1, { b: 'c' } ], 'x-y': null, [Symbol(k)]: 1 }"
    );
    assert_eq!(
        logs[2],
        "[ 1, 2, 3 ] [] {} Map(1) { 1 => 'one' } Set(1) { 1 }"
    );
    assert_eq!(
        logs[3],
        "[Function: named] [AsyncFunction (anonymous)] [Function: K]"
    );
    assert_eq!(
        logs[4],
        "1970-01-01T00:00:00.000Z /x/g [Object: null prototype] {} Point { x: 1 }"
    );
    assert_eq!(
        logs[5],
        "{ depth: { one: { two: { three: [Object] } } }, self: [Circular] }"
    );
    assert_eq!(logs[6], "{ g: [Getter] } it's [ \"it's\" ]");
    assert!(
        logs[7].starts_with("150 [ 7, 7, ") && logs[7].ends_with(", 7, ... 1 more item ]"),
        "{}",
        logs[7]
    );
}

#[tokio::test]
async fn completions_must_be_lossless() {
    for lossy in [
        "NaN",
        "-0",
        "1n",
        "new Date()",
        "{ a: undefined }",
        "[1, , 2]",
        "() => 1",
        "new Map()",
    ] {
        let result = run(&format!("return {lossy};")).await;
        let expected = (
            CodeErrorKind::InvalidOutput,
            "program completion must be lossless JSON",
        );
        assert_eq!(failure(&result), expected, "{lossy}");
    }
    let result = run("return { get x() { throw new Error('no'); } };").await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::InvalidOutput,
            "program completion must be lossless JSON: no"
        )
    );
    let result = run("return { s: 'a\\ud800b', n: [0, 1.5, 1e21, -7] };").await;
    assert_eq!(
        value(&result),
        &json!({ "s": "a\u{fffd}b", "n": [0, 1.5, 1e21, -7] })
    );
    let result = run("return null;").await;
    assert_eq!(value(&result), &json!(null));
}

#[tokio::test]
async fn exceptions_carry_positions_in_the_model_code() {
    let result = run("const a: number = 1;\nconst b = 2;\nthrow new Error('line three');").await;
    let (kind, message) = failure(&result);
    assert_eq!(kind, CodeErrorKind::Exception);
    assert!(
        message.starts_with("Error: line three\n    at "),
        "{message}"
    );
    assert!(message.contains("(program.ts:3:"), "{message}");
    let result = run("function inner() {\n  null.x;\n}\ninner();").await;
    let message = failure(&result).1;
    assert!(message.starts_with("TypeError: "), "{message}");
    assert!(message.contains("at inner (program.ts:2:"), "{message}");
    assert_eq!(
        failure(&run("throw 42;").await),
        (CodeErrorKind::Exception, "42")
    );
    assert_eq!(
        failure(&run("throw { toString() { throw 1; } };").await).1,
        "program threw an unrenderable value"
    );
    let result = run("console.log('kept');\nthrow new TypeError('late');").await;
    assert_eq!(result.logs, ["kept"]);
}

#[tokio::test]
async fn parse_errors_carry_positions_in_the_model_code() {
    let result = run("const a = 1;\nconst b = ;").await;
    let (kind, message) = failure(&result);
    assert_eq!(kind, CodeErrorKind::Exception);
    assert!(
        message.starts_with("SyntaxError: ") && message.ends_with(" at 2:11"),
        "{message}"
    );
}

#[tokio::test]
async fn non_erasable_typescript_is_refused() {
    let result = run("enum Color { Red }\nreturn Color.Red;").await;
    let (kind, message) = failure(&result);
    assert_eq!(kind, CodeErrorKind::Exception);
    assert!(
        message.contains("enum") && message.ends_with(" at 1:1"),
        "{message}"
    );
    let result = run("const x = 1;\nnamespace N { export const y = 1; }").await;
    assert!(failure(&result).1.contains("namespace"), "{result:?}");
}

#[tokio::test]
async fn oversized_and_over_nested_sources_are_refused_before_swc() {
    let source = SourceLimits {
        max_source_bytes: 1000,
        max_depth: 50,
    };
    let runtime = runtime_with(QuickJsConfig { source, ..config() });
    let result = run_on(&runtime, &format!("return '{}';", "x".repeat(1000)), vec![]).await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::SourceLimit,
            "program source is 1010 bytes, over the 1000-byte limit"
        )
    );
    // Unbalanced on purpose: swc would report a syntax error, the scanner sees the depth first.
    let result = run_on(&runtime, &format!("return {}1", "(".repeat(60)), vec![]).await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::SourceLimit,
            "program nests deeper than 50 levels at 1:58"
        )
    );
    // At the default limits, nesting that would overflow swc's stack is refused, not parsed.
    for nested in [
        format!("return {}1{};", "(".repeat(30_000), ")".repeat(30_000)),
        format!("return {}1;", "a => ".repeat(10_000)),
        format!("return {}1;", "!".repeat(60_000)),
        format!("let a; {}1;", "a = ".repeat(15_000)),
    ] {
        let result = run(&nested).await;
        assert_eq!(failure(&result).0, CodeErrorKind::SourceLimit);
    }
}

#[tokio::test]
async fn a_thousand_runs_leave_nothing_behind() {
    let runtime = runtime();
    let live = Arc::new(AtomicUsize::new(0));
    for i in 0..1000u64 {
        let probe = Probe::new(&live);
        let f = binding(move |args| {
            let probe = probe.clone();
            async move {
                let _held = probe;
                Ok(args)
            }
        });
        let program = "console.log('run');\nconst r = await tools.f({ i: 1 });\nreturn r.i + 1;";
        let result = run_on(&runtime, program, vec![tools(vec![("f", f)])]).await;
        assert_eq!(value(&result), &json!(2), "run {i}");
        assert_eq!(
            live.load(Ordering::SeqCst),
            0,
            "binding closures alive after run {i}"
        );
    }
}

#[tokio::test]
async fn uncounted_chains_at_the_size_limit_are_survived() {
    // Left-deep chains cost swc about 0.1 KiB of stack per element: the scanner leaves them
    // to the sandbox thread's headroom. At the full 64 KiB they parse, run, or fail normally.
    let size = 64 * 1024 - 100;
    let programs = [
        (
            format!("return 1{};", "+1".repeat(size / 2 - 10)),
            Some(json!(size / 2 - 9)),
        ),
        (
            format!(
                "let a = {{ b: null }};\nreturn a{};",
                ".b".repeat(size / 2 - 20)
            ),
            None,
        ),
        (
            format!(
                "const f = () => f;\nf{};\nreturn 1;",
                "()".repeat(size / 2 - 20)
            ),
            Some(json!(1)),
        ),
        (
            format!("return 1{};", " as any".repeat(size / 7 - 5)),
            Some(json!(1)),
        ),
        (
            format!(
                "let x: number{} = 1;\nreturn x;",
                "[]".repeat(size / 2 - 20)
            ),
            Some(json!(1)),
        ),
    ];
    for (program, expected) in programs {
        let result = run(&program).await;
        match expected {
            Some(expected) => assert_eq!(value(&result), &expected, "{program:.40}"),
            None => assert_eq!(
                failure(&result).0,
                CodeErrorKind::Exception,
                "{program:.40}"
            ),
        }
    }
}
