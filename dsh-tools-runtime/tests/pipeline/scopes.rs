//! Scopes (`docs/CONTRACTS.md`, "The registry"): inherited visibility along the parent chain,
//! restrictions and their exact messages, presentation modes, and scope disposal.

use crate::support;

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use dsh_tools::exec::PreToolDecision;
use dsh_tools_runtime::{
    PresentationMode, RegistryChange, RegistryConfig, RegistryError, Scope, ToolRegistry,
    ToolRestriction,
};
use support::{
    Recorder, ResultLog, call_as, deciding_pre, install_code_mode, keep, keep_in, names,
    recording_pre, text_success, tool, wire,
};

fn allow(names: &[&str]) -> ToolRestriction {
    ToolRestriction {
        allow: Some(names.iter().map(|n| (*n).to_owned()).collect()),
        deny: None,
    }
}

fn deny(names: &[&str]) -> ToolRestriction {
    ToolRestriction {
        allow: None,
        deny: Some(names.iter().map(|n| (*n).to_owned()).collect()),
    }
}

/// A registry with global tools `a`, `b`, `c` (in that order).
fn abc() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for name in ["a", "b", "c"] {
        keep(&registry, tool(name));
    }
    registry
}

fn visible(scope: &Scope) -> Vec<String> {
    names(&scope.visible())
}

fn restrict_error(scope: &Scope, filter: ToolRestriction) -> String {
    scope.restrict(filter).unwrap_err().to_string()
}

// --- visibility ----------------------------------------------------------------------------------

#[test]
fn a_fresh_scope_sees_the_globals_in_order() {
    let registry = abc();
    assert_eq!(visible(&registry.new_scope()), ["a", "b", "c"]);
}

#[test]
fn ancestor_tools_append_after_the_globals() {
    let registry = abc();
    let parent = registry.new_scope();
    keep_in(&parent, tool("d"));
    assert_eq!(visible(&parent.child()), ["a", "b", "c", "d"]);
}

#[test]
fn an_ancestor_shadow_keeps_the_first_position() {
    let registry = abc();
    let parent = registry.new_scope();
    let shadow = tool("b");
    keep_in(&parent, shadow.clone());
    let child = parent.child();
    assert_eq!(visible(&child), ["a", "b", "c"]);
    assert!(child.visible()[1].ptr_eq(&shadow));
    assert!(child.get("b").unwrap().ptr_eq(&shadow));
}

#[test]
fn the_nearest_ancestor_shadow_wins() {
    let registry = abc();
    let grandparent = registry.new_scope();
    keep_in(&grandparent, tool("x"));
    keep_in(&grandparent, tool("b"));
    let parent = grandparent.child();
    let nearer = tool("b");
    keep_in(&parent, nearer.clone());
    let child = parent.child();
    assert_eq!(visible(&child), ["a", "b", "c", "x"]);
    assert!(child.get("b").unwrap().ptr_eq(&nearer));
}

#[test]
fn an_own_registration_shadows_in_place() {
    let registry = abc();
    let agent = registry.new_scope();
    let own = tool("b");
    keep_in(&agent, own.clone());
    assert_eq!(visible(&agent), ["a", "b", "c"]);
    assert!(agent.visible()[1].ptr_eq(&own));
}

#[test]
fn an_own_registration_of_a_new_name_appends() {
    let registry = abc();
    let agent = registry.new_scope();
    keep_in(&agent, tool("own"));
    assert_eq!(visible(&agent), ["a", "b", "c", "own"]);
}

#[test]
fn scope_registrations_are_invisible_globally_and_to_siblings() {
    let registry = abc();
    let agent = registry.new_scope();
    keep_in(&agent, tool("own"));
    assert_eq!(names(&registry.visible(None)), ["a", "b", "c"]);
    assert!(registry.get("own", None).is_none());
    assert!(registry.new_scope().get("own").is_none());
}

#[test]
fn an_ancestor_restriction_reaches_every_descendant() {
    let registry = abc();
    let parent = registry.new_scope();
    parent.restrict(deny(&["a"])).unwrap().keep();
    let child = parent.child();
    let grandchild = child.child();
    assert_eq!(visible(&child), ["b", "c"]);
    assert_eq!(visible(&grandchild), ["b", "c"]);
    assert!(grandchild.get("a").is_none());
}

#[test]
fn restrictions_intersect_along_the_chain() {
    let registry = abc();
    let parent = registry.new_scope();
    parent.restrict(allow(&["a", "b"])).unwrap().keep();
    let child = parent.child();
    child.restrict(deny(&["b"])).unwrap().keep();
    assert_eq!(visible(&parent), ["a", "b"]);
    assert_eq!(visible(&child), ["a"]);
}

#[test]
fn a_child_restriction_does_not_reach_its_parent() {
    let registry = abc();
    let parent = registry.new_scope();
    parent.child().restrict(deny(&["a"])).unwrap().keep();
    assert_eq!(visible(&parent), ["a", "b", "c"]);
}

#[test]
fn own_registrations_are_exempt_from_the_scopes_own_restriction() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(deny(&["b"])).unwrap().keep();
    let own = tool("b");
    keep_in(&agent, own.clone());
    // The inherited `b` is not visible, so the own `b` appends.
    assert_eq!(visible(&agent), ["a", "c", "b"]);
    assert!(agent.get("b").unwrap().ptr_eq(&own));
}

#[test]
fn own_registrations_are_exempt_from_ancestor_restrictions() {
    let registry = abc();
    let parent = registry.new_scope();
    parent.restrict(allow(&["a"])).unwrap().keep();
    let child = parent.child();
    keep_in(&child, tool("c"));
    keep_in(&child, tool("mine"));
    assert_eq!(visible(&child), ["a", "c", "mine"]);
}

#[test]
fn known_names_are_the_pre_restriction_universe_plus_own_names() {
    let registry = abc();
    let parent = registry.new_scope();
    keep_in(&parent, tool("p"));
    let agent = parent.child();
    agent.restrict(allow(&["b"])).unwrap().keep();
    keep_in(&agent, tool("own"));
    keep_in(&agent, tool("a"));
    assert_eq!(agent.known_names(), ["a", "b", "c", "p", "own"]);
    assert_eq!(visible(&agent), ["b", "own", "a"]);
}

#[test]
fn get_agrees_with_visible_in_every_scope() {
    let registry = abc();
    let root = registry.new_scope();
    keep_in(&root, tool("b"));
    keep_in(&root, tool("r"));
    root.restrict(deny(&["c"])).unwrap().keep();
    let mid = root.child();
    mid.restrict(allow(&["a", "b", "r"])).unwrap().keep();
    keep_in(&mid, tool("c"));
    let leaf = mid.child();
    leaf.restrict(deny(&["a"])).unwrap().keep();
    keep_in(&leaf, tool("leaf"));
    let sibling = root.child();
    let scopes = [None, Some(&root), Some(&mid), Some(&leaf), Some(&sibling)];
    for scope in scopes {
        let id = scope.map(Scope::id);
        let visible = registry.visible(id);
        for name in ["a", "b", "c", "r", "leaf", "nope"] {
            let by_get = registry.get(name, id);
            let by_view = visible.iter().find(|d| d.name() == name);
            match (by_get, by_view) {
                (None, None) => {}
                (Some(g), Some(v)) => assert!(g.ptr_eq(v), "{name} in {id:?}"),
                (g, v) => panic!("{name} in {id:?}: get {g:?} vs visible {v:?}"),
            }
        }
    }
    // `mid`'s own `c` reaches `leaf` as an inherited entry, which `root`'s deny masks.
    assert_eq!(visible(&leaf), ["b", "r", "leaf"]);
    assert_eq!(visible(&mid), ["a", "b", "r", "c"]);
}

#[test]
fn scope_schemas_follow_the_scope_view() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(deny(&["a"])).unwrap().keep();
    keep_in(&agent, tool("own"));
    let schema_names: Vec<String> = agent.schemas().into_iter().map(|s| s.name).collect();
    assert_eq!(schema_names, ["b", "c", "own"]);
}

// --- restricting ---------------------------------------------------------------------------------

#[test]
fn an_empty_filter_is_rejected() {
    let registry = abc();
    assert_eq!(
        restrict_error(&registry.new_scope(), ToolRestriction::default()),
        "tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)"
    );
}

#[test]
fn an_empty_allow_list_hides_every_inherited_tool_but_not_own_ones() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(allow(&[])).unwrap().keep();
    keep_in(&agent, tool("own"));
    assert_eq!(visible(&agent), ["own"]);
}

#[test]
fn an_ancestor_restriction_also_masks_the_ancestors_own_tools_for_descendants() {
    // Visibility rules 2 and 3 ("The registry"), literally: a descendant inherits the ancestor's
    // own tools, and every chain layer's restriction filters inherited entries; only the exact
    // scope's own layer is exempt.
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(allow(&["a"])).unwrap().keep();
    keep_in(&agent, tool("own"));
    assert_eq!(visible(&agent), ["a", "own"]);
    let child = agent.child();
    assert_eq!(visible(&child), ["a"]);
    assert_eq!(child.known_names(), ["a", "b", "c", "own"]);
}

#[test]
fn an_empty_deny_list_is_accepted_and_hides_nothing() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(deny(&[])).unwrap().keep();
    assert_eq!(visible(&agent), ["a", "b", "c"]);
}

#[test]
fn restricting_run_code_is_rejected_in_allow_and_in_deny() {
    let registry = abc();
    install_code_mode(&registry);
    let agent = registry.new_scope();
    let message = "tools.restrict() cannot name reserved Code Mode presentation transport \"run_code\"; restrict end-capability tools instead";
    assert_eq!(restrict_error(&agent, allow(&["a", "run_code"])), message);
    assert_eq!(restrict_error(&agent, deny(&["run_code"])), message);
}

#[test]
fn an_unknown_name_is_rejected_with_the_sorted_known_list() {
    let registry = ToolRegistry::new();
    for name in ["zeta", "alpha", "Mid"] {
        keep(&registry, tool(name));
    }
    assert_eq!(
        restrict_error(&registry.new_scope(), deny(&["x"])),
        "tools.restrict() names unknown global tool \"x\"; known global tools: Mid, alpha, zeta"
    );
}

#[test]
fn several_unknown_names_use_the_plural_form() {
    let registry = abc();
    assert_eq!(
        restrict_error(
            &registry.new_scope(),
            ToolRestriction {
                allow: Some(vec!["a".into(), "x".into()]),
                deny: Some(vec!["y".into()]),
            }
        ),
        "tools.restrict() names unknown global tools \"x\", \"y\"; known global tools: a, b, c"
    );
}

#[test]
fn unknown_names_are_listed_allow_first_then_deny_with_repeats() {
    let registry = abc();
    let filter = ToolRestriction {
        allow: Some(vec!["y".into(), "a".into()]),
        deny: Some(vec!["x".into(), "y".into()]),
    };
    assert_eq!(
        restrict_error(&registry.new_scope(), filter),
        "tools.restrict() names unknown global tools \"y\", \"x\", \"y\"; known global tools: a, b, c"
    );
}

#[test]
fn no_known_tools_are_listed_as_none() {
    let registry = ToolRegistry::new();
    assert_eq!(
        restrict_error(&registry.new_scope(), allow(&["x"])),
        "tools.restrict() names unknown global tool \"x\"; known global tools: (none)"
    );
}

#[test]
fn own_layer_names_are_not_restrictable() {
    let registry = abc();
    let agent = registry.new_scope();
    keep_in(&agent, tool("own"));
    assert_eq!(
        restrict_error(&agent, deny(&["own"])),
        "tools.restrict() names unknown global tool \"own\"; known global tools: a, b, c"
    );
}

#[test]
fn ancestor_registrations_are_restrictable() {
    let registry = abc();
    let parent = registry.new_scope();
    keep_in(&parent, tool("p"));
    let child = parent.child();
    child.restrict(deny(&["p"])).unwrap().keep();
    assert_eq!(visible(&child), ["a", "b", "c"]);
}

#[test]
fn a_deny_mask_admits_later_registered_globals() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(deny(&["a"])).unwrap().keep();
    keep(&registry, tool("later"));
    assert_eq!(visible(&agent), ["b", "c", "later"]);
}

#[test]
fn an_allow_mask_excludes_later_registered_globals() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.restrict(allow(&["a"])).unwrap().keep();
    keep(&registry, tool("later"));
    assert_eq!(visible(&agent), ["a"]);
}

#[test]
fn lifting_one_restriction_leaves_the_others() {
    let registry = abc();
    let agent = registry.new_scope();
    let no_a = agent.restrict(deny(&["a"])).unwrap();
    agent.restrict(deny(&["b"])).unwrap().keep();
    assert_eq!(visible(&agent), ["c"]);
    no_a.dispose();
    assert_eq!(visible(&agent), ["a", "c"]);
}

#[test]
fn restriction_add_and_lift_notify_once_each_and_dispose_is_idempotent() {
    let registry = abc();
    let agent = registry.new_scope();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |change| sink.lock().unwrap().push(change.clone()))
        .keep();
    let handle = agent.restrict(deny(&["a"])).unwrap();
    handle.dispose();
    handle.dispose();
    let scope_changed = RegistryChange::ScopeChanged { scope: agent.id() };
    assert_eq!(
        *seen.lock().unwrap(),
        [scope_changed.clone(), scope_changed]
    );
    assert_eq!(visible(&agent), ["a", "b", "c"]);
}

#[test]
fn a_panicking_change_listener_rolls_a_restriction_back() {
    let registry = abc();
    let agent = registry.new_scope();
    registry.on_change(|_| panic!("listener exploded")).keep();
    let error = agent.restrict(deny(&["a"])).unwrap_err();
    assert_eq!(
        error,
        RegistryError::ChangeListener("listener exploded".into())
    );
    assert_eq!(visible(&agent), ["a", "b", "c"]);
}

#[test]
fn restricting_a_disposed_scope_is_rejected_without_notifying() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.dispose();
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |_| *sink.lock().unwrap() += 1)
        .keep();
    let error = agent.restrict(deny(&["a"])).unwrap_err();
    assert_eq!(error, RegistryError::ScopeDisposed);
    assert_eq!(*seen.lock().unwrap(), 0);
}

// --- presentation modes --------------------------------------------------------------------------

fn registry_in(mode: PresentationMode) -> ToolRegistry {
    ToolRegistry::with_config(RegistryConfig {
        mode,
        max_parallel_sub_calls: NonZeroUsize::new(10).expect("non-zero"),
        ..RegistryConfig::default()
    })
}

#[test]
fn a_second_presentation_in_one_scope_conflicts() {
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    agent.present_as(PresentationMode::Code).unwrap().keep();
    let error = agent.present_as(PresentationMode::Both).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tools.presentAs(\"both\") conflicts with \"code\" already declared for this scope; one composition selects one presentation"
    );
}

#[test]
fn the_effective_mode_is_the_deployment_default_without_declarations() {
    let registry = registry_in(PresentationMode::Both);
    assert_eq!(registry.effective_mode(None), PresentationMode::Both);
    assert_eq!(
        registry.effective_mode(Some(registry.new_scope().child().id())),
        PresentationMode::Both
    );
}

#[test]
fn the_effective_mode_is_the_nearest_declaration_along_the_chain() {
    let registry = ToolRegistry::new();
    let root = registry.new_scope();
    root.present_as(PresentationMode::Code).unwrap().keep();
    let child = root.child();
    let grandchild = child.child();
    grandchild
        .present_as(PresentationMode::Native)
        .unwrap()
        .keep();
    let leaf = grandchild.child();
    let mode = |scope: &Scope| registry.effective_mode(Some(scope.id()));
    assert_eq!(mode(&root), PresentationMode::Code);
    assert_eq!(mode(&child), PresentationMode::Code);
    assert_eq!(mode(&grandchild), PresentationMode::Native);
    assert_eq!(mode(&leaf), PresentationMode::Native);
    assert_eq!(registry.effective_mode(None), PresentationMode::Native);
}

#[test]
fn disposing_a_presentation_restores_the_default_and_notifies() {
    let registry = registry_in(PresentationMode::Both);
    let agent = registry.new_scope();
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |_| *sink.lock().unwrap() += 1)
        .keep();
    let handle = agent.present_as(PresentationMode::Code).unwrap();
    assert_eq!(
        registry.effective_mode(Some(agent.id())),
        PresentationMode::Code
    );
    handle.dispose();
    assert_eq!(
        registry.effective_mode(Some(agent.id())),
        PresentationMode::Both
    );
    assert_eq!(*seen.lock().unwrap(), 2);
    // The cell is free again.
    agent.present_as(PresentationMode::Native).unwrap().keep();
}

// --- scope lifetime ------------------------------------------------------------------------------

#[tokio::test]
async fn disposing_a_scope_removes_its_tools_restrictions_guards_hooks_and_mode() {
    let registry = abc();
    let agent = registry.new_scope();
    let recorder = Recorder::default();
    keep_in(&agent, tool("own"));
    agent.restrict(deny(&["a"])).unwrap().keep();
    agent.guard(|_| Some("guarded".into())).keep();
    agent.on_pre_execute(recording_pre(&recorder, "pre")).keep();
    let (results, _observer) = ResultLog::observe_scope(&agent);
    agent.present_as(PresentationMode::Code).unwrap().keep();

    agent.dispose();

    assert_eq!(visible(&agent), ["a", "b", "c"]);
    assert_eq!(
        registry.effective_mode(Some(agent.id())),
        PresentationMode::Native
    );
    let result = registry.execute(call_as("a", &agent)).await;
    assert_eq!(wire(&result), text_success("a ran"));
    assert!(
        recorder.entries().is_empty(),
        "the scope's pre hook is gone"
    );
    assert!(results.entries().is_empty(), "the scope's observer is gone");
}

#[test]
fn disposing_a_scope_notifies_its_unregistered_tools_and_its_scope_change() {
    let registry = abc();
    let agent = registry.new_scope();
    keep_in(&agent, tool("one"));
    keep_in(&agent, tool("two"));
    agent.restrict(deny(&["a"])).unwrap().keep();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |change| sink.lock().unwrap().push(change.clone()))
        .keep();
    agent.dispose();
    agent.dispose();
    let scope = Some(agent.id());
    assert_eq!(
        *seen.lock().unwrap(),
        [
            RegistryChange::Unregistered {
                name: "two".into(),
                scope
            },
            RegistryChange::Unregistered {
                name: "one".into(),
                scope
            },
            RegistryChange::ScopeChanged { scope: agent.id() },
        ]
    );
}

#[test]
fn a_disposed_scope_accepts_no_registrations() {
    let registry = abc();
    let agent = registry.new_scope();
    agent.dispose();
    assert_eq!(
        agent.register(tool("x")).unwrap_err(),
        RegistryError::ScopeDisposed
    );
    assert_eq!(
        agent.present_as(PresentationMode::Code).unwrap_err(),
        RegistryError::ScopeDisposed
    );
    assert_eq!(
        RegistryError::ScopeDisposed.to_string(),
        "the scope was disposed; register through a live scope"
    );
}

#[tokio::test]
async fn hooks_and_guards_added_to_a_disposed_scope_are_inert_for_its_children() {
    let registry = abc();
    let parent = registry.new_scope();
    let child = parent.child();
    parent.dispose();
    let recorder = Recorder::default();
    parent
        .on_pre_execute(recording_pre(&recorder, "late pre"))
        .keep();
    parent
        .on_pre_execute(deciding_pre(PreToolDecision::Deny {
            reason: "late deny".into(),
        }))
        .keep();
    parent.guard(|_| Some("late guard".into())).keep();
    let result = registry.execute(call_as("a", &child)).await;
    assert_eq!(wire(&result), text_success("a ran"));
    assert!(recorder.entries().is_empty());
}

#[test]
fn a_child_keeps_its_own_registrations_after_its_parent_is_disposed() {
    let registry = abc();
    let parent = registry.new_scope();
    keep_in(&parent, tool("p"));
    parent.restrict(deny(&["a"])).unwrap().keep();
    let child = parent.child();
    keep_in(&child, tool("mine"));
    parent.dispose();
    assert_eq!(visible(&child), ["a", "b", "c", "mine"]);
}

#[test]
fn disposing_a_scope_registration_after_the_scope_is_a_no_op() {
    let registry = abc();
    let agent = registry.new_scope();
    let handle = agent.register(tool("own")).unwrap();
    agent.dispose();
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |_| *sink.lock().unwrap() += 1)
        .keep();
    handle.dispose();
    assert_eq!(*seen.lock().unwrap(), 0);
}

// --- Scope lifetime (RAII) ---------------------------------------------------------------------

#[tokio::test]
async fn dropping_the_last_handle_of_a_scope_disposes_it() {
    let registry = abc();
    let agent = registry.new_scope();
    let id = agent.id();
    keep_in(&agent, tool("own"));
    agent.restrict(deny(&["a"])).unwrap().keep();
    let recorder = Recorder::default();
    agent.on_pre_execute(recording_pre(&recorder, "pre")).keep();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |change| sink.lock().unwrap().push(change.clone()))
        .keep();

    let other_handle = agent.clone();
    drop(agent);
    assert!(
        registry.get("own", Some(id)).is_some(),
        "a clone still holds the scope"
    );
    assert!(seen.lock().unwrap().is_empty());

    drop(other_handle);
    assert!(registry.get("own", Some(id)).is_none());
    assert_eq!(names(&registry.visible(Some(id))), ["a", "b", "c"]);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            RegistryChange::Unregistered {
                name: "own".into(),
                scope: Some(id)
            },
            RegistryChange::ScopeChanged { scope: id },
        ]
    );
    let mut input = call_as("a", &registry.new_scope());
    input.agent = Some(id);
    assert_eq!(wire(&registry.execute(input).await), text_success("a ran"));
    assert!(
        recorder.entries().is_empty(),
        "the scope's hook went with it"
    );
}

#[test]
fn a_kept_scope_outlives_its_handles_until_disposed() {
    let registry = abc();
    let agent = registry.new_scope();
    keep_in(&agent, tool("own"));
    let disposer = agent.clone();
    let id = agent.keep();
    assert!(registry.get("own", Some(id)).is_some());
    drop(disposer);
    assert!(
        registry.get("own", Some(id)).is_some(),
        "keeping is shared by the clones"
    );
}

#[test]
fn a_dropped_parent_handle_leaves_its_children_in_place() {
    let registry = abc();
    let parent = registry.new_scope();
    keep_in(&parent, tool("p"));
    let child = parent.child();
    keep_in(&child, tool("mine"));
    drop(parent);
    assert_eq!(visible(&child), ["a", "b", "c", "mine"]);
    assert_eq!(visible(&child.child()), ["a", "b", "c", "mine"]);
}
