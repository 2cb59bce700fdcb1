//! The execution pipeline (`docs/CONTRACTS.md`, "The pipeline"; the numbers are its stages):
//! stage order, argument snapshots, pre-aborted calls, approval, denials, contained panics, body
//! outcomes, output validation, execute wrappers, post-execute decisions, cancellation, the
//! finaliser and result notifications. Every expected result is compared in its wire form.

use crate::support;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools::content::ImageAttachmentRef;
use dsh_tools::exec::{
    PostToolDecision, PreToolDecision, ToolExecutionInput, ToolExecutionResult, ToolFailure,
    ToolSuccess,
};
use dsh_tools::{ContentBlock, ErrorInfo, ToolDefinition, ToolError};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalPolicy};
use dsh_tools_runtime::hooks::{execute_wrapper_fn, post_execute_fn, pre_execute_fn};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry, ToolRestriction};
use serde_json::{Value, json};
use support::{
    Counted, Recorder, ResultLog, Script, ScriptedApproval, aborted, aborted_before_dispatch, base,
    call, call_as, call_with, context, context_texts, counted, counted_with, deciding_post,
    deciding_pre, failure, gated, harness_failure, install_code_mode, keep, negative_zero, nested,
    recording_post, recording_pre, recording_wrapper, replacing_wrapper, spawn_execute,
    text_success, texts, unknown_block, wire,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const COLLAPSED: &str = "unknown tool \"probe\": only `run_code` is callable directly — call `probe` from inside a `run_code` program instead";

fn registry_with(def: ToolDefinition) -> ToolRegistry {
    let registry = ToolRegistry::new();
    keep(&registry, def);
    registry
}

fn probe_registry() -> (ToolRegistry, Counted) {
    let probe = counted("probe");
    (registry_with(probe.def.clone()), probe)
}

fn code_mode_registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        max_parallel_sub_calls: NonZeroUsize::new(10).expect("non-zero"),
        ..RegistryConfig::default()
    });
    install_code_mode(&registry);
    registry
}

/// `additionalContexts` on the wire: one text block per message.
fn contexts_wire(texts: &[&str]) -> Value {
    Value::Array(
        texts
            .iter()
            .map(|t| json!({"content": [{"type": "text", "text": t}]}))
            .collect(),
    )
}

/// `probe` returning `"probe ran"`, with a finaliser that records `finalize` and keeps content.
fn finalising_probe(recorder: &Recorder) -> Counted {
    let recorder = recorder.clone();
    let builder = base("probe").finalize_content(move |_, _| {
        recorder.push("finalize");
        None
    });
    counted_with(builder, |_| Ok(json!("probe ran")))
}

/// Registers a recording hook of every kind: `pre`, `guard`, `execute:*`, `post` and
/// `result(args: some|none)`.
fn record_every_stage(registry: &ToolRegistry, recorder: &Recorder) {
    registry
        .on_pre_execute(recording_pre(recorder, "pre"))
        .keep();
    let guard = recorder.clone();
    registry
        .guard(move |_| {
            guard.push("guard");
            None
        })
        .keep();
    registry
        .on_execute(recording_wrapper(recorder, "execute"))
        .keep();
    registry
        .on_post_execute(recording_post(recorder, "post"))
        .keep();
    let observer = recorder.clone();
    registry
        .on_result(move |exec, _| {
            let args = if exec.arguments.is_some() {
                "some"
            } else {
                "none"
            };
            observer.push(format!("result(args: {args})"));
        })
        .keep();
}

/// A fully recorded registry around a finalising `probe` whose body records `body`.
fn recorded_probe() -> (ToolRegistry, Recorder, Counted) {
    let recorder = Recorder::default();
    let (body, finalizer) = (recorder.clone(), recorder.clone());
    let builder = base("probe").finalize_content(move |_, _| {
        finalizer.push("finalize");
        None
    });
    let probe = counted_with(builder, move |_| {
        body.push("body");
        Ok(json!("probe ran"))
    });
    let registry = registry_with(probe.def.clone());
    record_every_stage(&registry, &recorder);
    (registry, recorder, probe)
}

// --- stage order ---------------------------------------------------------------------------------

#[tokio::test]
async fn an_allowed_call_runs_every_stage_in_order() {
    let (registry, recorder, probe) = recorded_probe();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(
        recorder.entries(),
        [
            "pre",
            "guard",
            "execute:before",
            "body",
            "execute:after",
            "post",
            "finalize",
            "result(args: some)"
        ]
    );
    assert_eq!(probe.runs(), 1);
}

// --- stage 1: argument snapshot ------------------------------------------------------------------

#[tokio::test]
async fn non_lossless_arguments_fail_before_any_policy_stage() {
    let (registry, recorder, probe) = recorded_probe();
    let args = json!({"nested": {"x": [1, negative_zero()]}});
    let result = registry.execute(call_with("probe", args)).await;
    assert_eq!(
        wire(&result),
        failure("tool execution arguments must be losslessly JSON-serializable")
    );
    assert_eq!(recorder.entries(), ["finalize", "result(args: none)"]);
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn the_finaliser_applies_to_an_argument_failure() {
    let def = base("probe")
        .finalize_content(|_, _| Some(vec![ContentBlock::text("finalised")]))
        .execute(|_, _| async { Ok(json!("probe ran")) })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let result = registry
        .execute(call_with("probe", json!({"x": negative_zero()})))
        .await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": true,
            "error": {"message": "tool execution arguments must be losslessly JSON-serializable"},
            "content": [{"type": "text", "text": "finalised"}],
        })
    );
}

#[tokio::test]
async fn an_argument_failure_beats_a_pre_aborted_signal() {
    let (registry, _) = probe_registry();
    let input = call_with("probe", json!([negative_zero()]));
    input.cancel.cancel();
    let result = registry.execute(input).await;
    assert_eq!(
        wire(&result),
        failure("tool execution arguments must be losslessly JSON-serializable")
    );
}

// --- stage 3: pre-aborted ------------------------------------------------------------------------

#[tokio::test]
async fn a_pre_aborted_call_is_aborted_before_dispatch_without_policies() {
    let (registry, recorder, probe) = recorded_probe();
    let input = call("probe");
    input.cancel.cancel();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(recorder.entries(), ["finalize", "result(args: some)"]);
    assert_eq!(probe.runs(), 0);
}

// --- stage 5: ask --------------------------------------------------------------------------------

fn asking(reason: Option<&str>) -> dsh_tools_runtime::hooks::PreExecuteFn {
    deciding_pre(PreToolDecision::Ask {
        reason: reason.map(str::to_owned),
    })
}

#[tokio::test]
async fn ask_without_an_approval_service_denies_with_the_ask_reason() {
    let (registry, probe) = probe_registry();
    registry.on_pre_execute(asking(Some("writes files"))).keep();
    let result = registry
        .execute(call_as("probe", &registry.new_scope()))
        .await;
    assert_eq!(wire(&result), failure("writes files"));
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn ask_without_an_approval_service_or_reason_is_not_yet_supported() {
    let (registry, _) = probe_registry();
    registry.on_pre_execute(asking(None)).keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        failure("tool \"probe\" requires approval, but no approval channel is available")
    );
}

#[tokio::test]
async fn ask_without_an_agent_goes_to_the_registrys_service() {
    let (registry, probe) = probe_registry();
    registry.on_pre_execute(asking(Some("why"))).keep();
    let service = ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::AllowedOnce));
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    let requests = service.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].agent, None);
    assert_eq!(probe.runs(), 1);
}

#[tokio::test]
async fn a_tool_requiring_approval_asks_without_any_policy() {
    let tool = counted_with(base("deploy").requires_approval(), |_| {
        Ok(json!("deployed"))
    });
    assert!(tool.def.requires_approval());
    let registry = registry_with(tool.def.clone());
    // No service: the reference's text for an ask without one.
    assert_eq!(
        wire(&registry.execute(call("deploy")).await),
        failure("tool \"deploy\" requires approval, but no approval channel is available")
    );
    let service = ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::Rejected));
    assert_eq!(
        wire(&registry.execute(call("deploy")).await),
        failure("the user rejected tool \"deploy\"")
    );
    assert_eq!(service.requests().len(), 1);
    assert_eq!(service.requests()[0].reason, None);
    // A policy's allow does not waive it; its denial still wins.
    registry
        .on_pre_execute(deciding_pre(PreToolDecision::Allow))
        .keep();
    registry.execute(call("deploy")).await;
    assert_eq!(service.requests().len(), 2);
    let denying = registry_with(tool.def.clone());
    let never = ScriptedApproval::mount(&denying, Script::Answer(ApprovalOutcome::AllowedOnce));
    denying
        .on_pre_execute(deciding_pre(PreToolDecision::Deny {
            reason: "frozen".into(),
        }))
        .keep();
    assert_eq!(
        wire(&denying.execute(call("deploy")).await),
        failure("frozen")
    );
    assert!(never.requests().is_empty());
    assert_eq!(tool.runs(), 0);
}

#[tokio::test]
async fn the_destructive_policy_asks_for_destructive_tools_only() {
    let destructive = dsh_tools::ToolAnnotations {
        destructive_hint: Some(true),
        ..Default::default()
    };
    let rm = counted_with(base("rm").annotations(destructive), |_| {
        Ok(json!("removed"))
    });
    let registry = registry_with(rm.def.clone());
    keep(&registry, counted("ls").def);
    let service = ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::AllowedOnce));
    registry.execute(call("rm")).await;
    assert!(service.requests().is_empty(), "not asked by default");
    registry.set_approval_policy(ApprovalPolicy::DeclaredOrDestructive);
    assert_eq!(
        wire(&registry.execute(call("rm")).await),
        text_success("removed")
    );
    registry.execute(call("ls")).await;
    let asked: Vec<String> = service
        .requests()
        .iter()
        .map(|r| r.tool_name.clone())
        .collect();
    assert_eq!(asked, ["rm"]);
    assert_eq!(rm.runs(), 2);
}

#[tokio::test]
async fn an_approval_request_carries_agent_tool_call_reason_and_the_callers_token() {
    let (registry, probe) = probe_registry();
    registry.on_pre_execute(asking(Some("writes files"))).keep();
    let service = ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::AllowedOnce));
    let agent = registry.new_scope();
    let input = call_as("probe", &agent);
    let caller = input.cancel.clone();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(probe.runs(), 1);
    let requests = service.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.agent, Some(agent.id()));
    assert_eq!(request.tool_name, "probe");
    assert_eq!(request.call_id, "call-1");
    assert_eq!(request.reason.as_deref(), Some("writes files"));
    assert_eq!(request.arguments.as_deref(), Some(&json!({})));
    // No presenter: the generic card of the tool name and the whole arguments.
    assert_eq!(
        request.view,
        dsh_tools::present::fallback_call_view("probe", &json!({}))
    );
    assert!(!request.cancel.is_cancelled());
    caller.cancel();
    assert!(
        request.cancel.is_cancelled(),
        "the request carries the caller's token"
    );
}

#[tokio::test]
async fn an_approval_request_carries_the_tools_own_card_of_the_call() {
    let registry = registry_with(
        base("shell")
            .parameters_json(json!({
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"]
            }))
            .present_call(|args| {
                Some(dsh_tools::present::ToolCallView::terminal(
                    args["command"].as_str().unwrap_or_default(),
                ))
            })
            .execute(|_, _| async { Ok(json!(null)) })
            .build()
            .unwrap(),
    );
    registry.on_pre_execute(asking(None)).keep();
    let service = ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::Rejected));
    let agent = registry.new_scope();
    let input = ToolExecutionInput {
        agent: Some(agent.id()),
        ..call_with("shell", json!({"command": "rm -rf build"}))
    };
    registry.execute(input).await;
    let requests = service.requests();
    assert_eq!(
        requests[0].view,
        dsh_tools::present::ToolCallView::terminal("rm -rf build")
    );
    assert_eq!(
        requests[0].arguments.as_deref(),
        Some(&json!({"command": "rm -rf build"}))
    );
}

#[tokio::test]
async fn a_cancelled_approval_of_an_aborted_caller_is_aborted_before_dispatch() {
    let (registry, probe) = probe_registry();
    let recorder = Recorder::default();
    registry.on_pre_execute(asking(None)).keep();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    ScriptedApproval::mount(&registry, Script::InterruptTurn);
    let result = registry
        .execute(call_as("probe", &registry.new_scope()))
        .await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(
        recorder.entries(),
        ["post"],
        "an in-policy abort is a post-result"
    );
    assert_eq!(probe.runs(), 0);
}

// --- stage 7: denials ----------------------------------------------------------------------------

#[tokio::test]
async fn a_denial_has_no_info_and_goes_through_post_execute() {
    let (registry, _) = probe_registry();
    registry
        .on_pre_execute(deciding_pre(PreToolDecision::Deny {
            reason: "not here".into(),
        }))
        .keep();
    let seen = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&seen);
    registry
        .on_post_execute(post_execute_fn(move |_, result, next| {
            *sink.lock().unwrap() = Some(wire(&result));
            next.run()
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("not here"));
    assert_eq!(seen.lock().unwrap().clone(), Some(failure("not here")));
}

// --- stage 9: panics in policy stages ------------------------------------------------------------

#[tokio::test]
async fn a_panicking_pre_execute_policy_is_a_final_error_that_skips_post_execute() {
    let (registry, recorder, probe) = recorded_probe();
    registry
        .on_pre_execute(pre_execute_fn(|_, _| async { panic!("pre exploded") }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("pre exploded"));
    assert_eq!(
        recorder.entries(),
        ["pre", "finalize", "result(args: some)"]
    );
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn a_panicking_guard_is_a_final_error_that_skips_post_execute() {
    let (registry, recorder, probe) = recorded_probe();
    registry.guard(|_| panic!("guard exploded")).keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("guard exploded"));
    assert_eq!(
        recorder.entries(),
        ["pre", "guard", "finalize", "result(args: some)"]
    );
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn an_approval_service_panicking_before_its_future_is_a_final_error() {
    let (registry, recorder, _) = recorded_probe();
    registry.on_pre_execute(asking(None)).keep();
    ScriptedApproval::mount(&registry, Script::PanicNow);
    let result = registry
        .execute(call_as("probe", &registry.new_scope()))
        .await;
    assert_eq!(wire(&result), failure("approval channel exploded"));
    assert_eq!(
        recorder.entries(),
        ["pre", "finalize", "result(args: some)"]
    );
}

#[tokio::test]
async fn an_approval_future_panicking_is_a_final_error() {
    let (registry, recorder, _) = recorded_probe();
    registry.on_pre_execute(asking(None)).keep();
    ScriptedApproval::mount(&registry, Script::PanicLater);
    let result = registry
        .execute(call_as("probe", &registry.new_scope()))
        .await;
    assert_eq!(wire(&result), failure("approval future exploded"));
    assert!(!recorder.entries().contains(&"post".to_owned()));
}

// --- stage 10c: unknown tools --------------------------------------------------------------------

#[tokio::test]
async fn an_unknown_tool_fails_with_unknown_tool_after_policies_saw_it() {
    let registry = ToolRegistry::new();
    let recorder = Recorder::default();
    let names = recorder.clone();
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            names.push(exec.name.to_string());
            next.run()
        }))
        .keep();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    let result = registry.execute(call("nope")).await;
    assert_eq!(
        wire(&result),
        harness_failure("unknown tool \"nope\"", "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert_eq!(recorder.entries(), ["nope", "post"]);
}

#[tokio::test]
async fn a_tool_restricted_away_is_unknown_to_that_scope_only() {
    let (registry, probe) = probe_registry();
    let agent = registry.new_scope();
    agent
        .restrict(ToolRestriction {
            deny: Some(vec!["probe".into()]),
            ..Default::default()
        })
        .unwrap()
        .keep();
    let denied = registry.execute(call_as("probe", &agent)).await;
    assert_eq!(
        wire(&denied),
        harness_failure(
            "unknown tool \"probe\"",
            "ToolNotFoundError",
            "UNKNOWN_TOOL"
        )
    );
    let allowed = registry
        .execute(call_as("probe", &registry.new_scope()))
        .await;
    assert_eq!(wire(&allowed), text_success("probe ran"));
    assert_eq!(probe.runs(), 1);
}

// --- stage 10d: the body -------------------------------------------------------------------------

#[tokio::test]
async fn a_body_error_message_is_preserved_without_info() {
    let tool = counted_with(base("probe"), |_| Err(ToolError::msg("disk full")));
    let registry = registry_with(tool.def.clone());
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("disk full"));
    assert_eq!(tool.runs(), 1);
}

#[tokio::test]
async fn a_body_error_with_info_keeps_its_info() {
    let tool = counted_with(base("probe"), |_| {
        Err(ToolError::with_info(
            "quota exceeded",
            ErrorInfo::new("QuotaError", "QUOTA"),
        ))
    });
    let registry = registry_with(tool.def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure("quota exceeded", "QuotaError", "QUOTA")
    );
}

fn panicking_inside_future() -> ToolDefinition {
    base("boom")
        .execute(|_, _| async { panic!("kaboom") })
        .build()
        .unwrap()
}

fn panicking_before_future() -> ToolDefinition {
    base("eager")
        .execute_boxed(Arc::new(|_, _| panic!("eager kaboom")))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_body_panicking_inside_its_future_is_an_error_result() {
    let registry = registry_with(panicking_inside_future());
    let result = registry.execute(call("boom")).await;
    assert_eq!(wire(&result), failure("tool \"boom\" panicked: kaboom"));
}

#[tokio::test]
async fn a_body_panicking_before_returning_its_future_is_an_error_result() {
    let registry = registry_with(panicking_before_future());
    let result = registry.execute(call("eager")).await;
    assert_eq!(
        wire(&result),
        failure("tool \"eager\" panicked: eager kaboom")
    );
}

#[tokio::test]
async fn the_registry_keeps_working_after_body_panics() {
    let registry = ToolRegistry::new();
    keep(&registry, panicking_inside_future());
    keep(&registry, panicking_before_future());
    let probe = counted("probe");
    keep(&registry, probe.def.clone());
    let (log, _observer) = ResultLog::observe(&registry);
    for i in 0..100 {
        let name = ["boom", "eager", "probe"][i % 3];
        let result = registry.execute(call(name)).await;
        assert_eq!(result.is_error(), name != "probe", "call {i} of {name}");
    }
    assert_eq!(probe.runs(), 33);
    assert_eq!(log.entries().len(), 100);
    keep(&registry, counted("later").def);
    let result = registry.execute(call("later")).await;
    assert_eq!(wire(&result), text_success("later ran"));
}

#[tokio::test]
async fn invalid_arguments_fail_with_invalid_args_without_running_the_body() {
    let builder = base("probe").parameters_json(json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["path"],
    }));
    let tool = counted_with(builder, |_| Ok(json!("probe ran")));
    let registry = registry_with(tool.def.clone());
    let result = registry
        .execute(call_with("probe", json!({"n": "three"})))
        .await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "invalid arguments: missing required property \"path\"; \"n\" must be an integer",
            "ToolArgsError",
            "INVALID_ARGS"
        )
    );
    assert_eq!(tool.runs(), 0);
}

// --- building a success --------------------------------------------------------------------------

fn with_output(schema: Value, value: Value) -> ToolDefinition {
    counted_with(
        base("probe").output_json(schema),
        move |_| Ok(value.clone()),
    )
    .def
}

#[tokio::test]
async fn an_output_violating_the_schema_is_invalid_tool_output() {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
        "required": ["x", "y"],
    });
    let registry = registry_with(with_output(schema, json!({"x": 1.5})));
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: missing required property \"value.y\"; \"value.x\" must be an integer",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
}

#[tokio::test]
async fn a_non_lossless_output_is_invalid_tool_output() {
    let registry = registry_with(with_output(json!({}), json!([negative_zero()])));
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: value is not lossless JSON",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
}

#[tokio::test]
async fn a_panicking_renderer_is_invalid_tool_output() {
    let builder = base("probe").render(|_, _| panic!("render exploded"));
    let registry = registry_with(counted_with(builder, |_| Ok(json!(1))).def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: output.render failed: render exploded",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
}

#[tokio::test]
async fn a_panicking_presentation_meta_is_invalid_tool_output() {
    let builder = base("probe").presentation_meta(|_, _| panic!("meta exploded"));
    let registry = registry_with(counted_with(builder, |_| Ok(json!(1))).def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: output.presentationMeta failed: meta exploded",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
}

/// `probe` rendering `rendered: <value>` with meta `{"shown": <value>}`, counting meta calls.
fn presented_probe(meta_calls: &Arc<AtomicUsize>) -> ToolDefinition {
    let meta_calls = Arc::clone(meta_calls);
    base("probe")
        .output_json(json!({"type": "string"}))
        .render(|_, value| {
            vec![ContentBlock::text(format!(
                "rendered: {}",
                value.as_str().unwrap_or("?")
            ))]
        })
        .presentation_meta(move |args, value| {
            meta_calls.fetch_add(1, Ordering::SeqCst);
            json!({"shown": value, "args": args})
        })
        .execute(|_, _| async { Ok(json!("fresh")) })
        .build()
        .unwrap()
}

#[tokio::test]
async fn presentation_meta_is_computed_for_top_level_calls_only() {
    let meta_calls = Arc::new(AtomicUsize::new(0));
    let registry = registry_with(presented_probe(&meta_calls));
    let top = registry.execute(call_with("probe", json!({"a": 1}))).await;
    // `a` is not a declared parameter of the open `probe`: the result says so.
    let note =
        "Note: \"a\" is not a parameter of probe, so probe may have ignored it (it declares none).";
    assert_eq!(
        wire(&top),
        json!({
            "isError": false,
            "value": "fresh",
            "content": [{"type": "text", "text": "rendered: fresh"}],
            "meta": {"shown": "fresh", "args": {"a": 1}},
            "additionalContexts": [{"content": [{"type": "text", "text": note}]}],
        })
    );
    let sub = registry.execute(nested(call("probe"))).await;
    assert_eq!(
        wire(&sub),
        json!({
            "isError": false,
            "value": "fresh",
            "content": [{"type": "text", "text": "rendered: fresh"}],
        })
    );
    assert_eq!(meta_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_body_that_concludes_the_turn_marks_its_success() {
    let def = base("probe")
        .execute(|_, ctx| async move {
            ctx.conclude_turn();
            Ok(json!("done"))
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "done",
            "content": [{"type": "text", "text": "done"}],
            "concludesTurn": true,
        })
    );
}

#[tokio::test]
async fn a_failed_body_never_concludes_the_turn() {
    let def = base("probe")
        .execute(|_, ctx| async move {
            ctx.conclude_turn();
            Err(ToolError::msg("failed anyway"))
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("failed anyway"));
}

// --- stage 12: deferred contexts -----------------------------------------------------------------

/// `probe` deferring `c1` and `c2`, then returning `outcome`.
fn deferring_probe(outcome: Result<Value, ToolError>) -> ToolDefinition {
    base("probe")
        .execute(move |_, ctx| {
            let outcome = outcome.clone();
            async move {
                ctx.defer_context(context("c1"));
                ctx.defer_context(context("c2"));
                outcome
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn deferred_contexts_come_before_policy_contexts_on_success() {
    let registry = registry_with(deferring_probe(Ok(json!("ok"))));
    registry
        .on_post_execute(deciding_post(PostToolDecision::Accept {
            content: None,
            additional_contexts: vec![context("post")],
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "ok",
            "content": [{"type": "text", "text": "ok"}],
            "additionalContexts": contexts_wire(&["c1", "c2", "post"]),
        })
    );
}

#[tokio::test]
async fn deferred_contexts_are_kept_on_a_body_failure() {
    let registry = registry_with(deferring_probe(Err(ToolError::msg("nope"))));
    let result = registry.execute(call("probe")).await;
    assert_eq!(context_texts(&result), ["c1", "c2"]);
    assert_eq!(result.error().unwrap().message(), "nope");
}

#[tokio::test]
async fn deferred_contexts_come_before_a_wrappers_contexts() {
    let registry = registry_with(deferring_probe(Ok(json!("ok"))));
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| async move {
            let mut result = next.run(dispatch).await;
            if let ToolExecutionResult::Success(success) = &mut result {
                success.additional_contexts.push(context("wrapper"));
            }
            result
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(context_texts(&result), ["c1", "c2", "wrapper"]);
}

// --- stages 10–11, 14: execute wrappers ----------------------------------------------------------

fn forged_success(value: Value) -> ToolExecutionResult {
    ToolExecutionResult::Success(ToolSuccess {
        value,
        content: vec![ContentBlock::text("forged")],
        meta: Some(json!("forged meta")),
        additional_contexts: vec![context("wrapper")],
        concludes_turn: false,
    })
}

#[tokio::test]
async fn a_foreign_success_is_revalidated_and_rerendered_from_its_value() {
    let meta_calls = Arc::new(AtomicUsize::new(0));
    let registry = registry_with(presented_probe(&meta_calls));
    registry
        .on_execute(replacing_wrapper(forged_success(json!("cached"))))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "cached",
            "content": [{"type": "text", "text": "rendered: cached"}],
            "meta": {"shown": "cached", "args": {}},
            "additionalContexts": contexts_wire(&["wrapper"]),
        })
    );
}

#[tokio::test]
async fn an_invalid_foreign_success_is_a_final_error_that_skips_post_and_drops_contexts() {
    let registry = registry_with(with_output(json!({"type": "string"}), json!("ok")));
    let recorder = Recorder::default();
    registry
        .on_execute(replacing_wrapper(forged_success(json!(42))))
        .keep();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: \"value\" must be a string",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
    assert!(
        recorder.entries().is_empty(),
        "stage 14: post-execute is skipped"
    );
}

#[tokio::test]
async fn a_foreign_success_for_a_vanished_tool_is_a_final_unknown_tool_error() {
    let registry = ToolRegistry::new();
    let recorder = Recorder::default();
    let handle = Arc::new(registry.register(counted("probe").def).unwrap());
    registry
        .on_execute(execute_wrapper_fn(move |_, _| {
            handle.dispose();
            std::future::ready(forged_success(json!("cached")))
        }))
        .keep();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "unknown tool \"probe\"",
            "ToolNotFoundError",
            "UNKNOWN_TOOL"
        )
    );
    assert!(
        recorder.entries().is_empty(),
        "stage 14: post-execute is skipped"
    );
}

#[tokio::test]
async fn a_foreign_failure_is_kept_as_it_is() {
    let (registry, probe) = probe_registry();
    let foreign = ToolExecutionResult::Failure(ToolFailure {
        error: ToolError::with_info("rate limited", ErrorInfo::new("RateError", "RATE")),
        content: vec![ContentBlock::text("try later")],
        meta: Some(json!({"retry": 3})),
        additional_contexts: vec![context("wrapper")],
    });
    registry.on_execute(replacing_wrapper(foreign)).keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": true,
            "error": {"message": "rate limited", "info": {"name": "RateError", "code": "RATE"}},
            "content": [{"type": "text", "text": "try later"}],
            "meta": {"retry": 3},
            "additionalContexts": contexts_wire(&["wrapper"]),
        })
    );
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn a_foreign_success_does_not_carry_an_authored_concludes_turn() {
    let (registry, _) = probe_registry();
    let cached = ToolExecutionResult::Success(ToolSuccess {
        value: json!("cached"),
        content: vec![ContentBlock::text("cached")],
        meta: None,
        additional_contexts: Vec::new(),
        concludes_turn: true,
    });
    registry.on_execute(replacing_wrapper(cached)).keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("cached"));
}

#[tokio::test]
async fn a_rebuilt_core_success_keeps_the_bodys_concludes_turn() {
    let def = base("probe")
        .execute(|_, ctx| async move {
            ctx.conclude_turn();
            Ok(json!("done"))
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| async move {
            match next.run(dispatch).await {
                ToolExecutionResult::Success(_) => ToolExecutionResult::Success(ToolSuccess {
                    value: json!("edited"),
                    content: Vec::new(),
                    meta: None,
                    additional_contexts: Vec::new(),
                    concludes_turn: false,
                }),
                failure => failure,
            }
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "edited",
            "content": [{"type": "text", "text": "edited"}],
            "concludesTurn": true,
        })
    );
}

#[tokio::test]
async fn a_panicking_wrapper_is_a_final_error_that_skips_post_and_loses_contexts() {
    let registry = registry_with(deferring_probe(Ok(json!("ok"))));
    let recorder = Recorder::default();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| async move {
            let _ = next.run(dispatch).await;
            panic!("wrapper exploded")
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("wrapper exploded"));
    assert!(recorder.entries().is_empty());
}

#[tokio::test]
async fn a_wrapper_token_cancelled_before_dispatch_skips_the_body() {
    let (registry, probe) = probe_registry();
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| {
            let cancelled = CancellationToken::new();
            cancelled.cancel();
            next.run(dispatch.with_cancellation(cancelled))
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn the_body_observes_a_wrappers_token() {
    let entered = Arc::new(Notify::new());
    let signal = Arc::clone(&entered);
    let def = base("probe")
        .execute(move |_, ctx| {
            let signal = Arc::clone(&signal);
            async move {
                signal.notify_one();
                ctx.cancellation().cancelled().await;
                Ok(json!("stopped"))
            }
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let deadline = CancellationToken::new();
    let wrapper_token = deadline.clone();
    registry
        .on_execute(execute_wrapper_fn(move |dispatch, next| {
            next.run(dispatch.with_cancellation(wrapper_token.clone()))
        }))
        .keep();
    let running = spawn_execute(&registry, call("probe"));
    entered.notified().await;
    deadline.cancel();
    let result = running.await.unwrap();
    assert_eq!(wire(&result), aborted());
}

#[tokio::test]
async fn a_wrapper_token_cancelled_as_the_body_returns_is_aborted() {
    // The body cancels the wrapper's token and succeeds in the same poll: the fused token is
    // aborted after a successful body (stage 10e).
    let slot: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let body_slot = Arc::clone(&slot);
    let def = base("probe")
        .execute(move |_, _| {
            let token = body_slot.lock().unwrap().clone();
            async move {
                token.expect("the wrapper stored its token").cancel();
                Ok(json!("done"))
            }
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    registry
        .on_execute(execute_wrapper_fn(move |dispatch, next| {
            let token = CancellationToken::new();
            *slot.lock().unwrap() = Some(token.clone());
            next.run(dispatch.with_cancellation(token))
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), aborted());
}

// --- stage 15: post-execute decisions ------------------------------------------------------------

fn image_block() -> ContentBlock {
    ContentBlock::Image {
        attachment: ImageAttachmentRef {
            attachment_id: format!("sha256:{}", "ab".repeat(32)),
            media_type: "image/png".into(),
            bytes: 10,
            width: 1,
            height: 1,
        },
    }
}

#[tokio::test]
async fn a_block_maps_its_feedback_into_the_error_message_and_keeps_only_its_contexts() {
    let registry = registry_with(deferring_probe(Ok(json!("ok"))));
    let feedback = vec![
        ContentBlock::text("first"),
        image_block(),
        ContentBlock::reasoning("thinking"),
        unknown_block(json!({"type": "audio", "url": "x"})),
        ContentBlock::text("last"),
    ];
    registry
        .on_post_execute(deciding_post(PostToolDecision::Block {
            feedback: feedback.clone(),
            additional_contexts: vec![context("policy")],
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        result.error().unwrap().message(),
        "first\n[image content]\n[reasoning content]\n[audio content]\nlast"
    );
    assert!(result.error().unwrap().info().is_none());
    assert_eq!(result.content(), feedback.as_slice());
    assert_eq!(context_texts(&result), ["policy"]);
    assert!(result.meta().is_none());
}

#[tokio::test]
async fn an_empty_block_uses_the_default_message() {
    let (registry, _) = probe_registry();
    registry
        .on_post_execute(deciding_post(PostToolDecision::Block {
            feedback: Vec::new(),
            additional_contexts: Vec::new(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": true,
            "error": {"message": "tool result blocked by post-execute policy"},
            "content": [],
        })
    );
}

#[tokio::test]
async fn a_block_of_one_empty_text_uses_the_default_message() {
    let (registry, _) = probe_registry();
    registry
        .on_post_execute(deciding_post(PostToolDecision::Block {
            feedback: vec![ContentBlock::text("")],
            additional_contexts: Vec::new(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        result.error().unwrap().message(),
        "tool result blocked by post-execute policy"
    );
    assert_eq!(texts(&result), [""]);
}

#[tokio::test]
async fn accepting_a_value_on_a_failure_is_an_error() {
    let tool = counted_with(base("probe"), |_| Err(ToolError::msg("failed")));
    let registry = registry_with(tool.def);
    registry
        .on_post_execute(deciding_post(PostToolDecision::AcceptValue {
            value: json!("rescued"),
            additional_contexts: Vec::new(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        failure("tools/post-execute cannot replace the value of a failed result")
    );
}

#[tokio::test]
async fn accepting_a_value_rebuilds_the_success_and_appends_contexts() {
    let meta_calls = Arc::new(AtomicUsize::new(0));
    let def = presented_probe(&meta_calls);
    let registry = registry_with(def);
    registry
        .on_post_execute(deciding_post(PostToolDecision::AcceptValue {
            value: json!("replaced"),
            additional_contexts: vec![context("post")],
        }))
        .keep();
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| async move {
            let mut result = next.run(dispatch).await;
            if let ToolExecutionResult::Success(success) = &mut result {
                success.additional_contexts.push(context("earlier"));
            }
            result
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "replaced",
            "content": [{"type": "text", "text": "rendered: replaced"}],
            "meta": {"shown": "replaced", "args": {}},
            "additionalContexts": contexts_wire(&["earlier", "post"]),
        })
    );
}

#[tokio::test]
async fn accepting_an_invalid_value_is_an_error_without_contexts() {
    let def = base("probe")
        .output_json(json!({"type": "string"}))
        .execute(|_, ctx| async move {
            ctx.defer_context(context("deferred"));
            Ok(json!("ok"))
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    registry
        .on_post_execute(deciding_post(PostToolDecision::AcceptValue {
            value: json!(7),
            additional_contexts: vec![context("post")],
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(
            "tool \"probe\" returned invalid output: \"value\" must be a string",
            "ToolOutputError",
            "INVALID_TOOL_OUTPUT"
        )
    );
}

#[tokio::test]
async fn accepting_content_keeps_value_and_meta_and_appends_contexts() {
    let meta_calls = Arc::new(AtomicUsize::new(0));
    let registry = registry_with(presented_probe(&meta_calls));
    registry
        .on_post_execute(deciding_post(PostToolDecision::Accept {
            content: Some(vec![ContentBlock::text("redacted")]),
            additional_contexts: vec![context("post")],
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "fresh",
            "content": [{"type": "text", "text": "redacted"}],
            "meta": {"shown": "fresh", "args": {}},
            "additionalContexts": contexts_wire(&["post"]),
        })
    );
}

#[tokio::test]
async fn accepting_content_replaces_a_failures_content_only() {
    let tool = counted_with(base("probe"), |_| Err(ToolError::msg("failed")));
    let registry = registry_with(tool.def);
    registry
        .on_post_execute(deciding_post(PostToolDecision::Accept {
            content: Some(vec![ContentBlock::text("friendlier")]),
            additional_contexts: Vec::new(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": true,
            "error": {"message": "failed"},
            "content": [{"type": "text", "text": "friendlier"}],
        })
    );
}

#[tokio::test]
async fn a_panicking_post_execute_policy_is_an_error_and_the_finaliser_still_runs() {
    let recorder = Recorder::default();
    let probe = finalising_probe(&recorder);
    let registry = registry_with(probe.def.clone());
    registry
        .on_post_execute(post_execute_fn(|_, _, _| async { panic!("post exploded") }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("post exploded"));
    assert_eq!(recorder.entries(), ["finalize"]);
    assert_eq!(probe.runs(), 1);
}

// --- cancellation results ------------------------------------------------------------------------

#[tokio::test]
async fn cancelling_during_the_body_turns_its_success_into_aborted() {
    let (probe, gate) = gated("probe", Ok(json!("finished")));
    let registry = registry_with(probe.def.clone());
    let input = call("probe");
    let caller = input.cancel.clone();
    let running = spawn_execute(&registry, input);
    gate.entered.notified().await;
    caller.cancel();
    gate.release.notify_one();
    let result = running.await.unwrap();
    assert_eq!(wire(&result), aborted());
    assert_eq!(probe.runs(), 1);
}

#[tokio::test]
async fn cancelling_during_the_body_keeps_a_tool_failure() {
    let (probe, gate) = gated("probe", Err(ToolError::msg("tool failed first")));
    let registry = registry_with(probe.def.clone());
    let input = call("probe");
    let caller = input.cancel.clone();
    let running = spawn_execute(&registry, input);
    gate.entered.notified().await;
    caller.cancel();
    gate.release.notify_one();
    let result = running.await.unwrap();
    assert_eq!(wire(&result), failure("tool failed first"));
}

#[tokio::test]
async fn the_body_observes_the_callers_cancellation_and_its_contexts_survive() {
    let entered = Arc::new(Notify::new());
    let signal = Arc::clone(&entered);
    let def = base("probe")
        .execute(move |_, ctx| {
            let signal = Arc::clone(&signal);
            async move {
                ctx.defer_context(context("partial"));
                signal.notify_one();
                ctx.cancellation().cancelled().await;
                Ok(json!("stopped cleanly"))
            }
        })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let input = call("probe");
    let caller = input.cancel.clone();
    let running = spawn_execute(&registry, input);
    entered.notified().await;
    caller.cancel();
    let result = running.await.unwrap();
    let mut expected = aborted();
    expected["additionalContexts"] = contexts_wire(&["partial"]);
    assert_eq!(wire(&result), expected);
}

/// A pre-execute policy that cancels `caller` and then allows.
fn cancelling_pre(caller: &CancellationToken) -> dsh_tools_runtime::hooks::PreExecuteFn {
    let caller = caller.clone();
    pre_execute_fn(move |_, next| {
        caller.cancel();
        next.run()
    })
}

#[tokio::test]
async fn cancelling_during_pre_execute_is_aborted_before_dispatch_and_reaches_post() {
    let (registry, probe) = probe_registry();
    let recorder = Recorder::default();
    let input = call("probe");
    registry
        .on_pre_execute(cancelling_pre(&input.cancel))
        .keep();
    registry
        .on_post_execute(recording_post(&recorder, "post"))
        .keep();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(recorder.entries(), ["post"]);
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn a_denial_beats_a_cancellation_during_pre_execute() {
    let (registry, _) = probe_registry();
    let input = call("probe");
    let caller = input.cancel.clone();
    registry
        .on_pre_execute(pre_execute_fn(move |_, _| {
            caller.cancel();
            std::future::ready(PreToolDecision::Deny {
                reason: "denied".into(),
            })
        }))
        .keep();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), failure("denied"));
}

/// A post-execute policy that cancels `caller` and then continues.
fn cancelling_post(caller: &CancellationToken) -> dsh_tools_runtime::hooks::PostExecuteFn {
    let caller = caller.clone();
    post_execute_fn(move |_, _, next| {
        caller.cancel();
        next.run()
    })
}

#[tokio::test]
async fn cancelling_during_post_execute_after_the_body_ran_is_aborted() {
    let (registry, _) = probe_registry();
    let input = call("probe");
    registry
        .on_post_execute(cancelling_post(&input.cancel))
        .keep();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), aborted());
}

#[tokio::test]
async fn cancelling_during_post_execute_without_a_body_run_is_aborted_before_dispatch() {
    let (registry, probe) = probe_registry();
    let input = call("probe");
    registry
        .on_execute(replacing_wrapper(forged_success(json!("cached"))))
        .keep();
    registry
        .on_post_execute(cancelling_post(&input.cancel))
        .keep();
    let result = registry.execute(input).await;
    let mut expected = aborted_before_dispatch();
    expected["additionalContexts"] = contexts_wire(&["wrapper"]);
    assert_eq!(wire(&result), expected);
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn a_short_circuiting_wrapper_of_a_cancelled_caller_is_aborted_before_dispatch() {
    let (registry, probe) = probe_registry();
    let input = call("probe");
    let caller = input.cancel.clone();
    registry
        .on_execute(execute_wrapper_fn(move |_, _| {
            caller.cancel();
            std::future::ready(ToolExecutionResult::Success(ToolSuccess {
                value: json!("cached"),
                content: Vec::new(),
                meta: None,
                additional_contexts: Vec::new(),
                concludes_turn: false,
            }))
        }))
        .keep();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(probe.runs(), 0);
}

// --- stages 18–19: materialisation and the finaliser ---------------------------------------------

#[tokio::test]
async fn the_finaliser_is_called_exactly_once_with_the_result_and_may_replace_content() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&calls);
    let def = base("probe")
        .finalize_content(move |exec, result| {
            sink.lock()
                .unwrap()
                .push((exec.call_id.to_string(), wire(result)));
            Some(vec![ContentBlock::text("finalised")])
        })
        .execute(|_, _| async { Ok(json!("probe ran")) })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        json!({
            "isError": false,
            "value": "probe ran",
            "content": [{"type": "text", "text": "finalised"}],
        })
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [("call-1".to_owned(), text_success("probe ran"))]
    );
}

#[tokio::test]
async fn a_panicking_finaliser_becomes_an_error_and_is_not_called_again() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let def = base("probe")
        .finalize_content(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            panic!("finaliser exploded")
        })
        .execute(|_, _| async { Ok(json!("probe ran")) })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let (log, _observer) = ResultLog::observe(&registry);
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("finaliser exploded"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(log.entries()[0].1, result);
}

#[tokio::test]
async fn a_non_lossless_finaliser_replacement_fails_materialisation() {
    let def = base("probe")
        .finalize_content(|_, _| {
            Some(vec![unknown_block(
                json!({"type": "x", "n": negative_zero()}),
            )])
        })
        .execute(|_, _| async { Ok(json!("probe ran")) })
        .build()
        .unwrap();
    let registry = registry_with(def);
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        failure("tool result must be losslessly JSON-serializable")
    );
}

#[tokio::test]
async fn the_finaliser_captured_at_the_start_runs_even_if_the_tool_is_unregistered_meanwhile() {
    let registry = ToolRegistry::new();
    let def = base("probe")
        .finalize_content(|_, _| Some(vec![ContentBlock::text("finalised")]))
        .execute(|_, _| async { Ok(json!("probe ran")) })
        .build()
        .unwrap();
    let handle = Arc::new(registry.register(def).unwrap());
    registry
        .on_pre_execute(pre_execute_fn(move |_, next| {
            handle.dispose();
            next.run()
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(result.error().unwrap().message(), "unknown tool \"probe\"");
    assert_eq!(texts(&result), ["finalised"]);
}

#[tokio::test]
async fn a_non_lossless_result_fails_materialisation() {
    let (registry, _) = probe_registry();
    registry
        .on_post_execute(deciding_post(PostToolDecision::Accept {
            content: Some(vec![unknown_block(
                json!({"type": "x", "n": negative_zero()}),
            )]),
            additional_contexts: Vec::new(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        failure("tool result must be losslessly JSON-serializable")
    );
}

// --- stage 2: the Code Mode collapse -------------------------------------------------------------

#[tokio::test]
async fn code_mode_collapses_a_direct_call_with_the_route_message() {
    let registry = code_mode_registry();
    let probe = counted("probe");
    keep(&registry, probe.def.clone());
    let result = registry.execute(call("probe")).await;
    assert_eq!(
        wire(&result),
        harness_failure(COLLAPSED, "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn a_collapsed_call_skips_every_policy_and_the_finaliser() {
    let registry = code_mode_registry();
    let recorder = Recorder::default();
    keep(&registry, finalising_probe(&recorder).def);
    record_every_stage(&registry, &recorder);
    ScriptedApproval::mount(&registry, Script::Answer(ApprovalOutcome::AllowedOnce));
    let result = registry.execute(call("probe")).await;
    assert_eq!(result.error().unwrap().message(), COLLAPSED);
    assert_eq!(recorder.entries(), ["result(args: some)"]);
}

#[tokio::test]
async fn a_pre_aborted_collapsed_call_is_aborted_before_dispatch_and_keeps_the_finaliser() {
    let registry = code_mode_registry();
    let recorder = Recorder::default();
    keep(&registry, finalising_probe(&recorder).def);
    record_every_stage(&registry, &recorder);
    let input = call("probe");
    input.cancel.cancel();
    let result = registry.execute(input).await;
    assert_eq!(wire(&result), aborted_before_dispatch());
    assert_eq!(recorder.entries(), ["finalize", "result(args: some)"]);
}

#[tokio::test]
async fn nested_calls_are_not_collapsed() {
    let registry = code_mode_registry();
    let probe = counted("probe");
    keep(&registry, probe.def.clone());
    let result = registry.execute(nested(call("probe"))).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(probe.runs(), 1);
}

#[tokio::test]
async fn the_collapse_follows_the_callers_effective_mode() {
    let (registry, _) = probe_registry();
    install_code_mode(&registry);
    let coder = registry.new_scope();
    coder.present_as(PresentationMode::Code).unwrap().keep();
    let both = registry.new_scope();
    both.present_as(PresentationMode::Both).unwrap().keep();
    let run = |input: ToolExecutionInput| {
        let registry = registry.clone();
        async move { registry.execute(input).await }
    };
    let collapsed = run(call_as("probe", &coder)).await;
    assert_eq!(collapsed.error().unwrap().message(), COLLAPSED);
    let inherited = run(call_as("probe", &coder.child())).await;
    assert_eq!(inherited.error().unwrap().message(), COLLAPSED);
    assert_eq!(
        wire(&run(call_as("probe", &both)).await),
        text_success("probe ran")
    );
    assert_eq!(wire(&run(call("probe")).await), text_success("probe ran"));
}

#[tokio::test]
async fn an_invisible_name_in_code_mode_takes_the_normal_path() {
    let registry = code_mode_registry();
    let recorder = Recorder::default();
    registry
        .on_pre_execute(recording_pre(&recorder, "pre"))
        .keep();
    let result = registry.execute(call("nope")).await;
    assert_eq!(
        wire(&result),
        harness_failure("unknown tool \"nope\"", "ToolNotFoundError", "UNKNOWN_TOOL")
    );
    assert_eq!(recorder.entries(), ["pre"]);
}

#[tokio::test]
async fn an_argument_failure_of_a_collapsed_call_drops_the_finaliser() {
    let registry = code_mode_registry();
    let recorder = Recorder::default();
    keep(&registry, finalising_probe(&recorder).def);
    let result = registry
        .execute(call_with("probe", json!({"x": negative_zero()})))
        .await;
    assert_eq!(
        wire(&result),
        failure("tool execution arguments must be losslessly JSON-serializable")
    );
    assert!(recorder.entries().is_empty());
}

#[tokio::test]
async fn an_argument_failure_of_an_aborted_collapsed_call_keeps_the_finaliser() {
    let registry = code_mode_registry();
    let recorder = Recorder::default();
    keep(&registry, finalising_probe(&recorder).def);
    let input = call_with("probe", json!({"x": negative_zero()}));
    input.cancel.cancel();
    let result = registry.execute(input).await;
    assert_eq!(
        wire(&result),
        failure("tool execution arguments must be losslessly JSON-serializable")
    );
    assert_eq!(recorder.entries(), ["finalize"]);
}

#[tokio::test]
async fn an_argument_failure_beats_the_collapse() {
    let registry = code_mode_registry();
    keep(&registry, counted("probe").def);
    let result = registry
        .execute(call_with("probe", json!({"x": negative_zero()})))
        .await;
    assert_eq!(
        wire(&result),
        failure("tool execution arguments must be losslessly JSON-serializable")
    );
}

// --- stage 20: exactly one result notification ---------------------------------------------------

#[tokio::test]
async fn every_path_publishes_exactly_one_result_notification() {
    type Setup = fn(&ToolRegistry, &mut ToolExecutionInput);
    let scenarios: Vec<(&str, Setup)> = vec![
        ("success", |_, _| {}),
        ("argument failure", |_, input| {
            input.arguments = json!([negative_zero()]);
        }),
        ("pre-aborted", |_, input| input.cancel.cancel()),
        ("unknown tool", |_, input| input.name = "nope".into()),
        ("denial", |registry, _| {
            registry
                .on_pre_execute(deciding_pre(PreToolDecision::Deny {
                    reason: "no".into(),
                }))
                .keep();
        }),
        ("guard", |registry, _| {
            registry.guard(|_| Some("no".into())).keep()
        }),
        ("pre panic", |registry, _| {
            registry
                .on_pre_execute(pre_execute_fn(|_, _| async { panic!("pre") }))
                .keep();
        }),
        ("wrapper panic", |registry, _| {
            registry
                .on_execute(execute_wrapper_fn(|_, _| async { panic!("wrapper") }))
                .keep();
        }),
        ("post panic", |registry, _| {
            registry
                .on_post_execute(post_execute_fn(|_, _, _| async { panic!("post") }))
                .keep();
        }),
        ("block", |registry, _| {
            registry
                .on_post_execute(deciding_post(PostToolDecision::Block {
                    feedback: Vec::new(),
                    additional_contexts: Vec::new(),
                }))
                .keep();
        }),
        ("observer panic", |registry, _| {
            registry.on_result(|_, _| panic!("observer")).keep();
        }),
    ];
    for (label, setup) in scenarios {
        let recorder = Recorder::default();
        let registry = registry_with(finalising_probe(&recorder).def);
        let mut input = call("probe");
        setup(&registry, &mut input);
        let (log, _observer) = ResultLog::observe(&registry);
        let result = registry.execute(input).await;
        assert_eq!(log.entries().len(), 1, "{label}");
        assert_eq!(log.entries()[0].1, result, "{label}");
    }
    // The collapse path, in a Code Mode registry.
    let registry = code_mode_registry();
    keep(&registry, counted("probe").def);
    let (log, _observer) = ResultLog::observe(&registry);
    registry.execute(call("probe")).await;
    assert_eq!(log.call_ids(), ["call-1"]);
}
