//! The global surface: an allow-list, no dynamic code, no host objects.

use dsh_tools_runtime::code::CodeErrorKind;
use dsh_tools_runtime::code::quickjs::GLOBAL_ALLOW_LIST;
use serde_json::{Value, json};

use super::support::*;

#[tokio::test]
async fn globals_are_exactly_the_allow_list() {
    let noop = binding(|_| async { Ok(json!(null)) });
    let result = run_tools(
        "return Object.getOwnPropertyNames(globalThis);",
        vec![("noop", noop)],
    )
    .await;
    let mut expected: Vec<Value> = GLOBAL_ALLOW_LIST.iter().map(|n| json!(n)).collect();
    expected.extend([json!("console"), json!("tools"), json!("ToolCallError")]);
    assert_eq!(value(&result), &Value::Array(expected));
    let symbols = run("return Object.getOwnPropertySymbols(globalThis).map(String);").await;
    assert_eq!(value(&symbols), &json!(["Symbol(Symbol.toStringTag)"]));
}

#[tokio::test]
async fn forbidden_globals_are_absent() {
    let names = [
        "eval",
        "Function",
        "require",
        "process",
        "module",
        "exports",
        "std",
        "os",
        "bjson",
        "setTimeout",
        "setInterval",
        "setImmediate",
        "clearTimeout",
        "queueMicrotask",
        "performance",
        "DOMException",
        "InternalError",
        "WebAssembly",
        "fetch",
        "XMLHttpRequest",
        "navigator",
        "Deno",
        "Bun",
        "gc",
        "print",
        "scriptArgs",
        "__filename",
        "__dirname",
        "__builtins__",
        "importScripts",
        "postMessage",
        "Worker",
        "atob",
        "btoa",
    ];
    for name in names {
        let program = format!("return [typeof {name}, '{name}' in globalThis];");
        let result = run(&program).await;
        assert_eq!(value(&result), &json!(["undefined", false]), "{name}");
    }
    // The wrapper's name is bound inside its own body only.
    let result = run("return '__dsh_main__' in globalThis;").await;
    assert_eq!(value(&result), &json!(false));
}

#[tokio::test]
async fn no_code_can_be_compiled_from_a_string() {
    let attempts = [
        "eval('1')",
        "(0, globalThis.eval)('1')",
        "new Function('return 1')()",
        "(function () {}).constructor('return 1')()",
        "(() => {}).constructor('return 1')()",
        "(async function () {}).constructor('return 1')",
        "(function* () {}).constructor('yield 1')",
        "(async function* () {}).constructor('yield 1')",
        "Reflect.construct(Function, ['return 1'])",
        "Reflect.construct(Object.getPrototypeOf(function () {}).constructor, ['return 1'])",
        "Reflect.apply(Object.getPrototypeOf(async () => {}).constructor, null, ['return 1'])",
        "[].constructor.constructor('return this')()",
        "({}).constructor.constructor('return this')()",
        "Object.getOwnPropertyDescriptor(Object.getPrototypeOf(() => {}), 'constructor').value('return 1')",
        "new (class extends (function () {}).constructor {})('return 1')",
        "Function.prototype.constructor.call(null, 'return 1')",
        "console.log.constructor('return this')()",
        "tools.noop.constructor('return this')()",
    ];
    for attempt in attempts {
        let noop = binding(|_| async { Ok(json!(null)) });
        let program = format!("const f = {attempt};\nreturn 'escaped';");
        let result = run_tools(&program, vec![("noop", noop)]).await;
        let (kind, message) = failure(&result);
        assert_eq!(kind, CodeErrorKind::Exception, "{attempt}: {message}");
        assert!(
            message.starts_with("EvalError: code generation from strings is disabled")
                || message.starts_with("ReferenceError")
                || message.starts_with("TypeError"),
            "{attempt}: {message}"
        );
    }
}

#[tokio::test]
async fn the_blocked_constructors_cannot_be_replaced() {
    let program = "const proto = Object.getPrototypeOf(function () {});\n\
                   proto.constructor = function () { return 1; };";
    assert!(failure(&run(program).await).1.starts_with("TypeError"));
    let program = "delete Object.getPrototypeOf(async function () {}).constructor;";
    assert!(failure(&run(program).await).1.starts_with("TypeError"));
}

#[tokio::test]
async fn no_module_loader() {
    let result = run("await import('node:fs');").await;
    assert_eq!(failure(&result).0, CodeErrorKind::Exception);
    let result = run("import fs from 'fs';").await;
    assert_eq!(failure(&result).0, CodeErrorKind::Exception);
}

#[tokio::test]
async fn each_run_starts_fresh() {
    let runtime = runtime();
    let first = run_on(
        &runtime,
        "globalThis.leak = 1; Object.prototype.polluted = 1; return 1;",
        vec![],
    )
    .await;
    assert_eq!(value(&first), &json!(1));
    let second = run_on(
        &runtime,
        "return [typeof leak, ({}).polluted === undefined];",
        vec![],
    )
    .await;
    assert_eq!(value(&second), &json!(["undefined", true]));
}

#[tokio::test]
async fn strict_mode_and_top_level_await() {
    let result = run("undeclared = 1;").await;
    assert!(
        failure(&result).1.starts_with("ReferenceError"),
        "{result:?}"
    );
    let result = run("const x = await Promise.resolve(41);\nreturn x + 1;").await;
    assert_eq!(value(&result), &json!(42));
    let result = run("return;").await;
    assert_eq!(result, dsh_tools_runtime::code::CodeRunResult::default());
}
