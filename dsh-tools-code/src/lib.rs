//! Code Mode (`docs/CONTRACTS.md`, "Code Mode"): the model writes a TypeScript program against a
//! generated SDK; the program is type-stripped and runs in a fresh sandbox whose `tools.*` bindings
//! go back through the registry's pipeline.
//!
//! This root holds only the module list and the public re-exports: the runtime seam
//! ([`CodeRuntime`] and its request/result types), the run clock, the dispatch events and the
//! `run_code` texts and transport are re-exported here from their modules; the QuickJS backend
//! ([`quickjs`]), the SDK renderer ([`sdk`]) and the type strip ([`strip`]) are public modules.
//! The modules point one way (`ARCHITECTURE.md`, "`dsh-tools-code`: modules"): the texts the
//! model sees and the sandbox layer both backends share at the bottom, the registry's state in
//! the middle, the bridge, the scope extension and the host methods on top.
//!
//! This crate is the heavy half of `dsh-tools-runtime` (swc, QuickJS, and with the `python`
//! feature Monty and ruff's parser), kept apart from the registry and pipeline of
//! `dsh-tools-core` so that a host presenting only native tools builds none of it. Hosts use it as
//! `dsh_tools_runtime::code` (the runtime's default `code-mode` feature); every path below is
//! written that way.
//!
//! The host installs it on a registry ([`CodeMode::install`]). It plugs in through the
//! runtime's public extension API ([`dsh_tools_core::extension`]) and nothing else: it is a scope
//! extension (the `run_code` transport, the tools it hides from direct calls, the prompt
//! sections), it registers approval hooks (a sub-call waiting for a person pauses its program's
//! clock; a durable run's sub-call is answered by its resumption), and it runs each program's
//! sub-calls on a [`Lane`](dsh_tools_core::extension::Lane). Its host methods are [`CodeModeExt`]'s.

#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`) labels each feature-gated item with its feature (`doc_cfg`).
#![cfg_attr(docsrs, feature(doc_cfg))]

mod bridge;
mod clock;
pub mod cost;
mod dispatch_log;
pub mod durable;
mod durable_run;
mod events;
mod extension;
mod fence;
pub mod flavour;
mod host;
mod host_work;
#[cfg(feature = "python")]
pub mod monty;
mod precheck;
mod prompt;
pub mod quickjs;
mod record;
mod runs;
mod runtime;
mod sandbox;
pub mod sdk;
pub mod sdk_py;
mod state;
pub mod strip;
mod suggest;
mod texts;
mod transport;

pub use clock::{ClockPause, RunClock};
pub use dispatch_log::{DispatchLog, DispatchLogEntry, DispatchLogFn, dispatch_log_fn};
pub use events::{CodeDispatchEvent, CodeEventSink};
pub use host::{CodeMode, CodeModeExt};
pub use host_work::HostWork;
pub use record::{RecordedRun, RunRecord, SeededRandom};
pub use runtime::{
    BindingFn, BindingNamespace, CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult,
    CodeRuntime, CodeRuntimeError, ErrorClass, RunSnapshot, SnapshotSlot,
};
pub use texts::{
    CODE_ONLY_TEXT, CODE_PARAMETER_DESCRIPTION, DESCRIPTION_PARAMETER_DESCRIPTION,
    RUN_CODE_DESCRIPTION, RUN_CODE_NAME, TOOL_SEARCH_TEXT, TOOL_SEARCH_TEXT_PY,
};
pub use transport::{
    render_run_code, run_code_output_schema, run_code_parameters, run_code_parameters_for,
};

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use dsh_tools::ToolDefinition;
    use dsh_tools::exec::ScopeId;

    use super::CodeMode;
    use super::quickjs::{QuickJsConfig, QuickJsRuntime};
    use super::state::CodeModeState;
    use dsh_tools_core::{PresentationMode, RegistryConfig, ToolRegistry};

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description("A tool.")
            .execute(|_, _| async { Ok(serde_json::Value::Null) })
            .build()
            .expect("a valid definition")
    }

    fn code_registry() -> ToolRegistry {
        let registry = ToolRegistry::with_config(RegistryConfig {
            mode: PresentationMode::Code,
            ..RegistryConfig::default()
        });
        let runtime = QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config");
        CodeMode::new(Arc::new(runtime))
            .install(&registry)
            .expect("Code Mode installs");
        registry.register(tool("shared")).expect("registers").keep();
        registry
    }

    /// The cached SDK text of `scope`, if any.
    fn cached(registry: &ToolRegistry, scope: ScopeId) -> Option<Arc<str>> {
        let code = CodeModeState::of(registry).expect("Code Mode state");
        let cache = code.sdk_cache.lock().expect("the cache lock");
        cache.get(&Some(scope)).map(|entry| Arc::clone(&entry.text))
    }

    #[test]
    fn another_scope_changing_leaves_a_cached_sdk_in_place() {
        let registry = code_registry();
        let a = registry.new_scope();
        registry.prompt(Some(a.id())).expect("a prompt");
        let built = cached(&registry, a.id()).expect("cached");

        let b = registry.new_scope();
        b.register(tool("b_only")).expect("registers").keep();
        registry.prompt(Some(b.id())).expect("a prompt");
        registry.prompt(Some(a.id())).expect("a prompt");
        let still = cached(&registry, a.id()).expect("cached");
        assert!(
            Arc::ptr_eq(&built, &still),
            "b's changes did not rebuild a's SDK"
        );
        assert!(!still.contains("b_only"));

        a.register(tool("a_only")).expect("registers").keep();
        registry.prompt(Some(a.id())).expect("a prompt");
        let rebuilt = cached(&registry, a.id()).expect("cached");
        assert!(!Arc::ptr_eq(&built, &rebuilt), "a's own change rebuilt it");
        assert!(rebuilt.contains("a_only"));
    }

    #[test]
    fn scopes_share_fragments_and_print_only_their_own_changes() {
        let registry = code_registry();
        let code = CodeModeState::of(&registry).expect("Code Mode state");
        let a = registry.new_scope();
        registry.prompt(Some(a.id())).expect("a prompt");
        let printed = code.fragments.printed();
        assert_eq!(printed, 1, "`shared` printed once");

        // A new scope assembles its SDK from the fragments a's SDK printed.
        let b = registry.new_scope();
        registry.prompt(Some(b.id())).expect("a prompt");
        assert_eq!(code.fragments.printed(), printed);
        b.register(tool("b_only")).expect("registers").keep();
        registry.prompt(Some(b.id())).expect("a prompt");
        assert_eq!(code.fragments.printed(), printed + 1, "only `b_only`");

        // b's change left a's SDK and fragments alone; a's own change prints its new tool only.
        registry.prompt(Some(a.id())).expect("a prompt");
        assert_eq!(code.fragments.printed(), printed + 1);
        a.register(tool("a_only")).expect("registers").keep();
        let text = registry.prompt(Some(a.id())).expect("a prompt");
        assert_eq!(code.fragments.printed(), printed + 2, "only `a_only`");
        let sdk = text
            .sections
            .iter()
            .find(|s| s.name == "tools:sdk")
            .expect("an SDK section");
        let fresh = super::sdk::render_tools_sdk(&[
            super::sdk::sdk_tool_from(&tool("shared")),
            super::sdk::sdk_tool_from(&tool("a_only")),
        ]);
        assert_eq!(sdk.text, fresh);
    }

    #[test]
    fn fragments_die_with_the_sdks_holding_them() {
        let registry = code_registry();
        let code = CodeModeState::of(&registry).expect("Code Mode state");
        let a = registry.new_scope();
        for i in 0..500 {
            let name = format!("churn_{}", i % 7);
            let registration = a.register(tool(&name)).expect("registers");
            registry.prompt(Some(a.id())).expect("a prompt");
            registration.dispose();
            assert!(
                code.fragments.entries() <= 2 * 2 + 64,
                "the map stays bounded: {} entries",
                code.fragments.entries()
            );
        }
        assert_eq!(
            code.fragments.printed(),
            501,
            "`shared` once, each churned tool once"
        );
        registry.prompt(Some(a.id())).expect("a prompt");
        assert_eq!(code.fragments.len(), 1, "only `shared` is live");
        drop(a);
        assert_eq!(
            code.fragments.len(),
            0,
            "a disposed scope frees its fragments"
        );
    }

    #[test]
    fn a_disposed_scope_frees_its_cached_sdk() {
        let registry = code_registry();
        let a = registry.new_scope();
        let id = a.id();
        registry.prompt(Some(id)).expect("a prompt");
        assert!(cached(&registry, id).is_some());
        drop(a);
        assert!(cached(&registry, id).is_none());
        // A prompt asked for a scope that is gone is answered, not cached.
        registry.prompt(Some(id)).expect("a prompt");
        assert!(cached(&registry, id).is_none());
    }
}
