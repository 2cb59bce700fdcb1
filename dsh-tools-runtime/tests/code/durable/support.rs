//! A Code Mode host with counted tools, a policy that asks for `write*`, and a durability.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput, ToolExecutionResult};
use dsh_tools::present::ToolCallView;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::durable::{
    ContinuationError, ContinuationKey, Decision, Durability, MemorySpentStore, Resume, RunOutcome,
};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeEventSink, CodeRuntime};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, Scope, ToolRegistry};
use serde_json::{Value, json};

/// Every tool body run, in order: (tool, arguments).
pub type Runs = Arc<Mutex<Vec<(String, Value)>>>;

#[derive(Default)]
pub struct Events(pub Mutex<Vec<CodeDispatchEvent>>);

impl CodeEventSink for Events {
    fn append(&self, event: CodeDispatchEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}

impl Events {
    /// `type` and sub-call id (or pending ids) of every event, in order.
    pub fn summary(&self) -> Vec<String> {
        let events = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        events
            .into_iter()
            .map(|event| {
                let json = serde_json::to_value(&event).unwrap();
                let kind = json["type"].as_str().unwrap().to_owned();
                let id = json
                    .get("subCallId")
                    .cloned()
                    .or_else(|| json.get("pending").cloned())
                    .unwrap_or(Value::Null);
                format!("{kind} {}", id.to_string().replace('"', ""))
            })
            .collect()
    }
}

pub struct Host {
    pub registry: ToolRegistry,
    pub agent: Scope,
    pub durability: Durability,
    pub runs: Runs,
    pub events: Arc<Events>,
}

/// A tool recording each body run (it sleeps `sleep_ms` first when the arguments say so).
pub fn counted(
    name: &str,
    runs: &Runs,
    parallel: bool,
    answer: fn(&Value) -> Value,
) -> ToolDefinition {
    let (runs, tool) = (Arc::clone(runs), name.to_owned());
    ToolDefinition::builder(name)
        .description("A counted tool.")
        .parameters_json(json!({"type": "object"}))
        .concurrency_safe(parallel)
        .present_call(|args| Some(ToolCallView::generic(format!("card {}", args["path"]))))
        .execute(move |args, _| {
            let (runs, tool) = (Arc::clone(&runs), tool.clone());
            async move {
                runs.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((tool, (*args).clone()));
                if let Some(ms) = args["sleep_ms"].as_u64() {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                Ok(answer(&args))
            }
        })
        .build()
        .unwrap()
}

impl Host {
    pub fn new() -> Self {
        let durability = Durability::new(
            ContinuationKey::generate(),
            Arc::new(MemorySpentStore::default()),
        );
        Self::with(durability)
    }

    /// Another host (as another process would build it) sharing `durability`.
    pub fn with(durability: Durability) -> Self {
        let runtime = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
        Self::with_runtime(durability, Arc::new(runtime))
    }

    /// The same, running programs on `runtime`.
    pub fn with_runtime(durability: Durability, runtime: Arc<dyn CodeRuntime>) -> Self {
        let registry = ToolRegistry::with_config(RegistryConfig {
            mode: PresentationMode::Code,
            ..RegistryConfig::default()
        });
        CodeMode::new(runtime).install(&registry).unwrap();
        let events = Arc::new(Events::default());
        registry.set_code_event_sink(events.clone());
        let runs: Runs = Arc::default();
        registry
            .register(counted(
                "read",
                &runs,
                true,
                |args| json!({"read": args["n"]}),
            ))
            .unwrap()
            .keep();
        registry
            .register(counted("write", &runs, true, |args| {
                json!(format!("wrote {}", args["path"].as_str().unwrap_or("?")))
            }))
            .unwrap()
            .keep();
        registry
            .on_pre_execute(pre_execute_fn(|exec, next| async move {
                if exec.name.starts_with("write") {
                    PreToolDecision::Ask {
                        reason: Some("writes need a person".into()),
                    }
                } else {
                    next.run().await
                }
            }))
            .keep();
        let agent = registry.new_scope();
        Self {
            registry,
            agent,
            durability,
            runs,
            events,
        }
    }

    /// How many times `tool`'s body ran.
    pub fn runs_of(&self, tool: &str) -> usize {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(name, _)| name == tool)
            .count()
    }

    pub fn input(&self, program: &str) -> ToolExecutionInput {
        let mut input = ToolExecutionInput::new(
            "run-1",
            "run_code",
            json!({"code": program, "description": "A durable test program"}),
        );
        input.agent = Some(self.agent.id());
        input
    }

    pub async fn start(&self, program: &str) -> RunOutcome {
        let run = self
            .registry
            .run_code_suspendable(self.input(program), &self.durability);
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run ended")
    }

    pub async fn resume(
        &self,
        continuation: &str,
        decision: Decision,
        suspend: bool,
    ) -> Result<RunOutcome, ContinuationError> {
        let mut resume = Resume::new(decision).for_agent(self.agent.id());
        if suspend {
            resume = resume.suspendable();
        }
        let run = self
            .registry
            .resume_code(continuation, resume, &self.durability);
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run ended")
    }
}

/// The continuation and pending calls of a suspension (panics otherwise).
#[track_caller]
pub fn suspended(
    outcome: RunOutcome,
) -> (String, Vec<dsh_tools_runtime::code::durable::PendingCall>) {
    match outcome {
        RunOutcome::Suspended {
            continuation,
            pending,
        } => (continuation, pending),
        RunOutcome::Completed(result) => panic!("expected a suspension: {result:?}"),
    }
}

/// The result of a completed run (panics otherwise).
#[track_caller]
pub fn completed(outcome: RunOutcome) -> ToolExecutionResult {
    match outcome {
        RunOutcome::Completed(result) => result,
        RunOutcome::Suspended { pending, .. } => panic!("expected completion: {pending:?}"),
    }
}

/// The `run_code` value `{logs, result}` of a successful run (panics otherwise).
#[track_caller]
pub fn value(outcome: RunOutcome) -> Value {
    let result = completed(outcome);
    result
        .value()
        .cloned()
        .unwrap_or_else(|| panic!("expected success: {result:?}"))
}

/// The error message of a failed run (panics otherwise).
#[track_caller]
pub fn failure(outcome: RunOutcome) -> String {
    let result = completed(outcome);
    assert!(result.is_error(), "expected a failure: {result:?}");
    result.content()[0].as_text().unwrap().to_owned()
}
