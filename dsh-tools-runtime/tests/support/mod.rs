//! Shared fixtures of the runtime's integration tests: tools whose bodies count their runs, a
//! gated tool the test releases, a scripted approval service, a stage recorder, a result
//! collector and small constructors for inputs, hooks and expected wire results.
#![allow(dead_code, reason = "each test binary uses a subset of the fixtures")]

#[cfg(feature = "code-mode")]
pub(crate) mod scripted_runtime;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    ExecutionToken, PostToolDecision, PreToolDecision, ToolExecutionInput, ToolExecutionResult,
};
use dsh_tools::{ContentBlock, ContextMessage, ToolBuilder, ToolDefinition, ToolError};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::hooks::{
    ExecuteWrapperFn, PostExecuteFn, PreExecuteFn, execute_wrapper_fn, post_execute_fn,
    pre_execute_fn,
};
use dsh_tools_runtime::{Registration, Scope, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Installs Code Mode (the QuickJS sandbox) on `registry`: what collapses a `code` scope's
/// direct calls and holds `run_code`. Nothing without the `code-mode` feature.
pub(crate) fn install_code_mode(registry: &ToolRegistry) {
    #[cfg(feature = "code-mode")]
    dsh_tools_runtime::code::CodeMode::new(Arc::new(
        dsh_tools_runtime::code::quickjs::QuickJsRuntime::default(),
    ))
    .install(registry)
    .expect("Code Mode installs");
    #[cfg(not(feature = "code-mode"))]
    let _ = registry;
}

// ---------------------------------------------------------------------------------------------
// Tools

/// A builder with the name and a description filled in.
pub(crate) fn base(name: &str) -> ToolBuilder {
    ToolDefinition::builder(name).description(format!("The {name} tool."))
}

/// A tool definition plus the number of times its body ran.
#[derive(Clone)]
pub(crate) struct Counted {
    pub(crate) def: ToolDefinition,
    runs: Arc<AtomicUsize>,
}

impl Counted {
    /// How many times the body was invoked.
    pub(crate) fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// Builds a counted tool from `builder` and a body producing the canonical value.
pub(crate) fn counted_with(
    builder: ToolBuilder,
    body: impl Fn(Arc<Value>) -> Result<Value, ToolError> + Send + Sync + 'static,
) -> Counted {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let body = Arc::new(body);
    let def = builder
        .execute(move |args, _ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            let outcome = body(args);
            async move { outcome }
        })
        .build()
        .expect("fixture tool builds");
    Counted { def, runs }
}

/// A tool whose body counts its runs and returns the string `"<name> ran"`.
pub(crate) fn counted(name: &str) -> Counted {
    let value = json!(format!("{name} ran"));
    counted_with(base(name), move |_| Ok(value.clone()))
}

/// A plain tool returning `"<name> ran"`.
pub(crate) fn tool(name: &str) -> ToolDefinition {
    counted(name).def
}

/// The names of `defs`, in order.
pub(crate) fn names(defs: &[ToolDefinition]) -> Vec<String> {
    defs.iter().map(|d| d.name().to_owned()).collect()
}

/// Registers `def` globally for the registry's lifetime.
pub(crate) fn keep(registry: &ToolRegistry, def: ToolDefinition) {
    registry.register(def).expect("registers").keep();
}

/// Registers `def` in `scope` for the scope's lifetime.
pub(crate) fn keep_in(scope: &Scope, def: ToolDefinition) {
    scope.register(def).expect("registers in scope").keep();
}

/// The test's side of a gated tool: the body signals `entered`, then waits for `release`.
#[derive(Clone)]
pub(crate) struct Gate {
    pub(crate) entered: Arc<Notify>,
    pub(crate) release: Arc<Notify>,
}

/// A counted tool whose body announces itself, waits until the test releases it, then returns
/// `outcome`.
pub(crate) fn gated(name: &str, outcome: Result<Value, ToolError>) -> (Counted, Gate) {
    let gate = Gate {
        entered: Arc::new(Notify::new()),
        release: Arc::new(Notify::new()),
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, g) = (Arc::clone(&runs), gate.clone());
    let def = base(name)
        .execute(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            let (g, outcome) = (g.clone(), outcome.clone());
            async move {
                g.entered.notify_one();
                g.release.notified().await;
                outcome
            }
        })
        .build()
        .expect("gated tool builds");
    (Counted { def, runs }, gate)
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// A top-level call `call-1` of `name` with `{}` arguments.
pub(crate) fn call(name: &str) -> ToolExecutionInput {
    ToolExecutionInput::new("call-1", name, json!({}))
}

/// A top-level call with the given arguments.
pub(crate) fn call_with(name: &str, arguments: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("call-1", name, arguments)
}

/// A call made by `scope`'s agent.
pub(crate) fn call_as(name: &str, scope: &Scope) -> ToolExecutionInput {
    ToolExecutionInput {
        agent: Some(scope.id()),
        ..call(name)
    }
}

/// A nested call (it has a parent execution), e.g. a Code Mode sub-call.
pub(crate) fn nested(input: ToolExecutionInput) -> ToolExecutionInput {
    ToolExecutionInput {
        parent: Some(ExecutionToken::mint()),
        ..input
    }
}

/// Runs `input` on a spawned task (so the test can cancel or release it meanwhile).
pub(crate) fn spawn_execute(
    registry: &ToolRegistry,
    input: ToolExecutionInput,
) -> tokio::task::JoinHandle<ToolExecutionResult> {
    let registry = registry.clone();
    tokio::spawn(async move { registry.execute(input).await })
}

// ---------------------------------------------------------------------------------------------
// Results

/// The wire form of a result (`isError`, `value`/`error`, `content`, `meta`, ...).
pub(crate) fn wire(result: &ToolExecutionResult) -> Value {
    serde_json::to_value(result).expect("results serialize")
}

/// The wire form of a plain failure (no `info`): `Error: <message>`.
pub(crate) fn failure(message: &str) -> Value {
    json!({
        "isError": true,
        "error": {"message": message},
        "content": [{"type": "text", "text": format!("Error: {message}")}],
    })
}

/// The wire form of a structured harness failure with `info: {name, code}`.
pub(crate) fn harness_failure(message: &str, name: &str, code: &str) -> Value {
    json!({
        "isError": true,
        "error": {"message": message, "info": {"name": name, "code": code}},
        "content": [{"type": "text", "text": format!("Error: {message}")}],
    })
}

/// `ABORTED_BEFORE_DISPATCH` (`docs/CONTRACTS.md`, "Cancellation results").
pub(crate) fn aborted_before_dispatch() -> Value {
    harness_failure(
        "tool call aborted before dispatch",
        "AbortError",
        "ABORTED_BEFORE_DISPATCH",
    )
}

/// `ABORTED` (`docs/CONTRACTS.md`, "Cancellation results").
pub(crate) fn aborted() -> Value {
    harness_failure("tool call aborted", "AbortError", "ABORTED")
}

/// The wire form of a success whose value is the string `text`, rendered as one text block.
pub(crate) fn text_success(text: &str) -> Value {
    json!({"isError": false, "value": text, "content": [{"type": "text", "text": text}]})
}

/// The texts of the result's content blocks.
pub(crate) fn texts(result: &ToolExecutionResult) -> Vec<String> {
    result
        .content()
        .iter()
        .map(|b| b.as_text().unwrap_or("<non-text>").to_owned())
        .collect()
}

/// The error code of a failure, if it has structured info.
pub(crate) fn code(result: &ToolExecutionResult) -> Option<String> {
    result
        .error()
        .and_then(|e| e.info())
        .map(|i| i.code.to_string())
}

/// A user context message with one text block.
pub(crate) fn context(text: &str) -> ContextMessage {
    ContextMessage {
        content: vec![ContentBlock::text(text)],
        source: None,
    }
}

/// The first text of each attached context message.
pub(crate) fn context_texts(result: &ToolExecutionResult) -> Vec<String> {
    result
        .additional_contexts()
        .iter()
        .map(|c| c.content[0].as_text().unwrap_or("<non-text>").to_owned())
        .collect()
}

/// An unknown content block `{"type": <type>, ...extra}`.
pub(crate) fn unknown_block(block: Value) -> ContentBlock {
    ContentBlock::Unknown(block.as_object().cloned().expect("an object block"))
}

/// A JSON `-0.0`: not lossless.
pub(crate) fn negative_zero() -> Value {
    Value::Number(serde_json::Number::from_f64(-0.0).expect("finite"))
}

// ---------------------------------------------------------------------------------------------
// Recording

/// An ordered log of labels pushed by hooks, bodies and observers.
#[derive(Clone, Default)]
pub(crate) struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    /// Appends a label.
    pub(crate) fn push(&self, label: impl Into<String>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(label.into());
    }

    /// The labels so far.
    pub(crate) fn entries(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Takes the labels so far, leaving the log empty.
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Every result notification: `(call id, result)` in delivery order.
#[derive(Clone, Default)]
pub(crate) struct ResultLog(Arc<Mutex<Vec<(String, ToolExecutionResult)>>>);

impl ResultLog {
    /// Observes every call of `registry`.
    pub(crate) fn observe(registry: &ToolRegistry) -> (Self, Registration) {
        let log = Self::default();
        let sink = log.clone();
        let handle = registry.on_result(move |exec, result| sink.record(&exec.call_id, result));
        (log, handle)
    }

    /// Observes the calls of `scope` (and of its descendants).
    pub(crate) fn observe_scope(scope: &Scope) -> (Self, Registration) {
        let log = Self::default();
        let sink = log.clone();
        let handle = scope.on_result(move |exec, result| sink.record(&exec.call_id, result));
        (log, handle)
    }

    fn record(&self, call_id: &str, result: &ToolExecutionResult) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((call_id.to_owned(), result.clone()));
    }

    /// The call ids notified, in order.
    pub(crate) fn call_ids(&self) -> Vec<String> {
        self.entries().into_iter().map(|(id, _)| id).collect()
    }

    /// Every notification.
    pub(crate) fn entries(&self) -> Vec<(String, ToolExecutionResult)> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

// ---------------------------------------------------------------------------------------------
// Hooks

/// A pre-execute policy that records `label` and continues.
pub(crate) fn recording_pre(recorder: &Recorder, label: &str) -> PreExecuteFn {
    let (recorder, label) = (recorder.clone(), label.to_owned());
    pre_execute_fn(move |_, next| {
        recorder.push(label.clone());
        next.run()
    })
}

/// A pre-execute policy that always decides `decision` (never calling `next`).
pub(crate) fn deciding_pre(decision: PreToolDecision) -> PreExecuteFn {
    pre_execute_fn(move |_, _| std::future::ready(decision.clone()))
}

/// An execute wrapper that records `<label>:before` / `<label>:after` around the rest.
pub(crate) fn recording_wrapper(recorder: &Recorder, label: &str) -> ExecuteWrapperFn {
    let (recorder, label) = (recorder.clone(), label.to_owned());
    execute_wrapper_fn(move |dispatch, next| {
        let (recorder, label) = (recorder.clone(), label.clone());
        async move {
            recorder.push(format!("{label}:before"));
            let result = next.run(dispatch).await;
            recorder.push(format!("{label}:after"));
            result
        }
    })
}

/// An execute wrapper that never calls `next` and returns `result` instead.
pub(crate) fn replacing_wrapper(result: ToolExecutionResult) -> ExecuteWrapperFn {
    execute_wrapper_fn(move |_, _| std::future::ready(result.clone()))
}

/// A post-execute policy that records `label` and continues.
pub(crate) fn recording_post(recorder: &Recorder, label: &str) -> PostExecuteFn {
    let (recorder, label) = (recorder.clone(), label.to_owned());
    post_execute_fn(move |_, _, next| {
        recorder.push(label.clone());
        next.run()
    })
}

/// A post-execute policy that always decides `decision`.
pub(crate) fn deciding_post(decision: PostToolDecision) -> PostExecuteFn {
    post_execute_fn(move |_, _, _| std::future::ready(decision.clone()))
}

// ---------------------------------------------------------------------------------------------
// Approval

/// What the scripted approval service does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    /// Answers with this outcome.
    Answer(ApprovalOutcome),
    /// Cancels the caller's token (the user interrupted the turn), then answers `Cancelled`.
    InterruptTurn,
    /// Panics before returning a future.
    PanicNow,
    /// Returns a future that panics.
    PanicLater,
}

/// An approval service that follows a script and records every request.
pub(crate) struct ScriptedApproval {
    script: Script,
    requests: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApproval {
    /// Mounts a service following `script` on `registry`.
    pub(crate) fn mount(registry: &ToolRegistry, script: Script) -> Arc<Self> {
        let service = Arc::new(Self {
            script,
            requests: Mutex::new(Vec::new()),
        });
        registry.set_approval(Arc::clone(&service) as Arc<dyn ApprovalService>);
        service
    }

    /// Every request received.
    pub(crate) fn requests(&self) -> Vec<ApprovalRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ApprovalService for ScriptedApproval {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        match self.script {
            Script::Answer(outcome) => Box::pin(std::future::ready(outcome)),
            Script::InterruptTurn => {
                request.cancel.cancel();
                Box::pin(std::future::ready(ApprovalOutcome::Cancelled))
            }
            Script::PanicNow => panic!("approval channel exploded"),
            Script::PanicLater => Box::pin(async { panic!("approval future exploded") }),
        }
    }
}
