//! The registry's global surface (`docs/CONTRACTS.md`, "The registry"): register checks and their
//! exact messages, change notifications and rollback, the global view, schema projection and
//! execution-mode classification.

use crate::support;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionMode};
use dsh_tools::{ContentBlock, ToolDefinition};
use dsh_tools_runtime::{
    PresentationMode, RegistryChange, RegistryConfig, RegistryError, ToolRegistry,
};
use serde_json::{Value, json};
use support::{base, counted, install_code_mode, keep, names, tool};

const RESERVED: &str = "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot be registered or shadowed";

fn registry_in(mode: PresentationMode) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        max_parallel_sub_calls: NonZeroUsize::new(10).expect("non-zero"),
        ..RegistryConfig::default()
    });
    install_code_mode(&registry);
    registry
}

/// Collects every change notification.
fn changes(registry: &ToolRegistry) -> Arc<Mutex<Vec<RegistryChange>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |change| sink.lock().expect("lock").push(change.clone()))
        .keep();
    seen
}

// --- registering ---------------------------------------------------------------------------------

#[test]
fn run_code_is_reserved_in_every_mode_globally_and_in_scopes() {
    for mode in [
        PresentationMode::Native,
        PresentationMode::Code,
        PresentationMode::Both,
    ] {
        let registry = registry_in(mode);
        let global = registry.register(tool("run_code")).unwrap_err();
        assert_eq!(global.to_string(), RESERVED, "global, {mode:?}");
        let scoped = registry.new_scope().register(tool("run_code")).unwrap_err();
        assert_eq!(scoped.to_string(), RESERVED, "scoped, {mode:?}");
        assert!(registry.known_names(None).is_empty());
    }
}

#[test]
fn duplicate_global_name_is_rejected_with_the_agent_ctx_hint() {
    let registry = ToolRegistry::new();
    keep(&registry, tool("read"));
    let error = registry.register(tool("read")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool \"read\" is already registered (for a per-agent variant, register through that agent's `agent.ctx` instead)"
    );
}

#[test]
fn duplicate_name_in_one_scope_is_rejected_with_the_scope_message() {
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    agent.register(tool("read")).unwrap().keep();
    let error = agent.register(tool("read")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool \"read\" is already registered in this scope"
    );
}

#[test]
fn a_scope_may_register_a_name_that_exists_globally() {
    let registry = ToolRegistry::new();
    keep(&registry, tool("read"));
    assert!(registry.new_scope().register(tool("read")).is_ok());
}

#[test]
fn register_does_not_validate_raw_parameters() {
    let registry = ToolRegistry::new();
    let raw = base("raw")
        .raw_parameters(json!({"type": "string", "whatever": [1, 2]}))
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap();
    keep(&registry, raw);
    assert_eq!(
        registry.schemas(None)[0].parameters,
        json!({"type": "string", "whatever": [1, 2]})
    );
}

#[test]
fn register_and_unregister_notify_change_listeners() {
    let registry = ToolRegistry::new();
    let seen = changes(&registry);
    let handle = registry.register(tool("read")).unwrap();
    handle.dispose();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            RegistryChange::Registered {
                name: "read".into(),
                scope: None
            },
            RegistryChange::Unregistered {
                name: "read".into(),
                scope: None
            },
        ]
    );
}

#[test]
fn scoped_register_notifies_with_its_scope() {
    let registry = ToolRegistry::new();
    let seen = changes(&registry);
    let agent = registry.new_scope();
    agent.register(tool("read")).unwrap().keep();
    assert_eq!(
        *seen.lock().unwrap(),
        [RegistryChange::Registered {
            name: "read".into(),
            scope: Some(agent.id())
        }]
    );
}

#[test]
fn a_rejected_register_does_not_notify() {
    let registry = registry_in(PresentationMode::Native);
    keep(&registry, tool("read"));
    let seen = changes(&registry);
    assert!(registry.register(tool("read")).is_err());
    assert!(registry.register(tool("run_code")).is_err());
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn dispose_is_idempotent_and_notifies_once() {
    let registry = ToolRegistry::new();
    let handle = registry.register(tool("read")).unwrap();
    let seen = changes(&registry);
    handle.dispose();
    handle.dispose();
    assert!(handle.is_disposed());
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(registry.get("read", None).is_none());
}

#[test]
fn a_panicking_change_listener_rolls_the_register_back() {
    let registry = ToolRegistry::new();
    let armed = Arc::new(AtomicBool::new(true));
    let trigger = Arc::clone(&armed);
    registry
        .on_change(move |_| {
            if trigger.swap(false, Ordering::SeqCst) {
                panic!("listener exploded");
            }
        })
        .keep();
    let error = registry.register(tool("read")).unwrap_err();
    assert_eq!(
        error,
        RegistryError::ChangeListener("listener exploded".into())
    );
    assert!(registry.get("read", None).is_none());
    assert!(registry.known_names(None).is_empty());
    // The rollback freed the name: a later register of it succeeds.
    registry.register(tool("read")).unwrap().keep();
    assert_eq!(registry.known_names(None), ["read"]);
}

#[test]
fn a_panicking_change_listener_rolls_a_scoped_register_back() {
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    let armed = Arc::new(AtomicBool::new(true));
    let trigger = Arc::clone(&armed);
    registry
        .on_change(move |_| {
            if trigger.swap(false, Ordering::SeqCst) {
                panic!("listener exploded");
            }
        })
        .keep();
    assert!(agent.register(tool("read")).is_err());
    assert!(agent.get("read").is_none());
    assert!(agent.register(tool("read")).is_ok());
}

#[test]
fn a_panicking_listener_does_not_stop_an_unregister() {
    let registry = ToolRegistry::new();
    let handle = registry.register(tool("read")).unwrap();
    registry.on_change(|_| panic!("listener exploded")).keep();
    handle.dispose();
    assert!(registry.get("read", None).is_none());
}

#[test]
fn a_disposed_listener_is_not_called() {
    let registry = ToolRegistry::new();
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    let listener = registry.on_change(move |_| *sink.lock().unwrap() += 1);
    listener.dispose();
    keep(&registry, tool("read"));
    assert_eq!(*seen.lock().unwrap(), 0);
}

// --- the global view -----------------------------------------------------------------------------

#[test]
fn the_global_view_keeps_registration_order() {
    let registry = ToolRegistry::new();
    for name in ["zeta", "alpha", "mid"] {
        keep(&registry, tool(name));
    }
    assert_eq!(names(&registry.visible(None)), ["zeta", "alpha", "mid"]);
    assert_eq!(registry.known_names(None), ["zeta", "alpha", "mid"]);
}

#[test]
fn unregistering_keeps_the_order_of_the_rest() {
    let registry = ToolRegistry::new();
    keep(&registry, tool("a"));
    let b = registry.register(tool("b")).unwrap();
    keep(&registry, tool("c"));
    b.dispose();
    keep(&registry, tool("b"));
    assert_eq!(names(&registry.visible(None)), ["a", "c", "b"]);
}

#[test]
fn get_returns_the_registered_definition() {
    let registry = ToolRegistry::new();
    let read = tool("read");
    keep(&registry, read.clone());
    assert!(registry.get("read", None).unwrap().ptr_eq(&read));
    assert!(registry.get("write", None).is_none());
}

#[test]
fn schemas_are_exactly_name_description_parameters() {
    let registry = ToolRegistry::new();
    let rich = base("rich")
        .parameters_json(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .output_json(json!({"type": "string"}))
        .timeout_ms(5_000)
        .concurrency_safe(true)
        .presentation_meta(|_, _| json!({"m": 1}))
        .finalize_content(|_, _| None)
        .present_call(|_| None)
        .render(|_, _| vec![ContentBlock::text("r")])
        .execute(|_, _| async { Ok(json!("x")) })
        .build()
        .unwrap();
    keep(&registry, rich);
    let wire = serde_json::to_value(registry.schemas(None)).unwrap();
    assert_eq!(
        wire,
        json!([{
            "name": "rich",
            "description": "The rich tool.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }])
    );
}

#[test]
fn schemas_are_detached_copies() {
    let registry = ToolRegistry::new();
    keep(&registry, tool("read"));
    let mut first = registry.schemas(None);
    first[0].parameters["properties"]["injected"] = json!({"type": "string"});
    first[0].description.push_str(" (edited)");
    let again = registry.schemas(None);
    assert_eq!(
        again[0].parameters,
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(again[0].description, "The read tool.");
}

#[test]
fn schema_parameter_key_order_is_preserved() {
    let registry = ToolRegistry::new();
    let def = base("ordered")
        .raw_parameters(json!({"type": "object", "properties": {"z": {}, "a": {}, "m": {}}}))
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap();
    keep(&registry, def);
    let text = serde_json::to_string(&registry.schemas(None)[0].parameters).unwrap();
    assert_eq!(
        text,
        r#"{"type":"object","properties":{"z":{},"a":{},"m":{}}}"#
    );
}

// --- scheduling (execution_mode) -----------------------------------------------------------------

fn classified(
    name: &str,
    classify: impl Fn(&Value) -> bool + Send + Sync + 'static,
) -> ToolDefinition {
    base(name)
        .parameters_json(json!({"type": "object", "properties": {"fast": {"type": "boolean"}}}))
        .concurrency_classifier(classify)
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap()
}

#[test]
fn execution_mode_of_an_unknown_tool_is_exclusive() {
    let registry = ToolRegistry::new();
    let input = ToolExecutionInput::new("c", "nope", json!({}));
    assert_eq!(
        registry.execution_mode(&input),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn execution_mode_without_a_classifier_is_exclusive() {
    let registry = ToolRegistry::new();
    keep(&registry, counted("plain").def);
    let input = ToolExecutionInput::new("c", "plain", json!({}));
    assert_eq!(
        registry.execution_mode(&input),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn execution_mode_asks_the_classifier_with_the_raw_arguments() {
    let registry = ToolRegistry::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    keep(
        &registry,
        classified("probe", move |args| {
            sink.lock().unwrap().push(args.clone());
            args["fast"] == json!(true)
        }),
    );
    let fast = ToolExecutionInput::new("c1", "probe", json!({"fast": true}));
    let slow = ToolExecutionInput::new("c2", "probe", json!({"fast": false}));
    assert_eq!(registry.execution_mode(&fast), ToolExecutionMode::Parallel);
    assert_eq!(registry.execution_mode(&slow), ToolExecutionMode::Exclusive);
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"fast": true}), json!({"fast": false})]
    );
}

#[test]
fn execution_mode_of_a_panicking_classifier_is_exclusive() {
    let registry = ToolRegistry::new();
    keep(
        &registry,
        classified("probe", |_| panic!("classifier exploded")),
    );
    let input = ToolExecutionInput::new("c", "probe", json!({}));
    assert_eq!(
        registry.execution_mode(&input),
        ToolExecutionMode::Exclusive
    );
}

#[test]
fn execution_mode_of_a_collapsed_call_is_exclusive_but_nested_calls_classify() {
    let registry = registry_in(PresentationMode::Code);
    keep(&registry, classified("probe", |_| true));
    let direct = ToolExecutionInput::new("c", "probe", json!({}));
    assert_eq!(
        registry.execution_mode(&direct),
        ToolExecutionMode::Exclusive
    );
    let nested = support::nested(direct);
    assert_eq!(
        registry.execution_mode(&nested),
        ToolExecutionMode::Parallel
    );
}
