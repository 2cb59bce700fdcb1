//! Binding calls: concurrency, error classes, panics, lossless conversion both ways, limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_tools_runtime::code::quickjs::QuickJsConfig;
use dsh_tools_runtime::code::{BindingNamespace, CodeErrorKind, CodeRuntime, CodeRuntimeError};
use serde_json::{Value, json};

use super::support::*;

fn echo() -> dsh_tools_runtime::code::BindingFn {
    binding(|args| async move { Ok(args) })
}

#[tokio::test]
async fn promise_all_calls_overlap() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = |barrier: Arc<tokio::sync::Barrier>| {
        binding(move |_| {
            let barrier = barrier.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(10), barrier.wait())
                    .await
                    .map_err(|_| "the other call never started".to_owned())?;
                Ok(json!(true))
            }
        })
    };
    let result = run_tools(
        "return await Promise.all([tools.a({}), tools.b({})]);",
        vec![("a", meet(barrier.clone())), ("b", meet(barrier))],
    )
    .await;
    assert_eq!(value(&result), &json!([true, true]));
}

#[tokio::test]
async fn calls_in_flight_are_capped_and_the_rest_queue() {
    let config = QuickJsConfig {
        max_calls_in_flight: 2,
        ..config()
    };
    let (now, peak, total) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let (n, p, t) = (now.clone(), peak.clone(), total.clone());
    // Calls meet in pairs: with two in flight both arrive; with one, the barrier times out.
    let pair = Arc::new(tokio::sync::Barrier::new(2));
    let work = binding(move |args| {
        let (n, p, t, pair) = (n.clone(), p.clone(), t.clone(), pair.clone());
        async move {
            let running = n.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(running, Ordering::SeqCst);
            t.fetch_add(1, Ordering::SeqCst);
            let met = tokio::time::timeout(Duration::from_secs(10), pair.wait()).await;
            n.fetch_sub(1, Ordering::SeqCst);
            met.map_err(|_| "no second call in flight".to_owned())?;
            Ok(args)
        }
    });
    let program = "return await Promise.all([1, 2, 3, 4, 5, 6].map((i) => tools.work({ i })));";
    let result = run_on(
        &runtime_with(config),
        program,
        vec![tools(vec![("work", work)])],
    )
    .await;
    let expected: Vec<Value> = (1..=6).map(|i| json!({ "i": i })).collect();
    assert_eq!(value(&result), &Value::Array(expected));
    assert_eq!(total.load(Ordering::SeqCst), 6);
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn many_calls_keep_their_own_results() {
    let delayed = binding(|args| async move {
        let n = args["n"].as_u64().unwrap_or(0);
        for _ in 0..(n * 7 % 5) {
            tokio::task::yield_now().await;
        }
        Ok(json!({ "n": n, "square": n * n }))
    });
    let program = "const out = await Promise.all(Array.from({ length: 100 }, (_, n) => tools.f({ n })));\n\
                   return out.every((r, n) => r.n === n && r.square === n * n);";
    assert_eq!(
        value(&run_tools(program, vec![("f", delayed)]).await),
        &json!(true)
    );
}

#[tokio::test]
async fn failed_calls_reject_with_the_error_class() {
    let fail = binding(|_| async { Err("disk on fire".to_owned()) });
    let program = "try { await tools.fail({}); return 'no-exception'; } catch (e) {\n\
                   return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message,\n\
                   Object.hasOwn(e, 'toolName'), String(e)]; }";
    let result = run_tools(program, vec![("fail", fail)]).await;
    assert_eq!(
        value(&result),
        &json!([
            true,
            true,
            "ToolCallError",
            "fail",
            "disk on fire",
            true,
            "ToolCallError: disk on fire"
        ])
    );
}

#[tokio::test]
async fn the_error_class_is_shaped_like_a_subclass_of_error() {
    let program = "class Mine extends ToolCallError {}\n\
                   const e = new ToolCallError('m', 'x');\n\
                   const m = new Mine('n', 'y');\n\
                   let called = 'threw';\n\
                   try { ToolCallError('no new'); called = 'ran'; } catch (err) { called = err.name; }\n\
                   return [Object.getPrototypeOf(ToolCallError) === Error,\n\
                   Object.getPrototypeOf(ToolCallError.prototype) === Error.prototype,\n\
                   ToolCallError.name, typeof e.stack, e.toolName,\n\
                   m instanceof Mine, m instanceof ToolCallError, m instanceof Error, m.toolName, m.message,\n\
                   called];";
    let result = run_tools(program, Vec::new()).await;
    assert_eq!(
        value(&result),
        &json!([
            true,
            true,
            "ToolCallError",
            "string",
            "x",
            true,
            true,
            true,
            "y",
            "n",
            "TypeError"
        ])
    );
}

#[tokio::test]
async fn without_an_error_class_failures_are_plain_errors() {
    let namespace = BindingNamespace {
        global: "api".to_owned(),
        functions: vec![(
            "fail".to_owned(),
            binding(|_| async { Err("nope".to_owned()) }),
        )],
        error_class: None,
    };
    let program =
        "try { await api.fail({}); } catch (e) { return [e.constructor === Error, e.message]; }";
    let result = run_on(&runtime(), program, vec![namespace]).await;
    assert_eq!(value(&result), &json!([true, "nope"]));
}

#[tokio::test]
async fn uncaught_call_failures_fail_the_program() {
    let fail = binding(|_| async { Err("boom".to_owned()) });
    let result = run_tools(
        "console.log('start');\nawait tools.fail({});",
        vec![("fail", fail)],
    )
    .await;
    let (kind, message) = failure(&result);
    assert_eq!(kind, CodeErrorKind::Exception);
    assert!(
        message.starts_with("ToolCallError: fail: boom\n    at program.ts:2:7"),
        "{message}"
    );
    assert_eq!(result.logs, ["start"]);
}

#[tokio::test]
async fn panicking_bindings_are_catchable_and_harmless() {
    let runtime = runtime();
    let before: dsh_tools_runtime::code::BindingFn =
        Arc::new(|_| panic!("panic before the future"));
    let inside = binding(|_| async { panic!("panic inside the future") });
    let program = "const out = [];\n\
                   for (const name of ['before', 'inside']) {\n\
                     try { await tools[name]({}); out.push('no-exception'); }\n\
                     catch (e) { out.push([e instanceof ToolCallError, e.toolName, e.message]); }\n\
                   }\n\
                   return out;";
    for _ in 0..3 {
        let namespace = tools(vec![("before", before.clone()), ("inside", inside.clone())]);
        let result = run_on(&runtime, program, vec![namespace]).await;
        assert_eq!(
            value(&result),
            &json!([
                [
                    true,
                    "before",
                    "binding \"tools.before\" panicked: panic before the future"
                ],
                [
                    true,
                    "inside",
                    "binding \"tools.inside\" panicked: panic inside the future"
                ]
            ])
        );
    }
    let ok = run_on(&runtime, "return 'still fine';", vec![]).await;
    assert_eq!(value(&ok), &json!("still fine"));
}

#[tokio::test]
async fn argument_conversion_is_lossless() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let count = binding(move |args| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move { Ok(args) }
    });
    let lossy = [
        "undefined",
        "",
        "1n",
        "new Date()",
        "{ f() {} }",
        "-0",
        "NaN",
        "Infinity",
        "{ a: undefined }",
        "[undefined]",
        "(() => { const a = {}; a.self = a; return a; })()",
        "[1, , 2]",
        "new (class A {})()",
        "new Map()",
        "Object.assign([1], { extra: 1 })",
        "{ [Symbol('s')]: 1 }",
        "Object.defineProperty({}, 'hidden', { value: 1 })",
        "new Number(1)",
        "Symbol('x')",
        "() => 1",
        "new Proxy({}, { ownKeys() { throw new Error('trap'); } })",
        "{ d: new Date() }",
        "[[[[new Map()]]]]",
    ];
    for arg in lossy {
        let program = format!(
            "try {{ await tools.count({arg}); return 'dispatched'; }}\n\
                               catch (e) {{ return [e instanceof ToolCallError, e.message]; }}"
        );
        let result = run_tools(&program, vec![("count", count.clone())]).await;
        let message = value(&result)[1].as_str().unwrap_or_default().to_owned();
        assert!(
            message.starts_with("tool arguments must be lossless JSON"),
            "{arg}: {result:?}"
        );
        assert_eq!(value(&result)[0], json!(true), "{arg}");
    }
    let program = "try { await tools.count({ get x() { throw new Error('getter says no'); } }); }\n\
                   catch (e) { return e.message; }";
    let result = run_tools(program, vec![("count", count.clone())]).await;
    assert_eq!(
        value(&result),
        &json!("tool arguments must be lossless JSON: getter says no")
    );
    let result = run_tools(
        "await tools.count(undefined);",
        vec![("count", count.clone())],
    )
    .await;
    assert!(failure(&result).1.contains(
        "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"
    ));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was dispatched");

    // What is lossless crosses exactly (shared sub-objects are fine, `__proto__` is data).
    let program = "const shared = { k: 'v' };\n\
                   return await tools.count({ a: [1, 2.5, -3, 1e300, 'é\\u2028', null, true], shared, again: shared,\n\
                   nested: JSON.parse('{\"__proto__\": {\"x\": 1}}'), n: Object.assign(Object.create(null), { z: 0 }) });";
    let result = run_tools(program, vec![("count", count)]).await;
    assert_eq!(
        value(&result),
        &json!({
            "a": [1, 2.5, -3, 1e300, "é\u{2028}", null, true],
            "shared": { "k": "v" }, "again": { "k": "v" },
            "nested": { "__proto__": { "x": 1 } }, "n": { "z": 0 }
        })
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn resolutions_must_be_lossless_too() {
    for lossy in [
        json!(9_007_199_254_740_993_u64),
        json!(-9_007_199_254_740_993_i64),
        json!(-0.0),
    ] {
        let reply = lossy.clone();
        let f = binding(move |_| {
            let reply = reply.clone();
            async move { Ok(json!({ "deep": [reply] })) }
        });
        let program = "try { await tools.f({}); return 'resolved'; } catch (e) { return [e.toolName, e.message]; }";
        let result = run_tools(program, vec![("f", f)]).await;
        assert_eq!(
            value(&result),
            &json!(["f", "binding resolution must be lossless JSON"]),
            "{lossy}"
        );
    }
    let proto = binding(|_| async {
        Ok(json!({ "__proto__": { "polluted": true }, "n": 9_007_199_254_740_991_u64 }))
    });
    let program = "const r = await tools.f({});\n\
                   return [Object.getPrototypeOf(r) === Object.prototype, Object.keys(r), r.__proto__.polluted, ({}).polluted === undefined];";
    let result = run_tools(program, vec![("f", proto)]).await;
    assert_eq!(
        value(&result),
        &json!([true, ["__proto__", "n"], true, true])
    );
}

#[tokio::test]
async fn the_call_limit_rejects_later_calls() {
    let config = QuickJsConfig {
        max_tool_calls: 3,
        ..config()
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let f = binding(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        async { Ok(json!(1)) }
    });
    let runtime = runtime_with(config);
    let uncaught = "for (let i = 0; i < 10; i++) await tools.f({});";
    let result = run_on(&runtime, uncaught, vec![tools(vec![("f", f.clone())])]).await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::CallLimit,
            "tool call limit reached (3 calls per run)"
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    let caught = "let ok = 0, refused = [];\n\
                  for (let i = 0; i < 5; i++) { try { ok += await tools.f({}); } catch (e) { refused.push(e.message); } }\n\
                  return [ok, refused];";
    let result = run_on(&runtime, caught, vec![tools(vec![("f", f)])]).await;
    let refused = "tool call limit reached (3 calls per run)";
    assert_eq!(value(&result), &json!([3, [refused, refused]]));
}

#[tokio::test]
async fn members_are_own_properties_of_a_null_prototype_object() {
    let namespace = tools(vec![
        ("__proto__", echo()),
        ("constructor", echo()),
        ("toString", echo()),
    ]);
    let program = "return [Object.getPrototypeOf(tools), Object.keys(tools),\n\
                   await tools.__proto__({ a: 1 }), await tools.constructor({ b: 2 })];";
    let result = run_on(&runtime(), program, vec![namespace]).await;
    assert_eq!(
        value(&result),
        &json!([null, ["__proto__", "constructor", "toString"], { "a": 1 }, { "b": 2 }])
    );
}

#[tokio::test]
async fn invalid_namespaces_are_contract_misuse() {
    let bad = BindingNamespace {
        global: "lambda".to_owned(),
        functions: vec![],
        error_class: None,
    };
    let error = runtime()
        .run(request("return 1;", vec![bad]))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        CodeRuntimeError::InvalidBinding(
            "dsh-tools-runtime(quickjs): binding global \"lambda\" is not a usable identifier"
                .to_owned()
        )
    );
    let shadow = BindingNamespace {
        global: "Math".to_owned(),
        functions: vec![],
        error_class: None,
    };
    assert!(
        runtime()
            .run(request("return 1;", vec![shadow]))
            .await
            .is_err()
    );
}
