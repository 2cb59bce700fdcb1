//! The `run_code` transport and its dispatch bridge (`docs/CONTRACTS.md`, "The run_code tool",
//! "Sub-calls", and stage 2 of "Stages"), driven by a scripted code runtime so the bridge is tested
//! apart from any sandbox.
#![cfg(feature = "code-mode")]

use crate::support;

use std::sync::{Arc, Mutex};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools::{ContentBlock, ToolDefinition, ToolError};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::{
    CodeDispatchEvent, CodeErrorKind, CodeEventSink, CodeRunError, CodeRunRequest, CodeRunResult,
};
use dsh_tools_runtime::code::{DispatchLog, dispatch_log_fn};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};
use support::scripted_runtime::{Program, ScriptedRuntime, find_binding};

/// A run's binding `name` (the test fails without it).
fn binding(request: &CodeRunRequest, name: &str) -> dsh_tools_runtime::code::BindingFn {
    find_binding(request, name).unwrap_or_else(|| panic!("no binding {name}"))
}

fn echo(parallel: bool) -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echo the text.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output_json(json!({"type": "string"}))
        .concurrency_safe(parallel)
        .execute(|args, _| async move { Ok(args["text"].clone()) })
        .build()
        .unwrap()
}

fn failing() -> ToolDefinition {
    ToolDefinition::builder("fail")
        .description("Always fails.")
        .execute(|_, _| async { Err(ToolError::msg("disk on fire")) })
        .build()
        .unwrap()
}

fn code_registry(script: Program) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    registry.register(echo(true)).unwrap().keep();
    registry.register(failing()).unwrap().keep();
    CodeMode::new(Arc::new(ScriptedRuntime(script)))
        .install(&registry)
        .unwrap();
    registry
}

fn run_code_call(id: &str, code: &str) -> ToolExecutionInput {
    ToolExecutionInput::new(
        id,
        "run_code",
        json!({"code": code, "description": "Echo twice"}),
    )
}

fn text(result: &ToolExecutionResult) -> String {
    result.content()[0].as_text().unwrap().to_owned()
}

fn two_echoes() -> Program {
    Arc::new(|request: CodeRunRequest| {
        let echo = binding(&request, "echo");
        Box::pin(async move {
            let (a, b) = tokio::join!(echo(json!({"text": "a"})), echo(json!({"text": "b"})));
            Ok(CodeRunResult {
                value: Some(json!([a.unwrap(), b.unwrap()])),
                logs: vec!["two calls".into()],
                error: None,
            })
        })
    })
}

#[test]
fn the_transport_is_visible_last_in_code_scopes_only() {
    let registry = code_registry(two_echoes());
    let names: Vec<String> = registry
        .visible(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, ["echo", "fail", "run_code"]);
    let agent = registry.new_scope();
    let native = registry.new_scope();
    native.present_as(PresentationMode::Native).unwrap().keep();
    assert!(native.get("run_code").is_none());
    assert!(
        agent
            .get("run_code")
            .unwrap()
            .ptr_eq(&registry.get("run_code", None).unwrap())
    );
    let schema = serde_json::to_value(agent.get("run_code").unwrap().schema()).unwrap();
    assert_eq!(
        schema["parameters"]["required"],
        json!(["code", "description"])
    );
    assert_eq!(
        schema["parameters"]["properties"]["code"]["description"],
        "The program: the body of an async TypeScript function."
    );
    for fragment in [
        "Execute a TypeScript program",
        "BODY of an",
        "`description`",
    ] {
        assert!(
            schema["description"].as_str().unwrap().contains(fragment),
            "{fragment}"
        );
    }
}

#[tokio::test]
async fn model_direct_calls_collapse_and_programs_reach_tools() {
    let registry = code_registry(two_echoes());
    let observed = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&observed);
    registry
        .on_result(move |exec, result| {
            sink.lock().unwrap().push((
                exec.call_id.to_string(),
                exec.parent.is_some(),
                result.is_error(),
            ));
        })
        .keep();
    let direct = registry
        .execute(ToolExecutionInput::new("d1", "echo", json!({"text": "x"})))
        .await;
    assert_eq!(
        text(&direct),
        "Error: unknown tool \"echo\": only `run_code` is callable directly — call `echo` from inside a `run_code` program instead"
    );
    let result = registry
        .execute(run_code_call("c1", "/* scripted */"))
        .await;
    assert_eq!(
        result.value(),
        Some(&json!({"logs": ["two calls"], "result": ["a", "b"]}))
    );
    assert_eq!(text(&result), "two calls\n[\n  \"a\",\n  \"b\"\n]");
    let mut seen = observed.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("c1".to_owned(), false, false),
            ("c1:code:1".to_owned(), true, false),
            ("c1:code:2".to_owned(), true, false),
            ("d1".to_owned(), false, true),
        ]
    );
}

#[tokio::test]
async fn a_failed_sub_call_rejects_the_binding_with_its_message() {
    let registry = code_registry(Arc::new(|request: CodeRunRequest| {
        let fail = binding(&request, "fail");
        Box::pin(async move {
            let error = fail(json!({})).await.unwrap_err();
            Ok(CodeRunResult {
                value: Some(Value::String(error)),
                logs: vec![],
                error: None,
            })
        })
    }));
    let result = registry.execute(run_code_call("c1", "x")).await;
    assert_eq!(text(&result), "disk on fire");
}

#[tokio::test]
async fn a_failed_run_is_code_run_failed_with_captured_output() {
    let registry = code_registry(Arc::new(|_request: CodeRunRequest| {
        Box::pin(async {
            Ok(CodeRunResult {
                value: None,
                logs: vec!["step 1".into(), "step 2".into()],
                error: Some(CodeRunError {
                    kind: CodeErrorKind::Exception,
                    message: "Error: boom at 3:7".into(),
                }),
            })
        })
    }));
    let result = registry.execute(run_code_call("c1", "throw")).await;
    let error = result.error().unwrap();
    assert_eq!(
        error.message(),
        "code run failed (exception): Error: boom at 3:7\nCaptured output:\nstep 1\nstep 2"
    );
    assert_eq!(error.info().unwrap().code, "CODE_RUN_FAILED");
    assert_eq!(error.info().unwrap().name, "CodeRunFailedError");
}

#[tokio::test]
async fn description_and_runtime_are_required() {
    let registry = code_registry(two_echoes());
    let blank = registry
        .execute(ToolExecutionInput::new(
            "c1",
            "run_code",
            json!({"code": "1", "description": "  "}),
        ))
        .await;
    assert_eq!(
        text(&blank),
        "Error: invalid description: expected a non-empty string"
    );
    let missing = registry
        .execute(ToolExecutionInput::new(
            "c2",
            "run_code",
            json!({"code": "1"}),
        ))
        .await;
    assert_eq!(
        text(&missing),
        "Error: invalid arguments: missing required property \"description\""
    );

    // Without Code Mode installed there is no `run_code` to call.
    let bare = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Both,
        ..RegistryConfig::default()
    });
    let no_runtime = bare.execute(run_code_call("c3", "1")).await;
    assert_eq!(text(&no_runtime), "Error: unknown tool \"run_code\"");
}

#[tokio::test]
async fn a_missing_runtime_names_the_scopes_mode() {
    // The registry is native; the agent's scope presents in code mode, and Code Mode is not
    // installed: its prompt says what to do.
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    agent.present_as(PresentationMode::Code).unwrap().keep();
    let error = registry.prompt(Some(agent.id())).unwrap_err();
    assert_eq!(
        error.to_string(),
        "dsh-tools: mode \"code\" requires a code runtime — install Code Mode on the registry (dsh_tools_runtime::code::CodeMode::new(runtime).install(&registry), e.g. with dsh_tools_runtime::code::quickjs::QuickJsRuntime) or use PresentationMode::Native"
    );
    // Once installed, the scope is presented.
    let runtime = code_registry(two_echoes()).code_runtime().unwrap();
    CodeMode::new(runtime).install(&registry).unwrap();
    assert!(registry.prompt(Some(agent.id())).is_ok());
    // Installed once: `run_code` is held.
    let again = CodeMode::new(registry.code_runtime().unwrap()).install(&registry);
    assert_eq!(
        again.unwrap_err().to_string(),
        "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed"
    );
}

#[tokio::test]
async fn calls_queued_when_the_run_settles_are_abandoned() {
    let stash: Arc<Mutex<Vec<Pending>>> = Arc::default();
    let kept = Arc::clone(&stash);
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    // An exclusive tool: the second call must wait for the first, so it is still queued when
    // the program returns without awaiting either.
    registry.register(echo(false)).unwrap().keep();
    CodeMode::new(Arc::new(ScriptedRuntime(Arc::new(
        move |request: CodeRunRequest| {
            let echo = binding(&request, "echo");
            let kept = Arc::clone(&kept);
            Box::pin(async move {
                kept.lock().unwrap().push(echo(json!({"text": "first"})));
                kept.lock().unwrap().push(echo(json!({"text": "second"})));
                Ok(CodeRunResult::default())
            })
        },
    ))))
    .install(&registry)
    .unwrap();
    let result = registry
        .execute(run_code_call("c1", "fire and forget"))
        .await;
    assert_eq!(text(&result), "(run_code completed with no output)");
    let futures: Vec<_> = stash.lock().unwrap().drain(..).collect();
    let mut answers = Vec::new();
    for future in futures {
        answers.push(future.await);
    }
    let abandoned = answers
        .iter()
        .filter(|a| {
            a.as_ref().err().is_some_and(|e| {
                e == "run_code run is over (run_code settled); echo tool call abandoned"
                    || e == "run_code run is over (run_code settled); echo result discarded"
            })
        })
        .count();
    assert_eq!(abandoned, 2, "{answers:?}");
}

/// A binding call the scripted program started but never awaited.
type Pending = BoxFuture<'static, Result<Value, String>>;

struct Collect(Mutex<Vec<CodeDispatchEvent>>);

impl CodeEventSink for Collect {
    fn append(&self, event: CodeDispatchEvent) {
        self.0.lock().unwrap().push(event);
    }
}

#[tokio::test]
async fn sub_calls_of_an_agent_are_logged_as_dispatch_pairs() {
    let registry = code_registry(two_echoes());
    let log = Arc::new(Collect(Mutex::new(Vec::new())));
    registry.set_code_event_sink(log.clone());
    let agent = registry.new_scope();
    let mut input = run_code_call("c7", "x");
    input.agent = Some(agent.id());
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    let events: Vec<Value> = log
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(events.len(), 4);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool/code-dispatch-start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["subCallId"], "c7:code:1");
    assert_eq!(starts[0]["parentCallId"], "c7");
    assert_eq!(starts[0]["rootCallId"], "c7");
    let settled: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool/code-dispatch")
        .collect();
    assert_eq!(settled[1]["subCallId"], "c7:code:2");
    assert_eq!(settled[1]["arguments"], json!({"text": "b"}));
    assert_eq!(
        settled[1]["content"],
        json!([{"type": "text", "text": "b"}])
    );
    assert_eq!(settled[1]["isError"], false);

    // Without an agent there is no log.
    log.0.lock().unwrap().clear();
    registry.execute(run_code_call("c8", "x")).await;
    assert!(log.0.lock().unwrap().is_empty());
}

/// The settled `content` of every `tool/code-dispatch` event, in log order.
fn logged_contents(log: &Collect) -> Vec<Value> {
    log.0
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|e| e["type"] == "tool/code-dispatch")
        .map(|e| e["content"].clone())
        .collect()
}

#[tokio::test]
async fn dispatch_log_listeners_shape_the_logged_content_in_order_and_by_scope() {
    let registry = code_registry(two_echoes());
    let log = Arc::new(Collect(Mutex::new(Vec::new())));
    registry.set_code_event_sink(log.clone());
    let agent = registry.new_scope();
    let other = registry.new_scope();
    // Global first, then the agent's: each sees what the previous returned.
    registry
        .add_hook::<DispatchLog>(dispatch_log_fn(|entry, content| {
            let text = content[0].as_text().unwrap_or_default().to_owned();
            vec![ContentBlock::text(format!("{}={text}", entry.sub_call_id))]
        }))
        .keep();
    agent
        .add_hook::<DispatchLog>(dispatch_log_fn(|entry, content| {
            let text = content[0].as_text().unwrap_or_default().to_owned();
            vec![ContentBlock::text(format!(
                "[{} {}] {text}",
                entry.name, entry.arguments["text"]
            ))]
        }))
        .keep();
    let mut input = run_code_call("c9", "x");
    input.agent = Some(agent.id());
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        logged_contents(&log),
        [
            json!([{"type": "text", "text": "[echo \"a\"] c9:code:1=a"}]),
            json!([{"type": "text", "text": "[echo \"b\"] c9:code:2=b"}]),
        ]
    );
    // The program still received the tool's own values.
    assert_eq!(result.value().unwrap()["result"], json!(["a", "b"]));

    // Another scope sees only the global listener.
    log.0.lock().unwrap().clear();
    let mut input = run_code_call("d1", "x");
    input.agent = Some(other.id());
    registry.execute(input).await;
    assert_eq!(
        logged_contents(&log),
        [
            json!([{"type": "text", "text": "d1:code:1=a"}]),
            json!([{"type": "text", "text": "d1:code:2=b"}]),
        ]
    );
}

#[tokio::test]
async fn a_panicking_dispatch_log_listener_logs_the_settled_content() {
    let registry = code_registry(two_echoes());
    let log = Arc::new(Collect(Mutex::new(Vec::new())));
    registry.set_code_event_sink(log.clone());
    let agent = registry.new_scope();
    let listener = registry.add_hook::<DispatchLog>(dispatch_log_fn(|entry, content| {
        if entry.sub_call_id.ends_with(":2") {
            panic!("spill store unavailable");
        }
        vec![ContentBlock::text("spilled"), content[0].clone()]
    }));
    let mut input = run_code_call("p1", "x");
    input.agent = Some(agent.id());
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        logged_contents(&log),
        [
            json!([{"type": "text", "text": "spilled"}, {"type": "text", "text": "a"}]),
            json!([{"type": "text", "text": "b"}]),
        ]
    );
    // Disposed, it no longer shapes anything.
    listener.dispose();
    log.0.lock().unwrap().clear();
    let mut input = run_code_call("p2", "x");
    input.agent = Some(agent.id());
    registry.execute(input).await;
    assert_eq!(
        logged_contents(&log),
        [
            json!([{"type": "text", "text": "a"}]),
            json!([{"type": "text", "text": "b"}])
        ]
    );
}

#[test]
fn the_prompt_surface_follows_the_mode() {
    let registry = code_registry(two_echoes());
    let code = registry.prompt(None).unwrap();
    assert_eq!(code.known_names, ["run_code"]);
    assert_eq!(code.tools.len(), 1);
    assert_eq!(code.tools[0].name, "run_code");
    let names: Vec<(&str, u32)> = code.sections.iter().map(|s| (s.name, s.order)).collect();
    assert_eq!(names, [("tools:code-only", 99), ("tools:sdk", 150)]);
    assert!(
        code.sections[0]
            .text
            .starts_with("`run_code` is the only tool you can call directly")
    );
    let sdk = &code.sections[1].text;
    assert!(sdk.starts_with("## Writing code for run_code"), "{sdk}");
    assert!(sdk.contains("echo: {"), "{sdk}");
    assert!(
        !sdk.contains("run_code: {"),
        "the transport is not in its own SDK"
    );

    let both = registry.new_scope();
    both.present_as(PresentationMode::Both).unwrap().keep();
    let surface = registry.prompt(Some(both.id())).unwrap();
    let tools: Vec<&str> = surface.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["echo", "fail", "run_code"]);
    assert_eq!(surface.known_names, ["echo", "fail", "run_code"]);
    assert_eq!(
        surface.sections.len(),
        1,
        "an empty code-only section is dropped"
    );

    let native = registry.new_scope();
    native.present_as(PresentationMode::Native).unwrap().keep();
    let surface = registry.prompt(Some(native.id())).unwrap();
    assert_eq!(surface.tools.len(), 2);
    assert!(surface.sections.is_empty());

    let bare = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let error = bare.prompt(None).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("dsh-tools: mode \"code\" requires a code runtime")
    );
}

#[tokio::test]
async fn sub_call_results_commit_in_submission_order_while_bodies_overlap() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    // The first call finishes last: its body waits for the second one's.
    let (second_done, first_may_finish) = tokio::sync::watch::channel(false);
    let first_may_finish = Arc::new(Mutex::new(Some(first_may_finish)));
    let second_done = Arc::new(second_done);
    let commits = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&commits);
    registry
        .on_result(move |exec, _| seen.lock().unwrap().push(exec.call_id.to_string()))
        .keep();
    registry
        .register(
            ToolDefinition::builder("step")
                .description("A step.")
                .concurrency_safe(true)
                .execute(move |args, _| {
                    let (wait, done) = (
                        first_may_finish.lock().unwrap().take(),
                        Arc::clone(&second_done),
                    );
                    async move {
                        match wait {
                            Some(mut wait) => {
                                wait.wait_for(|done| *done).await.unwrap();
                            }
                            None => {
                                done.send_replace(true);
                            }
                        }
                        Ok(args["n"].clone())
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    CodeMode::new(Arc::new(ScriptedRuntime(Arc::new(
        |request: CodeRunRequest| {
            let step = binding(&request, "step");
            Box::pin(async move {
                let (a, b) = tokio::join!(step(json!({"n": 1})), step(json!({"n": 2})));
                Ok(CodeRunResult {
                    value: Some(json!([a.unwrap(), b.unwrap()])),
                    ..CodeRunResult::default()
                })
            })
        },
    ))))
    .install(&registry)
    .unwrap();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        registry.execute(run_code_call("c1", "x")),
    )
    .await
    .expect("the two parallel-safe bodies overlap");
    assert_eq!(result.value().unwrap()["result"], json!([1, 2]));
    assert_eq!(*commits.lock().unwrap(), ["c1:code:1", "c1:code:2", "c1"]);
}

#[tokio::test]
async fn an_outer_cancel_mid_run_makes_the_outer_result_aborted() {
    let registry = code_registry(Arc::new(|request: CodeRunRequest| {
        Box::pin(async move {
            // The program catches nothing and simply waits for its cancellation.
            request.cancel.cancelled().await;
            Ok(CodeRunResult {
                value: Some(json!("finished anyway")),
                ..CodeRunResult::default()
            })
        })
    }));
    let input = run_code_call("c1", "x");
    let cancel = input.cancel.clone();
    let running = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(input).await }
    });
    tokio::task::yield_now().await;
    cancel.cancel();
    let result = running.await.unwrap();
    assert_eq!(result.error().unwrap().info().unwrap().code, "ABORTED");
    assert_eq!(text(&result), "Error: tool call aborted");
}

#[test]
fn the_cached_sdk_follows_every_registry_change() {
    let registry = code_registry(two_echoes());
    let sdk = |registry: &ToolRegistry| registry.prompt(None).unwrap().sections[1].text.clone();
    let first = sdk(&registry);
    assert_eq!(
        first,
        sdk(&registry),
        "byte-identical while nothing changes"
    );
    let added = registry
        .register(
            ToolDefinition::builder("later")
                .description("Registered later.")
                .execute(|_, _| async { Ok(Value::Null) })
                .build()
                .unwrap(),
        )
        .unwrap();
    assert!(sdk(&registry).contains("\nlater: "));
    added.dispose();
    assert_eq!(sdk(&registry), first);
    // A registration rolled back by a panicking change listener leaves no trace in the SDK.
    let listener = registry.on_change(|_| panic!("no more changes"));
    let refused = registry.register(
        ToolDefinition::builder("ghost")
            .description("Never lands.")
            .execute(|_, _| async { Ok(Value::Null) })
            .build()
            .unwrap(),
    );
    assert!(refused.is_err());
    listener.dispose();
    assert_eq!(sdk(&registry), first);
}
