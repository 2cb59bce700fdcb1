//! The Code Mode state of one registry, its scope extension (`docs/CONTRACTS.md`, "Code Mode"):
//! the mounted runtime and event sink, the `run_code` transport per flavour, the SDK section
//! per scope, the executions in progress and the durable starts waiting for theirs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ExecutionToken, ScopeId};

use crate::clock::RunClock;
use crate::durable_run::{DurableRun, DurableStart, RunGrants};
use crate::events::CodeEventSink;
use crate::runs::{self, LiveRun};
use crate::runtime::CodeRuntime;
use crate::{flavour, sdk};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::extension::WeakRegistry;

/// The SDK section of one scope, and what it was built from.
pub(crate) struct CachedSdk {
    /// The runtime language and the scope's visible stored tools (compared by identity).
    language: String,
    tools: Vec<ToolDefinition>,
    pub(crate) text: Arc<str>,
    /// The tools' printed fragments (TypeScript), held so they stay reusable while this entry
    /// lives.
    _fragments: Option<sdk::RenderedSdk>,
}

/// The Code Mode state of one registry: its scope extension.
pub(crate) struct CodeModeState {
    pub(crate) registry: WeakRegistry,
    pub(crate) runtime: RwLock<Option<Arc<dyn CodeRuntime>>>,
    pub(crate) sink: RwLock<Option<Arc<dyn CodeEventSink>>>,
    /// The `run_code` transport per [flavour](flavour::FLAVOURS), built on first use.
    pub(crate) transports: [OnceLock<Option<ToolDefinition>>; flavour::FLAVOURS.len()],
    /// The SDK section per scope (`None` = the global view), freed when the scope is disposed.
    pub(crate) sdk_cache: Mutex<HashMap<Option<ScopeId>, CachedSdk>>,
    /// The TypeScript SDK's per-tool fragments, shared by every scope: a scope whose tool set
    /// changed re-prints only the tools no scope's cached SDK holds.
    pub(crate) fragments: sdk::SdkCache,
    /// The `run_code` executions in progress, by execution token (a sub-call's `parent`).
    pub(crate) runs: runs::Runs,
    /// Durable starts waiting for their `run_code` execution, by call id.
    pub(crate) durable_starts: Mutex<HashMap<String, DurableStart>>,
    /// The write-ahead intent wrapper, installed while a run journaled in a store is live:
    /// registries without one keep their sub-calls' unwrapped dispatch.
    #[cfg(feature = "store")]
    pub(crate) intents: Arc<Mutex<crate::durable_run::link::IntentsWrapper>>,
}

impl CodeModeState {
    pub(crate) fn new(
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
            intents: Arc::default(),
        }
    }

    /// The Code Mode state of `registry`, when Code Mode is installed.
    pub(crate) fn of(registry: &ToolRegistry) -> Option<Arc<CodeModeState>> {
        registry.extension::<CodeModeState>()
    }

    pub(crate) fn runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The SDK section of `scope`, built from `tools` for `language`; rebuilt only when one of
    /// those changed since the last time (another scope's changes never rebuild it). `build`
    /// gives the text and, for TypeScript, the fragments it was assembled from.
    pub(crate) fn cached_sdk(
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

/// The code runtime mounted on `registry`'s Code Mode, if any.
pub(crate) fn code_runtime(registry: &ToolRegistry) -> Option<Arc<dyn CodeRuntime>> {
    CodeModeState::of(registry)?.runtime()
}

/// The event sink mounted on `registry`'s Code Mode, if any.
pub(crate) fn event_sink(registry: &ToolRegistry) -> Option<Arc<dyn CodeEventSink>> {
    CodeModeState::of(registry)?
        .sink
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

impl CodeModeState {
    pub(crate) fn runs(&self) -> MutexGuard<'_, HashMap<ExecutionToken, LiveRun>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn durable_starts(&self) -> MutexGuard<'_, HashMap<String, DurableStart>> {
        self.durable_starts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `start` for the `run_code` execution with call id `run` (its body takes it);
    /// `None` when one is already registered under that id (or the registry has no Code Mode).
    pub(crate) fn register_durable(
        registry: &ToolRegistry,
        run: &str,
        start: DurableStart,
    ) -> Option<RegisteredStart> {
        let code = CodeModeState::of(registry)?;
        let mut starts = code.durable_starts();
        if starts.contains_key(run) {
            return None;
        }
        starts.insert(run.to_owned(), start);
        drop(starts);
        Some(RegisteredStart {
            code,
            run: run.to_owned(),
        })
    }
}

/// A durable start waiting for its execution; whatever the execution did not take is removed
/// on drop (a `run_code` call refused before its body ran).
pub(crate) struct RegisteredStart {
    code: Arc<CodeModeState>,
    run: String,
}

impl Drop for RegisteredStart {
    fn drop(&mut self) {
        self.code.durable_starts().remove(&self.run);
    }
}

/// One `run_code` execution registered as in progress; unregistered on drop.
pub(crate) struct OpenRun {
    code: Option<Arc<CodeModeState>>,
    token: ExecutionToken,
    clock: RunClock,
}

impl OpenRun {
    pub(crate) fn clock(&self) -> &RunClock {
        &self.clock
    }
}

impl Drop for OpenRun {
    fn drop(&mut self) {
        if let Some(code) = &self.code {
            code.runs().remove(&self.token);
        }
    }
}

/// Registers the `run_code` execution `token` of `registry` as in progress, with a fresh run
/// clock (a clock nobody pauses when the registry has no Code Mode state), its durable side and
/// its approvals.
pub(crate) fn open_run(
    registry: &ToolRegistry,
    token: ExecutionToken,
    durable: Option<Arc<DurableRun>>,
    grants: RunGrants,
) -> OpenRun {
    let code = CodeModeState::of(registry);
    let clock = RunClock::new();
    if let Some(code) = &code {
        let run = LiveRun {
            clock: clock.clone(),
            durable,
            grants,
        };
        code.runs().insert(token, run);
    }
    OpenRun { code, token, clock }
}

/// Takes the durable start registered for the `run_code` call `call_id` of `registry`, if any.
pub(crate) fn durable_start(registry: &ToolRegistry, call_id: &str) -> Option<DurableStart> {
    CodeModeState::of(registry)?
        .durable_starts()
        .remove(call_id)
}
