//! The Monty runtime: programs, tool calls, values across the boundary, the static check,
//! limits and outcomes — in process and in worker processes.

#![cfg(feature = "python")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

use crate::python_support as support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dsh_tools_runtime::code::monty::{MontyConfig, check_program};
use dsh_tools_runtime::code::{CodeErrorKind, CodeRuntime};
use serde_json::{Value, json};
use support::*;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_program_is_the_body_of_an_async_function() {
    let result =
        run("x = 20\nprint('x =', x)\nif x > 10:\n    return {'x': x + 1}\nreturn 0").await;
    assert_eq!(value(&result), &json!({"x": 21}));
    assert_eq!(result.logs, ["x = 20"]);
    // No `return`: no value, and a last expression is not one either (a function body).
    let result = run("print('a', end='')\nprint('b\\nc')\n1 + 1").await;
    assert_eq!(result.value, None);
    assert_eq!(result.logs, ["ab", "c"]);
    let result = run("return None").await;
    assert_eq!((result.value, result.error), (None, None));
    let result = run("print('no newline', end='')").await;
    assert_eq!(result.logs, ["no newline"]);
}

#[tokio::test]
async fn values_cross_as_lossless_json() {
    let result = run(
        "r = await tools.echo({'a': [1, 2.5, 'é', None, True], 'b': {'c': (1, 2)}, '__proto__': {}})\n\
         return [r, type(r['a'][0]).__name__, type(r['a'][1]).__name__]",
    )
    .await;
    assert_eq!(
        value(&result),
        &json!([{"a": [1, 2.5, "é", null, true], "b": {"c": [1, 2]}, "__proto__": {}}, "int", "float"])
    );
    for (program, what) in [
        ("return {1, 2}", "a set"),
        ("return float('nan')", "nan"),
        ("return -0.0", "-0.0"),
        ("return 2 ** 60", "an int beyond"),
        ("return {1: 'a'}", "a dict key that is not a str (int)"),
        ("return b'x'", "bytes"),
    ] {
        let result = run(program).await;
        let message = failure(&result, CodeErrorKind::InvalidOutput);
        assert!(
            message.starts_with(&format!("program completion must be lossless JSON: {what}")),
            "{program}: {message}"
        );
    }
}

#[tokio::test]
async fn tool_calls_go_to_the_bindings() {
    let result = run("a = await tools.echo({'n': 1})\n\
         b = await tools['echo']({'n': 2})\n\
         f = tools.echo\n\
         c = await f({'n': 3})\n\
         d = await tools [ 'echo' ]({'n': 4})\n\
         e = await tools[\n    'echo'  # the tool\n]({'n': 5})\n\
         name = 'echo'\n\
         g = await tools[name]({'n': 6})\n\
         return [a, b, c, d, e, g, str(tools['echo'])]")
    .await;
    assert_eq!(
        value(&result),
        &json!([
            {"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, {"n": 5}, {"n": 6},
            "<function 'tools.echo' external>"
        ])
    );
    // A literal name no tool has is found before running; a computed one raises `KeyError`.
    let result = run("return await tools['nope']({})").await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert!(message.contains("1:20: no tool named `nope`"), "{message}");
    let result = run("name = 'nope'\nreturn await tools[name]({})").await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert!(
        message.ends_with("KeyError: tools has no function named 'nope'"),
        "{message}"
    );
    assert!(
        message.contains("return await tools[name]({})"),
        "quotes the program as written: {message}"
    );
    let exotic = tools(vec![(
        "my-tool",
        binding(|args| async move { Ok(json!({"got": args})) }),
    )]);
    let result = run_on(
        &runtime(),
        "return await tools['my-tool']({'x': 1})",
        vec![exotic],
    )
    .await;
    assert_eq!(value(&result), &json!({"got": {"x": 1}}));
}

#[tokio::test]
async fn a_failed_call_raises_tool_call_error() {
    let result = run(
        "try:\n    await tools.fail({})\nexcept ToolCallError as e:\n    print('caught:', e)\n    return str(e)",
    )
    .await;
    assert_eq!(value(&result), &json!("fail: disk on fire"));
    assert_eq!(result.logs, ["caught: fail: disk on fire"]);
    // Uncaught: an exception named ToolCallError, at the line of the call.
    let result = run("x = 1\nawait tools.fail({})").await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert!(message.contains("line 2"), "{message}");
    assert!(
        message.ends_with("ToolCallError: fail: disk on fire"),
        "{message}"
    );
}

#[tokio::test]
async fn arguments_must_be_one_dict_of_lossless_json() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let count = binding(move |args| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { Ok(args) }
    });
    let bindings = || vec![tools(vec![("count", count.clone())])];
    for (args, message) in [
        (
            "",
            "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)",
        ),
        (
            "[1]",
            "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)",
        ),
        (
            "a=1",
            "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)",
        ),
        (
            "{'x': {1, 2}}",
            "tool arguments must be lossless JSON: a set",
        ),
        (
            "{'x': float('inf')}",
            "tool arguments must be lossless JSON: an infinite float",
        ),
    ] {
        let program = format!(
            "try:\n    await tools.count({args})\nexcept ToolCallError as e:\n    return str(e)"
        );
        let result = run_on(&runtime(), &program, bindings()).await;
        assert_eq!(
            value(&result),
            &json!(format!("count: {message}")),
            "{args}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was dispatched");
    // A resolution that is not lossless JSON fails the call.
    let big = tools(vec![(
        "big",
        binding(|_| async { Ok(json!(9007199254740993_u64)) }),
    )]);
    let result = run_on(
        &runtime(),
        "try:\n    await tools.big({})\nexcept ToolCallError as e:\n    return str(e)",
        vec![big],
    )
    .await;
    assert_eq!(
        value(&result),
        &json!("big: binding resolution must be lossless JSON")
    );
}

/// Two calls that each wait for the other: they finish only if they overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_calls_overlap() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = binding(move |args| {
        let barrier = barrier.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(5), barrier.wait())
                .await
                .map_err(|_| "the other call never came".to_owned())?;
            Ok(args)
        }
    });
    let program = "import asyncio\nr = await asyncio.gather(tools.meet({'i': 1}), tools.meet({'i': 2}))\nreturn r";
    for runtime in [runtime(), runtime_with(worker_config())] {
        let result = run_on(&runtime, program, vec![tools(vec![("meet", meet.clone())])]).await;
        assert_eq!(
            value(&result),
            &json!([{"i": 1}, {"i": 2}]),
            "{}",
            runtime.isolation()
        );
    }
}

#[tokio::test]
async fn calls_in_flight_are_capped() {
    let current = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (c, p) = (current.clone(), peak.clone());
    let slow = binding(move |args| {
        let (c, p) = (c.clone(), p.clone());
        async move {
            let now = c.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            c.fetch_sub(1, Ordering::SeqCst);
            Ok(args)
        }
    });
    let limited = MontyConfig {
        max_calls_in_flight: 3,
        ..config()
    };
    let program = "import asyncio\nr = await asyncio.gather(*[tools.slow({'i': i}) for i in range(10)])\nreturn len(r)";
    let result = run_on(
        &runtime_with(limited),
        program,
        vec![tools(vec![("slow", slow)])],
    )
    .await;
    assert_eq!(value(&result), &json!(10));
    assert_eq!(peak.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_call_limit_raises_and_ends_an_uncaught_program() {
    let limited = MontyConfig {
        max_tool_calls: 3,
        ..config()
    };
    let runtime = runtime_with(limited);
    let result = run_on(
        &runtime,
        "for i in range(10):\n    await tools.echo({'i': i})",
        vec![echo_and_fail()],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::CallLimit),
        "tool call limit reached (3 calls per run)"
    );
    // The limit is not a tool's failure: `except ToolCallError` does not catch it (as in
    // TypeScript, where it is a plain `Error`); `except RuntimeError` does.
    let counting = |class: &str| {
        format!(
            "n = 0\nfor i in range(10):\n    try:\n        await tools.echo({{}})\n        n += 1\n    except {class}:\n        pass\nreturn n"
        )
    };
    let result = run_on(&runtime, &counting("ToolCallError"), vec![echo_and_fail()]).await;
    assert_eq!(
        failure(&result, CodeErrorKind::CallLimit),
        "tool call limit reached (3 calls per run)"
    );
    let result = run_on(&runtime, &counting("RuntimeError"), vec![echo_and_fail()]).await;
    assert_eq!(value(&result), &json!(3));
}

#[tokio::test]
async fn the_static_check_reports_everything_before_running() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let echo = binding(move |args| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { Ok(args) }
    });
    let program = "await tools.echo({})\nclass A(Exception):\n    pass\ndef g():\n    yield 1\nimport numpy\nmatch 1:\n    case 1: pass\nawait tools.echoo({})\ndel x\n";
    let result = run_on(&runtime(), program, vec![tools(vec![("echo", echo)])]).await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert_eq!(
        message,
        "the program cannot run:\n  \
         2:1: class inheritance is not supported (hint: use a plain class, a `@dataclass` or a dict)\n  \
         5:5: generators (`yield`) are not supported (hint: build and return a list)\n  \
         6:8: module `numpy` is not available (hint: available modules: asyncio, base64, binascii, collections, dataclasses, datetime, functools, itertools, json, math, os, pathlib, re, sys, typing, unicodedata)\n  \
         7:1: `match` statements are not supported (hint: use `if`/`elif`)\n  \
         9:13: no tool named `echoo` (hint: did you mean `echo`?)\n  \
         10:1: the `del` statement is not supported (hint: rebind the name, or use `dict.pop(key)`)"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing ran");
    // Every syntax error, with its position.
    let findings = check_program("x = = 1\ny = (\n", &[]);
    assert!(findings.len() >= 2, "{findings:?}");
    assert_eq!((findings[0].line, findings[0].column), (1, 5));
    // Guarded imports and programs that rebind `tools` are left alone.
    assert!(
        check_program(
            "try:\n    import numpy\nexcept ImportError:\n    pass\n",
            &[]
        )
        .is_empty()
    );
    assert!(check_program("tools = {'a': 1}\nprint(tools['b'])\n", &[]).is_empty());
}

#[tokio::test]
async fn errors_point_into_the_program() {
    let result = run("x = 1\n\ny = [1, 2][5]").await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert!(
        message.starts_with("Traceback (most recent call last):\n  File \"program.py\", line 3"),
        "{message}"
    );
    assert!(
        message.ends_with("IndexError: list index out of range"),
        "{message}"
    );
    let result = run("def f():\n    raise ValueError('bad')\nf()").await;
    let message = failure(&result, CodeErrorKind::Exception);
    assert!(message.contains("line 2, in f"), "{message}");
}

#[tokio::test]
async fn limits_end_in_their_named_outcomes() {
    let result = run("while True:\n    pass").await;
    assert_eq!(
        failure(&result, CodeErrorKind::Timeout),
        "compute budget exhausted (500ms of interpreter time)"
    );
    let result = run("def f(n):\n    return f(n + 1)\nf(0)").await;
    assert!(
        failure(&result, CodeErrorKind::StackOverflow)
            .starts_with("recursion limit reached (1000 frames)\nTraceback")
    );
    let result = run("x = 'a' * (10 * 1024 ** 3)").await;
    assert_eq!(
        failure(&result, CodeErrorKind::MemoryLimit),
        "memory limit reached (an allocation over the in-process cap)"
    );
    let limited = MontyConfig {
        max_output_bytes: 1000,
        ..config()
    };
    let result = run_on(
        &runtime_with(limited),
        "while True:\n    print('flood')",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::OutputLimit),
        "outer output exceeded 1000 bytes"
    );
    // The logs that fit are kept (the last one possibly cut).
    assert!(result.logs.len() > 10, "{:?}", result.logs);
    assert!(result.logs.iter().all(|l| "flood".starts_with(l.as_str())));
    let limited = MontyConfig {
        max_source_bytes: 10,
        ..config()
    };
    let result = run_on(
        &runtime_with(limited),
        "print('more than ten bytes')",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::SourceLimit),
        "program source is 28 bytes, over the 10-byte limit"
    );
}

#[tokio::test]
async fn the_wall_clock_and_cancellation_stop_a_waiting_program() {
    let never = binding(|_| std::future::pending());
    let limited = MontyConfig {
        wall_clock: Duration::from_millis(200),
        ..config()
    };
    let runtime = runtime_with(limited);
    let started = Instant::now();
    let result = run_on(
        &runtime,
        "print('before')\nawait tools.never({})",
        vec![tools(vec![("never", never.clone())])],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::Timeout),
        "wall-clock ceiling reached (200ms)"
    );
    assert_eq!(result.logs, ["before"]);
    assert!(started.elapsed() < Duration::from_secs(2));
    let cancel = CancellationToken::new();
    let run = runtime.run(
        request("await tools.never({})", vec![tools(vec![("never", never)])])
            .with_cancellation(cancel.clone()),
    );
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(run, canceller);
    let result = result.expect("valid bindings");
    assert_eq!(failure(&result, CodeErrorKind::Abort), "run cancelled");
}

#[tokio::test]
async fn a_program_that_catches_everything_still_stops() {
    let result = run("while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass").await;
    failure(&result, CodeErrorKind::Timeout);
}

#[tokio::test]
async fn no_file_network_or_environment() {
    for program in [
        "open('/etc/passwd').read()",
        "import os\nreturn os.getenv('HOME')",
    ] {
        let result = run(program).await;
        let message = failure(&result, CodeErrorKind::Exception);
        assert!(message.ends_with("PermissionError: no file, network or environment access in the sandbox; use the tools"), "{message}");
    }
}

#[tokio::test]
async fn worker_processes_run_the_same_programs_and_enforce_memory() {
    let runtime = runtime_with(worker_config());
    assert_eq!(runtime.isolation(), "process");
    let result = run_on(
        &runtime,
        "r = await tools.echo({'n': 1})\nprint('hi')\nreturn r",
        vec![echo_and_fail()],
    )
    .await;
    assert_eq!(value(&result), &json!({"n": 1}));
    assert_eq!(result.logs, ["hi"]);
    let result = run_on(&runtime, "await tools.fail({})", vec![echo_and_fail()]).await;
    assert!(
        failure(&result, CodeErrorKind::Exception).ends_with("ToolCallError: fail: disk on fire")
    );
    // Memory that grows in small pieces is bounded too, and the worker is replaced.
    let result = run_on(
        &runtime,
        "l = []\nwhile True:\n    l.append('x' * 1000)",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::MemoryLimit),
        "memory limit reached (33554432 bytes)"
    );
    let result = run_on(&runtime, "return sum(range(10))", vec![]).await;
    assert_eq!(value(&result), &json!(45));
    let result = run_on(&runtime, "while True:\n    pass", vec![]).await;
    assert_eq!(
        failure(&result, CodeErrorKind::Timeout),
        "compute budget exhausted (500ms of interpreter time)"
    );
    let limited = MontyConfig {
        max_output_bytes: 1000,
        ..worker_config()
    };
    let result = run_on(
        &runtime_with(limited),
        "while True:\n    print('flood')",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result, CodeErrorKind::OutputLimit),
        "outer output exceeded 1000 bytes"
    );
}

#[tokio::test]
async fn a_missing_worker_executable_is_a_worker_exit() {
    let mut config = worker_config();
    if let dsh_tools_runtime::code::monty::Isolation::Workers(workers) = &mut config.isolation {
        workers.command = "/nonexistent/dsh-monty-worker".into();
    }
    let result = run_on(&runtime_with(config), "return 1", vec![]).await;
    let message = failure(&result, CodeErrorKind::WorkerExit);
    assert!(
        message.starts_with("could not start a worker process (/nonexistent/dsh-monty-worker)"),
        "{message}"
    );
}

#[test]
fn binding_namespaces_follow_the_portable_rules() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let bad = dsh_tools_runtime::code::BindingNamespace {
        global: "lambda".to_owned(),
        functions: Vec::new(),
        error_class: None,
    };
    let error = runtime
        .block_on(support::runtime().run(request("return 1", vec![bad])))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("binding global \"lambda\" is not a usable identifier")
    );
}

#[tokio::test]
async fn other_namespaces_and_error_classes() {
    let ns = dsh_tools_runtime::code::BindingNamespace {
        global: "db".to_owned(),
        functions: vec![(
            "get".to_owned(),
            binding(|_| async { Err("no row".to_owned()) }),
        )],
        error_class: Some(dsh_tools_runtime::code::ErrorClass {
            name: "DbError".to_owned(),
            member_name_property: "fn".to_owned(),
        }),
    };
    let result = run_on(
        &runtime(),
        "try:\n    await db.get({})\nexcept DbError as e:\n    return ['db', str(e)]",
        vec![ns, echo_and_fail()],
    )
    .await;
    assert_eq!(value(&result), &json!(["db", "get: no row"]));
    let _: Value = json!(null);
}
