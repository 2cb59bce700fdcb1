//! The runtime as a whole: concurrent runs, sandbox threads, configuration.

use std::time::Duration;

use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::strip::SourceLimits;
use dsh_tools_runtime::code::{CodeErrorKind, CodeRuntime};
use serde_json::json;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_share_a_runtime_without_cross_talk() {
    let runtime = runtime();
    let echo = binding(|args| async move {
        tokio::task::yield_now().await;
        Ok(args)
    });
    let runs = (0..32).map(|n| {
        let runtime = runtime.clone();
        let echo = echo.clone();
        tokio::spawn(async move {
            let program = format!(
                "let sum = 0;\nfor (let i = 0; i < 20; i++) sum += (await tools.echo({{ n: {n}, i }})).n;\nreturn sum;"
            );
            let result = run_on(&runtime, &program, vec![tools(vec![("echo", echo)])]).await;
            (n, result)
        })
    });
    for run in runs {
        let (n, result) = run.await.expect("the run task");
        assert_eq!(value(&result), &json!(n * 20));
    }
}

#[tokio::test]
async fn without_warm_sandboxes_every_run_builds_its_own() {
    let runtime = runtime_with(QuickJsConfig {
        warm_sandboxes: 0,
        ..config()
    });
    for n in 0..5 {
        let result = run_on(&runtime, &format!("return {n} * 2;"), vec![]).await;
        assert_eq!(value(&result), &json!(n * 2));
    }
}

#[tokio::test]
async fn the_runtime_describes_itself() {
    let runtime = QuickJsRuntime::default();
    assert_eq!(
        (runtime.language(), runtime.isolation()),
        ("typescript", "quickjs")
    );
    assert_eq!(runtime.config(), &QuickJsConfig::default());
}

#[test]
fn unusable_configurations_are_refused() {
    let cases: [(QuickJsConfig, &str); 6] = [
        (
            QuickJsConfig {
                memory_limit_bytes: 1000,
                ..Default::default()
            },
            "config.memory_limit_bytes",
        ),
        (
            QuickJsConfig {
                max_stack_bytes: 0,
                ..Default::default()
            },
            "config.max_stack_bytes",
        ),
        (
            QuickJsConfig {
                cpu_budget: Duration::ZERO,
                ..Default::default()
            },
            "config.cpu_budget",
        ),
        (
            QuickJsConfig {
                max_calls_in_flight: 0,
                ..Default::default()
            },
            "config.max_calls_in_flight",
        ),
        (
            QuickJsConfig {
                source: SourceLimits {
                    max_source_bytes: 64,
                    max_depth: 0,
                },
                ..Default::default()
            },
            "config.source.max_depth",
        ),
        (
            QuickJsConfig {
                thread_stack_bytes: 1 << 20,
                ..Default::default()
            },
            "config.thread_stack_bytes",
        ),
    ];
    for (config, key) in cases {
        let error = QuickJsRuntime::new(config).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("dsh-tools-runtime(quickjs): {key} must be")),
            "{error}"
        );
    }
}

#[tokio::test]
async fn programs_can_construct_the_error_class() {
    let noop = binding(|_| async { Ok(json!(null)) });
    let program = "const e = new ToolCallError('made here', 'custom');\n\
                   let called;\n\
                   try { ToolCallError('no new'); } catch (t) { called = t instanceof TypeError; }\n\
                   return [e instanceof ToolCallError, e instanceof Error, e.name, e.message, e.toolName,\n\
                   ToolCallError.name, ToolCallError.prototype.constructor === ToolCallError, called];";
    let result = run_tools(program, vec![("noop", noop)]).await;
    assert_eq!(
        value(&result),
        &json!([
            true,
            true,
            "ToolCallError",
            "made here",
            "custom",
            "ToolCallError",
            true,
            true
        ])
    );
}

#[tokio::test]
async fn a_throwing_binding_future_is_an_ordinary_failure() {
    let slow_fail = binding(|_| async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Err("late failure".to_owned())
    });
    let result = run_tools("await tools.slow({});", vec![("slow", slow_fail)]).await;
    let (kind, message) = failure(&result);
    assert_eq!(kind, CodeErrorKind::Exception);
    assert!(
        message.starts_with("ToolCallError: slow: late failure"),
        "{message}"
    );
}
