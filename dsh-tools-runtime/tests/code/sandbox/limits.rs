//! Resource limits: CPU, wall clock, memory, stack, cancellation; the host survives each.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dsh_tools_runtime::code::CodeErrorKind;
use dsh_tools_runtime::code::quickjs::QuickJsConfig;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn infinite_loop_exhausts_the_compute_budget() {
    let result = run("while (true) {}").await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::Timeout,
            "compute budget exhausted (300ms of CPU time)"
        )
    );
}

#[tokio::test]
async fn try_wrapped_infinite_loop_cannot_catch_the_interrupt() {
    let result = run("while (true) { try { for (;;) {} } catch {} }").await;
    assert_eq!(failure(&result).0, CodeErrorKind::Timeout);
    let result = run("while (true) { try { for (;;) {} } finally { continue; } }").await;
    assert_eq!(failure(&result).0, CodeErrorKind::Timeout);
}

#[tokio::test]
async fn async_spin_loop_exhausts_the_compute_budget() {
    let result = run("while (true) await Promise.resolve();").await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::Timeout,
            "compute budget exhausted (300ms of CPU time)"
        )
    );
}

#[tokio::test]
async fn huge_array_index_of_is_interrupted() {
    let result = run("return Array.prototype.indexOf.call({ length: 4294967295 }, 99);").await;
    assert_eq!(failure(&result).0, CodeErrorKind::Timeout);
}

#[tokio::test]
async fn never_resolving_promise_hits_the_wall_clock() {
    let config = QuickJsConfig {
        wall_clock: Duration::from_millis(200),
        ..config()
    };
    let result = run_on(
        &runtime_with(config),
        "await new Promise(() => {});",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result),
        (CodeErrorKind::Timeout, "wall-clock ceiling reached (200ms)")
    );
}

#[tokio::test]
async fn wall_clock_covers_host_awaits() {
    let config = QuickJsConfig {
        wall_clock: Duration::from_millis(200),
        ..config()
    };
    let hang = binding(|_| std::future::pending());
    let program = "console.log('before'); await tools.hang({}); return 1;";
    let result = run_on(
        &runtime_with(config),
        program,
        vec![tools(vec![("hang", hang)])],
    )
    .await;
    assert_eq!(
        failure(&result),
        (CodeErrorKind::Timeout, "wall-clock ceiling reached (200ms)")
    );
    assert_eq!(result.logs, ["before"], "logs before the limit are kept");
}

#[tokio::test]
async fn uninterruptible_native_work_is_abandoned_at_the_wall_clock() {
    // QuickJS does not poll its interrupt handler inside this join: the watchdog outside the
    // engine ends the run, and the thread finishes on its own.
    let config = QuickJsConfig {
        wall_clock: Duration::from_millis(300),
        ..config()
    };
    let started = Instant::now();
    let result = run_on(
        &runtime_with(config),
        "return (new Array(3e8) + '').length;",
        vec![],
    )
    .await;
    assert_eq!(
        failure(&result),
        (CodeErrorKind::Timeout, "wall-clock ceiling reached (300ms)")
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn allocation_loops_hit_the_memory_limit_at_every_size() {
    for mib in [1usize, 4, 16, 64] {
        let config = QuickJsConfig {
            memory_limit_bytes: mib << 20,
            cpu_budget: Duration::from_secs(20),
            ..config()
        };
        let runtime = runtime_with(config);
        for program in [
            "const a = []; while (true) a.push(new Array(1000).fill(1));",
            "const a = []; while (true) a.push({ x: [1, 2, 3], y: 'abc' + a.length });",
            "const a = []; while (true) a.push('x'.repeat(4096) + a.length);",
        ] {
            let result = run_on(&runtime, program, vec![]).await;
            let expected = format!("memory limit reached ({} bytes)", mib << 20);
            assert_eq!(
                failure(&result),
                (CodeErrorKind::MemoryLimit, expected.as_str()),
                "{program}"
            );
        }
        // The same runtime is fine afterwards.
        assert_eq!(
            value(&run_on(&runtime, "return 1 + 1;", vec![]).await),
            &json!(2)
        );
    }
}

#[tokio::test]
async fn deep_recursion_overflows_the_js_stack() {
    let result = run("function f(n) { return f(n + 1) + 1; }\nreturn f(0);").await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::StackOverflow,
            "stack limit reached (262144 bytes)"
        )
    );
    // Caught, it is an ordinary RangeError.
    let result = run("function f() { f(); }\ntry { f(); } catch (e) { return e.name; }").await;
    assert_eq!(value(&result), &json!("RangeError"));
}

#[tokio::test]
async fn deep_json_stringify_overflows_the_js_stack() {
    let program =
        "let a = [];\nfor (let i = 0; i < 100000; i++) a = [a];\nreturn JSON.stringify(a).length;";
    assert_eq!(failure(&run(program).await).0, CodeErrorKind::StackOverflow);
}

#[tokio::test]
async fn deep_proxy_chain_is_contained() {
    // CVE-2023-31922: 131,072 nested proxies + Array.isArray recursed in C.
    let program = "let p = {};\nfor (let i = 0; i < 131072; i++) p = new Proxy(p, {});\nreturn Array.isArray(p);";
    assert_eq!(failure(&run(program).await).0, CodeErrorKind::StackOverflow);
}

#[tokio::test]
async fn deep_completion_values_are_refused_without_host_recursion() {
    let program = "let a = [];\nfor (let i = 0; i < 100000; i++) a = [a];\nreturn a;";
    let result = run(program).await;
    assert_eq!(
        failure(&result),
        (
            CodeErrorKind::InvalidOutput,
            "program completion must be lossless JSON"
        )
    );
    let program = "let a = [];\nfor (let i = 0; i < 1000; i++) a = [a];\nreturn a;";
    assert!(run(program).await.value.is_some(), "1,000 levels cross");
}

#[tokio::test]
async fn cancelling_a_cpu_bound_program_ends_it_within_a_second() {
    let config = QuickJsConfig {
        cpu_budget: Duration::from_secs(60),
        wall_clock: Duration::from_secs(60),
        ..config()
    };
    let runtime = runtime_with(config);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    let started = binding(move |_| {
        let tx = started_tx.lock().unwrap().take();
        async move {
            if let Some(tx) = tx {
                let _ = tx.send(());
            }
            Ok(json!(null))
        }
    });
    let request = request(
        "await tools.started({});\nwhile (true) {}",
        vec![tools(vec![("started", started)])],
    );
    let cancel = request.cancel.clone();
    let handle = tokio::spawn(dsh_tools_runtime::code::CodeRuntime::run(&runtime, request));
    started_rx.await.expect("the program started");
    let cancelled = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        cancelled.elapsed() <= Duration::from_secs(1),
        "ended {:?} after cancel",
        cancelled.elapsed()
    );
    assert_eq!(failure(&result), (CodeErrorKind::Abort, "run cancelled"));
}

#[tokio::test]
async fn a_cancelled_request_never_runs() {
    let called = Arc::new(Mutex::new(false));
    let seen = called.clone();
    let probe = binding(move |_| {
        *seen.lock().unwrap() = true;
        async { Ok(json!(null)) }
    });
    let request = request(
        "await tools.probe({}); return 1;",
        vec![tools(vec![("probe", probe)])],
    );
    request.cancel.cancel();
    let result = dsh_tools_runtime::code::CodeRuntime::run(&runtime(), request)
        .await
        .unwrap();
    assert_eq!(failure(&result), (CodeErrorKind::Abort, "run cancelled"));
    assert!(!*called.lock().unwrap());
}

#[tokio::test]
async fn dropping_the_run_future_stops_the_program() {
    let config = QuickJsConfig {
        cpu_budget: Duration::from_secs(60),
        wall_clock: Duration::from_secs(60),
        ..config()
    };
    let runtime = runtime_with(config);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    let started = binding(move |_| {
        let tx = started_tx.lock().unwrap().take();
        async move {
            let _ = tx.map(|tx| tx.send(()));
            Ok(json!(null))
        }
    });
    let future = dsh_tools_runtime::code::CodeRuntime::run(
        &runtime,
        request(
            "await tools.started({});\nwhile (true) {}",
            vec![tools(vec![("started", started)])],
        ),
    );
    let handle = tokio::spawn(future);
    started_rx.await.unwrap();
    handle.abort();
    let _ = handle.await;
    // The runtime keeps working (the abandoned program was told to stop).
    assert_eq!(
        value(&run_on(&runtime, "return 2;", vec![]).await),
        &json!(2)
    );
}
