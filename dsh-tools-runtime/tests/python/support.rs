//! Helpers of the Python runtime tests.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use dsh_tools_runtime::code::monty::{Isolation, MontyConfig, MontyRuntime, WorkerConfig};
use dsh_tools_runtime::code::{
    BindingFn, BindingNamespace, CodeErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    ErrorClass,
};
use serde_json::Value;

/// The worker executable of this crate.
pub const WORKER: &str = env!("CARGO_BIN_EXE_dsh-monty-worker");

/// Limits for tests: small time budgets so hostile programs end quickly.
pub fn config() -> MontyConfig {
    MontyConfig {
        cpu_budget: Duration::from_millis(500),
        wall_clock: Duration::from_secs(10),
        ..MontyConfig::default()
    }
}

/// The same limits, in worker processes with a 32 MiB memory limit.
pub fn worker_config() -> MontyConfig {
    MontyConfig {
        isolation: Isolation::Workers(WorkerConfig {
            memory_limit_bytes: 32 << 20,
            workers: 1,
            ..WorkerConfig::new(WORKER, Vec::<String>::new())
        }),
        ..config()
    }
}

pub fn runtime_with(config: MontyConfig) -> MontyRuntime {
    MontyRuntime::new(config).expect("a valid config")
}

pub fn runtime() -> MontyRuntime {
    runtime_with(config())
}

/// A binding from an async closure.
pub fn binding<F, Fut>(f: F) -> BindingFn
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, String>> + Send + 'static,
{
    Arc::new(move |args| Box::pin(f(args)))
}

/// The `tools` namespace with the `ToolCallError` class.
pub fn tools(functions: Vec<(&str, BindingFn)>) -> BindingNamespace {
    BindingNamespace {
        global: "tools".to_owned(),
        functions: functions
            .into_iter()
            .map(|(n, f)| (n.to_owned(), f))
            .collect(),
        error_class: Some(ErrorClass {
            name: "ToolCallError".to_owned(),
            member_name_property: "toolName".to_owned(),
        }),
    }
}

/// `echo` resolves with its arguments, `fail` fails with `disk on fire`.
pub fn echo_and_fail() -> BindingNamespace {
    let echo = binding(|args| async move { Ok(args) });
    let fail = binding(|_| async { Err("disk on fire".to_owned()) });
    tools(vec![("echo", echo), ("fail", fail)])
}

pub fn request(program: &str, bindings: Vec<BindingNamespace>) -> CodeRunRequest {
    CodeRunRequest::new(program, bindings)
}

/// Runs a program; a hang fails the test after 60 s instead of blocking the suite.
pub async fn run_on(
    runtime: &MontyRuntime,
    program: &str,
    bindings: Vec<BindingNamespace>,
) -> CodeRunResult {
    let run = runtime.run(request(program, bindings));
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run ended")
        .expect("valid bindings")
}

pub async fn run(program: &str) -> CodeRunResult {
    run_on(&runtime(), program, vec![echo_and_fail()]).await
}

/// The completion value of a run that must succeed.
pub fn value(result: &CodeRunResult) -> &Value {
    assert!(result.error.is_none(), "the run failed: {result:?}");
    result.value.as_ref().expect("a completion value")
}

/// The failure of a run that must fail with `kind`.
pub fn failure(result: &CodeRunResult, kind: CodeErrorKind) -> &str {
    let error = result
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("the run succeeded: {result:?}"));
    assert_eq!(error.kind, kind, "{error:?}");
    &error.message
}
