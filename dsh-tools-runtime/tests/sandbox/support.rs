//! Helpers of the sandbox tests.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{
    BindingFn, BindingNamespace, CodeErrorKind, CodeRunRequest, CodeRunResult, CodeRuntime,
    ErrorClass,
};
use serde_json::Value;

/// Limits for tests: small time budgets so hostile programs end quickly.
pub fn config() -> QuickJsConfig {
    QuickJsConfig {
        cpu_budget: Duration::from_millis(300),
        wall_clock: Duration::from_secs(10),
        ..QuickJsConfig::default()
    }
}

pub fn runtime_with(config: QuickJsConfig) -> QuickJsRuntime {
    QuickJsRuntime::new(config).expect("a valid config")
}

pub fn runtime() -> QuickJsRuntime {
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

/// The `tools` namespace with the `ToolCallError` class (member `toolName`).
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

pub fn request(program: &str, bindings: Vec<BindingNamespace>) -> CodeRunRequest {
    CodeRunRequest::new(program, bindings)
}

/// Runs a program; a hang fails the test after 60 s instead of blocking the suite.
pub async fn run_on(
    runtime: &QuickJsRuntime,
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
    run_on(&runtime(), program, Vec::new()).await
}

pub async fn run_tools(program: &str, functions: Vec<(&str, BindingFn)>) -> CodeRunResult {
    run_on(&runtime(), program, vec![tools(functions)]).await
}

/// The failure's kind and message (panics on success).
#[track_caller]
pub fn failure(result: &CodeRunResult) -> (CodeErrorKind, &str) {
    let error = result
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected a failure: {result:?}"));
    (error.kind, error.message.as_str())
}

/// The completion value (panics on failure).
#[track_caller]
pub fn value(result: &CodeRunResult) -> &Value {
    assert!(result.error.is_none(), "expected success: {result:?}");
    result
        .value
        .as_ref()
        .unwrap_or_else(|| panic!("expected a value: {result:?}"))
}

/// Counts live instances (drop probes for leak checks).
#[derive(Debug)]
pub struct Probe(Arc<AtomicUsize>);

impl Probe {
    pub fn new(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Self(live.clone())
    }
}

impl Clone for Probe {
    fn clone(&self) -> Self {
        Self::new(&self.0)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
