//! Hooks (`docs/CONTRACTS.md`, "Hooks", and stages 4, 7, 10, 15 and 20 of "Stages"): guard
//! evaluation order, waterfall order, scope filtering of every hook kind, execution identity, and
//! result observers.

use crate::support;

use std::sync::{Arc, Mutex};

use dsh_tools::exec::{ExecutionToken, PreToolDecision, ToolExecution, ToolExecutionInput};
use dsh_tools_runtime::hooks::{execute_wrapper_fn, post_execute_fn, pre_execute_fn};
use dsh_tools_runtime::{Scope, ToolRegistry};
use serde_json::{Value, json};
use support::{
    Recorder, ResultLog, call, call_as, counted, deciding_pre, failure, keep, recording_post,
    recording_pre, recording_wrapper, text_success, wire,
};

/// A registry with the counted tool `probe`.
fn registry_with_probe() -> (ToolRegistry, support::Counted) {
    let registry = ToolRegistry::new();
    let probe = counted("probe");
    keep(&registry, probe.def.clone());
    (registry, probe)
}

/// A guard that records `label` and answers `reason`.
fn recording_guard(
    recorder: &Recorder,
    label: &str,
    reason: Option<&str>,
) -> impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static {
    let (recorder, label, reason) = (
        recorder.clone(),
        label.to_owned(),
        reason.map(str::to_owned),
    );
    move |_| {
        recorder.push(label.clone());
        reason.clone()
    }
}

// --- guards --------------------------------------------------------------------------------------

#[tokio::test]
async fn guards_run_global_first_then_chain_layers_farthest_first() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    let root = registry.new_scope();
    let mid = root.child();
    let leaf = mid.child();
    // Registered in an order that differs from the evaluation order.
    leaf.guard(recording_guard(&recorder, "leaf", None)).keep();
    mid.guard(recording_guard(&recorder, "mid", None)).keep();
    registry
        .guard(recording_guard(&recorder, "global 1", None))
        .keep();
    root.guard(recording_guard(&recorder, "root", None)).keep();
    registry
        .guard(recording_guard(&recorder, "global 2", None))
        .keep();
    let result = registry.execute(call_as("probe", &leaf)).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(
        recorder.entries(),
        ["global 1", "global 2", "root", "mid", "leaf"]
    );
}

#[tokio::test]
async fn the_first_guard_reason_wins_and_later_guards_do_not_run() {
    let (registry, probe) = registry_with_probe();
    let recorder = Recorder::default();
    let parent = registry.new_scope();
    let child = parent.child();
    registry
        .guard(recording_guard(&recorder, "global", None))
        .keep();
    parent
        .guard(recording_guard(&recorder, "parent", Some("parent says no")))
        .keep();
    child
        .guard(recording_guard(&recorder, "child", Some("child says no")))
        .keep();
    let result = registry.execute(call_as("probe", &child)).await;
    assert_eq!(wire(&result), failure("parent says no"));
    assert_eq!(recorder.entries(), ["global", "parent"]);
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn an_empty_guard_reason_still_denies() {
    let (registry, probe) = registry_with_probe();
    registry.guard(|_| Some(String::new())).keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure(""));
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn calls_without_an_agent_run_only_global_guards() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    registry
        .new_scope()
        .guard(recording_guard(&recorder, "scoped", Some("no")))
        .keep();
    registry
        .guard(recording_guard(&recorder, "global", None))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(recorder.entries(), ["global"]);
}

#[tokio::test]
async fn a_scoped_guard_does_not_reach_sibling_scopes() {
    let (registry, _) = registry_with_probe();
    let guarded = registry.new_scope();
    guarded.guard(|_| Some("guarded".into())).keep();
    let sibling = registry.new_scope();
    let result = registry.execute(call_as("probe", &sibling)).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    let denied = registry.execute(call_as("probe", &guarded.child())).await;
    assert_eq!(wire(&denied), failure("guarded"));
}

#[tokio::test]
async fn guards_run_only_after_an_allow() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    registry
        .guard(recording_guard(&recorder, "guard", None))
        .keep();
    let deny = registry.on_pre_execute(deciding_pre(PreToolDecision::Deny {
        reason: "policy".into(),
    }));
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("policy"));
    assert!(recorder.entries().is_empty());
    deny.dispose();
    registry.execute(call("probe")).await;
    assert_eq!(recorder.entries(), ["guard"]);
}

#[tokio::test]
async fn guards_see_the_execution() {
    let (registry, _) = registry_with_probe();
    let agent = registry.new_scope();
    let seen = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&seen);
    registry
        .guard(move |exec| {
            *sink.lock().unwrap() = Some((
                exec.name.to_string(),
                exec.call_id.to_string(),
                exec.arguments.as_deref().cloned(),
                exec.agent,
            ));
            None
        })
        .keep();
    let input = ToolExecutionInput {
        agent: Some(agent.id()),
        ..support::call_with("probe", json!({"k": [1, "v"]}))
    };
    registry.execute(input).await;
    assert_eq!(
        seen.lock().unwrap().clone(),
        Some((
            "probe".to_owned(),
            "call-1".to_owned(),
            Some(json!({"k": [1, "v"]})),
            Some(agent.id())
        ))
    );
}

#[tokio::test]
async fn a_disposed_guard_no_longer_denies_and_guards_do_not_notify() {
    let (registry, _) = registry_with_probe();
    let changes = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&changes);
    registry
        .on_change(move |_| *sink.lock().unwrap() += 1)
        .keep();
    let agent = registry.new_scope();
    let global = registry.guard(|_| Some("global".into()));
    let scoped = agent.guard(|_| Some("scoped".into()));
    global.dispose();
    assert_eq!(
        wire(&registry.execute(call_as("probe", &agent)).await),
        failure("scoped")
    );
    scoped.dispose();
    scoped.dispose();
    assert_eq!(
        wire(&registry.execute(call_as("probe", &agent)).await),
        text_success("probe ran")
    );
    assert_eq!(*changes.lock().unwrap(), 0);
}

// --- waterfall order -----------------------------------------------------------------------------

#[tokio::test]
async fn pre_execute_policies_run_outermost_first_in_registration_order() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    for label in ["first", "second"] {
        let (recorder, label) = (recorder.clone(), label.to_owned());
        registry
            .on_pre_execute(pre_execute_fn(move |_, next| {
                let (recorder, label) = (recorder.clone(), label.clone());
                async move {
                    recorder.push(format!("{label}:before"));
                    let decision = next.run().await;
                    recorder.push(format!("{label}:after"));
                    decision
                }
            }))
            .keep();
    }
    registry.execute(call("probe")).await;
    assert_eq!(
        recorder.entries(),
        [
            "first:before",
            "second:before",
            "second:after",
            "first:after"
        ]
    );
}

#[tokio::test]
async fn a_pre_execute_policy_that_does_not_call_next_short_circuits_the_rest() {
    let (registry, probe) = registry_with_probe();
    let recorder = Recorder::default();
    registry
        .on_pre_execute(deciding_pre(PreToolDecision::Deny {
            reason: "first".into(),
        }))
        .keep();
    registry
        .on_pre_execute(recording_pre(&recorder, "second"))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("first"));
    assert!(recorder.entries().is_empty());
    assert_eq!(probe.runs(), 0);
}

#[tokio::test]
async fn an_outer_policy_may_override_an_inner_decision() {
    let (registry, probe) = registry_with_probe();
    registry
        .on_pre_execute(pre_execute_fn(|_, next| async move {
            let _inner = next.run().await;
            PreToolDecision::Allow
        }))
        .keep();
    registry
        .on_pre_execute(deciding_pre(PreToolDecision::Deny {
            reason: "inner".into(),
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(probe.runs(), 1);
}

#[tokio::test]
async fn execute_wrappers_nest_in_registration_order() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    registry
        .on_execute(recording_wrapper(&recorder, "outer"))
        .keep();
    registry
        .on_execute(recording_wrapper(&recorder, "inner"))
        .keep();
    registry.execute(call("probe")).await;
    assert_eq!(
        recorder.entries(),
        ["outer:before", "inner:before", "inner:after", "outer:after"]
    );
}

#[tokio::test]
async fn post_execute_policies_run_in_registration_order() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    registry
        .on_post_execute(recording_post(&recorder, "first"))
        .keep();
    registry
        .on_post_execute(recording_post(&recorder, "second"))
        .keep();
    registry.execute(call("probe")).await;
    assert_eq!(recorder.entries(), ["first", "second"]);
}

#[tokio::test]
async fn a_disposed_hook_no_longer_runs() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    let pre = registry.on_pre_execute(recording_pre(&recorder, "pre"));
    let wrapper = registry.on_execute(recording_wrapper(&recorder, "wrap"));
    let post = registry.on_post_execute(recording_post(&recorder, "post"));
    let observer = {
        let recorder = recorder.clone();
        registry.on_result(move |_, _| recorder.push("result"))
    };
    for handle in [&pre, &wrapper, &post, &observer] {
        handle.dispose();
        handle.dispose();
    }
    registry.execute(call("probe")).await;
    assert!(recorder.entries().is_empty());
}

#[tokio::test]
async fn a_hook_added_while_a_call_runs_applies_from_the_next_call() {
    let (registry, _) = registry_with_probe();
    let recorder = Recorder::default();
    let late = {
        let (registry, recorder) = (registry.clone(), recorder.clone());
        pre_execute_fn(move |_, next| {
            registry
                .on_post_execute(recording_post(&recorder, "late post"))
                .keep();
            next.run()
        })
    };
    let once = registry.on_pre_execute(late);
    registry.execute(call("probe")).await;
    assert!(recorder.take().is_empty());
    once.dispose();
    registry.execute(call("probe")).await;
    assert_eq!(recorder.entries(), ["late post"]);
}

// --- scope filtering -------------------------------------------------------------------------------

/// The calls `hooked` sees: its own, its child's, a sibling's and an unscoped one.
struct Family {
    registry: ToolRegistry,
    hooked: Scope,
    child: Scope,
    sibling: Scope,
}

fn family() -> Family {
    let (registry, _) = registry_with_probe();
    let hooked = registry.new_scope();
    let child = hooked.child();
    let sibling = registry.new_scope();
    Family {
        registry,
        hooked,
        child,
        sibling,
    }
}

impl Family {
    /// Runs one call per caller, labelled by its call id.
    async fn run_calls(&self) {
        let calls = [
            ("own", Some(&self.hooked)),
            ("child", Some(&self.child)),
            ("sibling", Some(&self.sibling)),
            ("unscoped", None),
        ];
        for (call_id, scope) in calls {
            let input = ToolExecutionInput {
                call_id: call_id.into(),
                agent: scope.map(Scope::id),
                ..call("probe")
            };
            self.registry.execute(input).await;
        }
    }
}

fn call_id_recorder(recorder: &Recorder) -> impl Fn(&ToolExecution) + Send + Sync + 'static {
    let recorder = recorder.clone();
    move |exec| recorder.push(exec.call_id.to_string())
}

#[tokio::test]
async fn a_scoped_pre_execute_policy_sees_its_own_and_descendant_calls_only() {
    let f = family();
    let recorder = Recorder::default();
    let record = call_id_recorder(&recorder);
    f.hooked
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            record(&exec);
            next.run()
        }))
        .keep();
    f.run_calls().await;
    assert_eq!(recorder.entries(), ["own", "child"]);
}

#[tokio::test]
async fn a_scoped_execute_wrapper_sees_its_own_and_descendant_calls_only() {
    let f = family();
    let recorder = Recorder::default();
    let record = call_id_recorder(&recorder);
    f.hooked
        .on_execute(execute_wrapper_fn(move |dispatch, next| {
            record(dispatch.execution());
            next.run(dispatch)
        }))
        .keep();
    f.run_calls().await;
    assert_eq!(recorder.entries(), ["own", "child"]);
}

#[tokio::test]
async fn a_scoped_post_execute_policy_sees_its_own_and_descendant_calls_only() {
    let f = family();
    let recorder = Recorder::default();
    let record = call_id_recorder(&recorder);
    f.hooked
        .on_post_execute(post_execute_fn(move |exec, _, next| {
            record(&exec);
            next.run()
        }))
        .keep();
    f.run_calls().await;
    assert_eq!(recorder.entries(), ["own", "child"]);
}

#[tokio::test]
async fn a_scoped_result_observer_sees_its_own_and_descendant_calls_only() {
    let f = family();
    let (scoped, _scoped_handle) = ResultLog::observe_scope(&f.hooked);
    let (global, _global_handle) = ResultLog::observe(&f.registry);
    f.run_calls().await;
    assert_eq!(scoped.call_ids(), ["own", "child"]);
    assert_eq!(global.call_ids(), ["own", "child", "sibling", "unscoped"]);
}

// --- identity ------------------------------------------------------------------------------------

#[tokio::test]
async fn every_stage_sees_the_same_token_and_argument_snapshot() {
    let registry = ToolRegistry::new();
    type Seen = Arc<Mutex<Vec<(ExecutionToken, Arc<Value>)>>>;
    let seen: Seen = Arc::default();
    let record = |seen: &Seen| {
        let seen = Arc::clone(seen);
        move |exec: &ToolExecution| {
            let args = exec.arguments.clone().expect("lossless arguments");
            seen.lock().unwrap().push((exec.token, args));
        }
    };
    let in_body = record(&seen);
    let body_def = support::base("probe")
        .execute(move |_, ctx| {
            in_body(ctx.execution());
            async { Ok(json!("probe ran")) }
        })
        .build()
        .unwrap();
    keep(&registry, body_def);
    let pre = record(&seen);
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            pre(&exec);
            next.run()
        }))
        .keep();
    let guard = record(&seen);
    registry
        .guard(move |exec| {
            guard(exec);
            None
        })
        .keep();
    let wrap = record(&seen);
    registry
        .on_execute(execute_wrapper_fn(move |dispatch, next| {
            wrap(dispatch.execution());
            next.run(dispatch)
        }))
        .keep();
    let post = record(&seen);
    registry
        .on_post_execute(post_execute_fn(move |exec, _, next| {
            post(&exec);
            next.run()
        }))
        .keep();
    let observe = record(&seen);
    registry.on_result(move |exec, _| observe(exec)).keep();

    registry
        .execute(support::call_with("probe", json!({"a": 1})))
        .await;

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "pre, guard, wrapper, body, post, result");
    for (token, args) in seen.iter() {
        assert_eq!(*token, seen[0].0);
        assert!(Arc::ptr_eq(args, &seen[0].1));
    }
    assert_eq!(*seen[0].1, json!({"a": 1}));
}

#[tokio::test]
async fn each_execution_gets_a_fresh_token() {
    let (registry, _) = registry_with_probe();
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&tokens);
    registry
        .on_result(move |exec, _| sink.lock().unwrap().push(exec.token))
        .keep();
    let parent = ExecutionToken::mint();
    registry.execute(call("probe")).await;
    registry
        .execute(ToolExecutionInput {
            parent: Some(parent),
            ..call("probe")
        })
        .await;
    let tokens = tokens.lock().unwrap();
    assert_ne!(tokens[0], tokens[1]);
    assert_ne!(tokens[1], parent);
}

#[tokio::test]
async fn the_root_call_id_defaults_to_the_call_id() {
    let (registry, _) = registry_with_probe();
    let roots = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&roots);
    registry
        .on_result(move |exec, _| {
            sink.lock().unwrap().push((
                exec.call_id.to_string(),
                exec.root_call_id.to_string(),
                exec.parent,
            ))
        })
        .keep();
    let parent = ExecutionToken::mint();
    registry.execute(call("probe")).await;
    registry
        .execute(ToolExecutionInput {
            call_id: "sub-1".into(),
            root_call_id: Some("call-1".into()),
            parent: Some(parent),
            ..call("probe")
        })
        .await;
    assert_eq!(
        *roots.lock().unwrap(),
        [
            ("call-1".to_owned(), "call-1".to_owned(), None),
            ("sub-1".to_owned(), "call-1".to_owned(), Some(parent)),
        ]
    );
}

// --- stage 20: observers -------------------------------------------------------------------------

#[tokio::test]
async fn a_panicking_observer_is_contained_and_later_observers_still_run() {
    let (registry, _) = registry_with_probe();
    registry
        .on_result(|_, _| panic!("observer exploded"))
        .keep();
    let (log, _handle) = ResultLog::observe(&registry);
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), text_success("probe ran"));
    assert_eq!(log.entries().len(), 1);
    assert_eq!(log.entries()[0].1, result);
}

#[tokio::test]
async fn observers_receive_the_result_the_caller_gets() {
    let (registry, _) = registry_with_probe();
    registry.guard(|_| Some("no".into())).keep();
    let (log, _handle) = ResultLog::observe(&registry);
    let result = registry.execute(call("probe")).await;
    assert_eq!(log.entries(), [("call-1".to_owned(), result)]);
}

// --- Hook kinds ------------------------------------------------------------------------------------

#[tokio::test]
async fn add_hook_registers_any_kind_globally_or_for_a_scope() {
    use dsh_tools_runtime::hooks::{Guard, PreExecute};
    let (registry, probe) = registry_with_probe();
    let agent = registry.new_scope();
    let recorder = Recorder::default();
    registry
        .add_hook::<PreExecute>(recording_pre(&recorder, "global pre"))
        .keep();
    let denial = agent.add_hook::<Guard>(Arc::new(|_: &ToolExecution| Some("scoped".to_owned())));
    assert_eq!(
        wire(&registry.execute(call("probe")).await),
        text_success("probe ran")
    );
    assert_eq!(
        wire(&registry.execute(call_as("probe", &agent)).await),
        failure("scoped")
    );
    denial.dispose();
    assert_eq!(
        wire(&registry.execute(call_as("probe", &agent)).await),
        text_success("probe ran")
    );
    assert_eq!(
        recorder.entries(),
        ["global pre", "global pre", "global pre"]
    );
    assert_eq!(probe.runs(), 2);
}

#[tokio::test]
async fn a_guard_added_by_a_pre_execute_policy_applies_to_the_same_call() {
    let (registry, probe) = registry_with_probe();
    let target = registry.clone();
    registry
        .on_pre_execute(pre_execute_fn(move |_, next| {
            target.guard(|_| Some("added late".into())).keep();
            next.run()
        }))
        .keep();
    let result = registry.execute(call("probe")).await;
    assert_eq!(wire(&result), failure("added late"));
    assert_eq!(probe.runs(), 0);
}
