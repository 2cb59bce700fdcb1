//! Code Mode (`docs/CONTRACTS.md`, "Code Mode"): the model writes a TypeScript program against a
//! generated SDK; the program is type-stripped and runs in a fresh sandbox whose `tools.*` bindings
//! go back through the registry's pipeline.
//!
//! The runtime seam ([`CodeRuntime`] and its request/result types), the run clock, the dispatch
//! events and the `run_code` transport are this module's own items; the QuickJS backend
//! ([`quickjs`]), the SDK renderer ([`sdk`]) and the type strip ([`strip`]) are modules.
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
mod events;
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
pub mod strip;
mod suggest;
mod texts;
mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use dsh_tools::exec::ScopeId;
use dsh_tools::{Callers, ToolDefinition};

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

use dsh_tools_core::extension::{ReservedName, ScopeExtension, WeakRegistry};
use dsh_tools_core::{
    PresentationMode, PromptError, PromptSurface, ToolNotFoundError, ToolRegistry,
};
use durable::DurableStart;

/// The names Code Mode holds in every mode.
const RESERVED: &[ReservedName] = &[ReservedName {
    name: RUN_CODE_NAME,
    holder: "Code Mode presentation transport",
}];

/// The SDK section of one scope, and what it was built from.
struct CachedSdk {
    /// The runtime language and the scope's visible stored tools (compared by identity).
    language: String,
    tools: Vec<ToolDefinition>,
    text: Arc<str>,
    /// The tools' printed fragments (TypeScript), held so they stay reusable while this entry
    /// lives.
    _fragments: Option<sdk::RenderedSdk>,
}

/// The Code Mode state of one registry: its scope extension.
struct CodeModeState {
    registry: WeakRegistry,
    runtime: RwLock<Option<Arc<dyn CodeRuntime>>>,
    sink: RwLock<Option<Arc<dyn CodeEventSink>>>,
    /// The `run_code` transport per [flavour](flavour::FLAVOURS), built on first use.
    transports: [OnceLock<Option<ToolDefinition>>; flavour::FLAVOURS.len()],
    /// The SDK section per scope (`None` = the global view), freed when the scope is disposed.
    sdk_cache: Mutex<HashMap<Option<ScopeId>, CachedSdk>>,
    /// The TypeScript SDK's per-tool fragments, shared by every scope: a scope whose tool set
    /// changed re-prints only the tools no scope's cached SDK holds.
    fragments: sdk::SdkCache,
    /// The `run_code` executions in progress, by execution token (a sub-call's `parent`).
    runs: runs::Runs,
    /// Durable starts waiting for their `run_code` execution, by call id.
    durable_starts: Mutex<HashMap<String, DurableStart>>,
    /// Set once the write-ahead intent wrapper is installed (the first run journaled in a
    /// store): registries without one keep their sub-calls' unwrapped dispatch.
    #[cfg(feature = "store")]
    intents: OnceLock<()>,
}

impl CodeModeState {
    fn new(
        registry: WeakRegistry,
        runtime: Arc<dyn CodeRuntime>,
        sink: Option<Arc<dyn CodeEventSink>>,
    ) -> Self {
        Self {
            registry,
            runtime: RwLock::new(Some(runtime)),
            sink: RwLock::new(sink),
            transports: Default::default(),
            sdk_cache: Mutex::default(),
            fragments: sdk::SdkCache::new(),
            runs: Arc::default(),
            durable_starts: Mutex::default(),
            #[cfg(feature = "store")]
            intents: OnceLock::new(),
        }
    }

    /// The Code Mode state of `registry`, when Code Mode is installed.
    fn of(registry: &ToolRegistry) -> Option<Arc<CodeModeState>> {
        registry.extension::<CodeModeState>()
    }

    fn runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The shared `run_code` transport (the same definition for every code-mode scope), in the
    /// flavour of the mounted runtime's language (TypeScript when none is mounted).
    fn transport(&self) -> Option<ToolDefinition> {
        let runtime = self.runtime();
        let index = flavour::index_or_typescript(runtime.as_deref().map(|r| r.language()));
        self.transports[index]
            .get_or_init(|| {
                transport::run_code_definition(self.registry.clone(), &flavour::FLAVOURS[index])
                    .inspect_err(|e| tracing::error!("run_code transport is invalid: {e}"))
                    .ok()
            })
            .clone()
    }

    /// The SDK section of `scope`, built from `tools` for `language`; rebuilt only when one of
    /// those changed since the last time (another scope's changes never rebuild it). `build`
    /// gives the text and, for TypeScript, the fragments it was assembled from.
    fn cached_sdk(
        &self,
        scope: Option<ScopeId>,
        language: &str,
        tools: &[ToolDefinition],
        build: impl FnOnce() -> (Arc<str>, Option<sdk::RenderedSdk>),
    ) -> Arc<str> {
        let same = |cached: &CachedSdk| {
            cached.language == language
                && cached.tools.len() == tools.len()
                && cached.tools.iter().zip(tools).all(|(a, b)| a.ptr_eq(b))
        };
        let mut cache = self
            .sdk_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(cached) = cache.get(&scope).filter(|cached| same(cached)) {
            return Arc::clone(&cached.text);
        }
        // Rendered under the lock: a scope's SDK is built once even when prompts race.
        let (text, fragments) = build();
        let entry = CachedSdk {
            language: language.to_owned(),
            tools: tools.to_vec(),
            text: Arc::clone(&text),
            _fragments: fragments,
        };
        let replaced = cache.insert(scope, entry);
        drop(cache);
        drop(replaced);
        // A scope disposed meanwhile (or never live) keeps no entry.
        let live = |scope| self.registry.upgrade().is_some_and(|r| r.is_live(scope));
        if let Some(scope) = scope.filter(|scope| !live(*scope)) {
            self.sdk_cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&Some(scope));
        }
        text
    }
}

impl ScopeExtension for CodeModeState {
    fn reserved(&self) -> &[ReservedName] {
        RESERVED
    }

    fn tool(&self, name: &str, mode: PresentationMode) -> Option<ToolDefinition> {
        (name == RUN_CODE_NAME && mode != PresentationMode::Native)
            .then(|| self.transport())
            .flatten()
    }

    fn tools(&self, mode: PresentationMode) -> Vec<ToolDefinition> {
        self.tool(RUN_CODE_NAME, mode).into_iter().collect()
    }

    fn hides(&self, def: &ToolDefinition, mode: PresentationMode) -> Option<ToolNotFoundError> {
        let name = def.name();
        let message = match (def.callers(), mode) {
            (Callers::Native, _) => return None,
            (Callers::Code, PresentationMode::Native) => format!(
                "unknown tool \"{name}\": it is callable only from Code Mode programs (callers = \"code\"), and this scope presents its tools natively"
            ),
            (Callers::Code, _) => format!(
                "unknown tool \"{name}\": it is code-only — call `{name}` from inside a `run_code` program instead"
            ),
            (Callers::Both, PresentationMode::Code) => format!(
                "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
            ),
            (Callers::Both, _) => return None,
        };
        Some(ToolNotFoundError::hidden(message))
    }

    fn prompt(
        &self,
        scope: Option<ScopeId>,
        mode: PresentationMode,
        stored: &[ToolDefinition],
        known_names: &[String],
    ) -> Option<Result<PromptSurface, PromptError>> {
        Some(prompt::surface(self, scope, mode, stored, known_names))
    }

    fn scope_disposed(&self, scope: ScopeId) {
        self.sdk_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&Some(scope));
    }
}

/// The event sink mounted on `registry`'s Code Mode, if any.
fn event_sink(registry: &ToolRegistry) -> Option<Arc<dyn CodeEventSink>> {
    CodeModeState::of(registry)?
        .sink
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use dsh_tools::ToolDefinition;
    use dsh_tools::exec::ScopeId;

    use super::quickjs::{QuickJsConfig, QuickJsRuntime};
    use super::{CodeMode, CodeModeState};
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
