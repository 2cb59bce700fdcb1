//! Code Mode end to end: the registry, the `run_code` bridge and the real QuickJS sandbox
//! together — what only shows when all three run (the wall clock around approval waits).
#![cfg(feature = "code-mode")]

use std::sync::Arc;
use std::time::Duration;

use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput, ToolExecutionResult};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

const WALL_CLOCK: Duration = Duration::from_millis(300);
/// Longer than the wall clock by a wide margin.
const SLOW: Duration = Duration::from_millis(900);

/// A person who takes [`SLOW`] to approve.
struct SlowPerson;

impl ApprovalService for SlowPerson {
    fn request(&self, _: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        Box::pin(async {
            tokio::time::sleep(SLOW).await;
            ApprovalOutcome::AllowedOnce
        })
    }
}

/// A tool whose body takes `work`.
fn deploy(work: Duration) -> ToolDefinition {
    ToolDefinition::builder("deploy")
        .description("Deploys.")
        .execute(move |_, _| async move {
            tokio::time::sleep(work).await;
            Ok(json!("deployed"))
        })
        .build()
        .unwrap()
}

/// A code-mode registry on QuickJS with a 300 ms wall clock; `ask` makes `deploy` need approval.
fn registry(work: Duration, ask: bool) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    registry.register(deploy(work)).unwrap().keep();
    let config = QuickJsConfig {
        wall_clock: WALL_CLOCK,
        ..QuickJsConfig::default()
    };
    CodeMode::new(Arc::new(QuickJsRuntime::new(config).unwrap()))
        .install(&registry)
        .unwrap();
    registry.set_approval(Arc::new(SlowPerson));
    if ask {
        registry
            .on_pre_execute(pre_execute_fn(|_, _| async {
                PreToolDecision::Ask { reason: None }
            }))
            .keep();
    }
    registry
}

async fn run_deploy(registry: &ToolRegistry) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        "c1",
        "run_code",
        json!({"code": "return await tools.deploy({});", "description": "Deploy"}),
    );
    input.agent = Some(registry.new_scope().id());
    registry.execute(input).await
}

fn failure_text(result: &ToolExecutionResult) -> &str {
    assert!(result.is_error(), "expected a failure, got {result:?}");
    result.content()[0].as_text().unwrap()
}

#[tokio::test]
async fn an_approval_wait_does_not_spend_the_wall_clock() {
    let result = run_deploy(&registry(Duration::ZERO, true)).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.value().unwrap()["result"], "deployed");
}

#[tokio::test]
async fn tool_work_does_spend_the_wall_clock() {
    let result = run_deploy(&registry(SLOW, false)).await;
    assert_eq!(
        failure_text(&result),
        "Error: code run failed (timeout): wall-clock ceiling reached (300ms)"
    );
}

#[tokio::test]
async fn the_clock_runs_again_once_the_approval_is_answered() {
    let result = run_deploy(&registry(SLOW, true)).await;
    assert_eq!(
        failure_text(&result),
        "Error: code run failed (timeout): wall-clock ceiling reached (300ms)"
    );
}

#[tokio::test]
async fn a_panicking_tool_called_from_a_program_is_a_catchable_tool_call_error() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let explode = ToolDefinition::builder("explode")
        .description("Panics.")
        .execute(|_, _| async { panic!("index out of bounds") })
        .build()
        .unwrap();
    registry.register(explode).unwrap().keep();
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).unwrap(),
    ))
    .install(&registry)
    .unwrap();
    let program = "try { await tools.explode({}); return 'no error'; }\n\
                   catch (e) { return [e instanceof ToolCallError, e.toolName, e.message]; }";
    let input = ToolExecutionInput::new(
        "c2",
        "run_code",
        json!({"code": program, "description": "Explode"}),
    );
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    let caught = &result.value().unwrap()["result"];
    assert_eq!(caught[0], true);
    assert_eq!(caught[1], "explode");
    assert!(
        caught[2].as_str().unwrap().contains("index out of bounds"),
        "{caught}"
    );
    // The registry still works afterwards.
    assert!(!run_deploy_like(&registry).await.is_error());
}

async fn run_deploy_like(registry: &ToolRegistry) -> ToolExecutionResult {
    let input = ToolExecutionInput::new(
        "c3",
        "run_code",
        json!({"code": "return 1;", "description": "One"}),
    );
    registry.execute(input).await
}

/// A code-mode registry on QuickJS with a 100 ms compute budget and a 5 s wall clock, holding
/// `crunch`: a tool whose body spins for 60 ms of CPU time without yielding and reports the
/// name of the thread it ran on.
fn crunching_registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let crunch = ToolDefinition::builder("crunch")
        .description("Spins the CPU for a while.")
        .execute(|_, _| async {
            let start = std::time::Instant::now();
            let mut x = 0u64;
            while start.elapsed() < Duration::from_millis(60) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            let thread = std::thread::current().name().unwrap_or("").to_owned();
            Ok(json!({ "thread": thread }))
        })
        .build()
        .unwrap();
    registry.register(crunch).unwrap().keep();
    let config = QuickJsConfig {
        cpu_budget: Duration::from_millis(100),
        wall_clock: Duration::from_secs(5),
        ..QuickJsConfig::default()
    };
    CodeMode::new(Arc::new(QuickJsRuntime::new(config).unwrap()))
        .install(&registry)
        .unwrap();
    registry
}

async fn run_program(registry: &ToolRegistry, code: &str) -> ToolExecutionResult {
    let input = ToolExecutionInput::new(
        "c1",
        "run_code",
        json!({"code": code, "description": "Crunch"}),
    );
    registry.execute(input).await
}

/// The sandbox thread runs the run's sub-call lane itself (no hand-off to the host runtime
/// per call), yet tool work there is the host's: it does not spend the program's compute
/// budget. Four 60 ms tool calls are 240 ms of CPU on the sandbox thread, over twice the
/// program's 100 ms budget.
#[tokio::test]
async fn tool_work_on_the_sandbox_thread_is_not_charged_to_the_program() {
    let registry = crunching_registry();
    let result = run_program(
        &registry,
        "const threads = [];\n\
         for (let i = 0; i < 4; i++) threads.push((await tools.crunch({}) as { thread: string }).thread);\n\
         return threads;",
    )
    .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        result.value().unwrap()["result"],
        json!(["dsh-quickjs", "dsh-quickjs", "dsh-quickjs", "dsh-quickjs"])
    );
}

/// The program's own computing still spends its budget, tool calls or not.
#[tokio::test]
async fn the_program_still_spends_its_own_budget() {
    let registry = crunching_registry();
    let result = run_program(&registry, "await tools.crunch({});\nwhile (true) {}").await;
    assert_eq!(
        failure_text(&result),
        "Error: code run failed (timeout): compute budget exhausted (100ms of CPU time)"
    );
}
