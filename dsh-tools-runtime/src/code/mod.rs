//! Code Mode (REFERENCE §8–§9): the model writes a TypeScript program against a generated SDK;
//! the program is type-stripped and runs in a fresh sandbox whose `tools.*` bindings go back
//! through the registry's pipeline.

mod bridge;
pub mod clock;
pub mod events;
pub mod flavour;
mod host_work;
#[cfg(feature = "python")]
pub mod monty;
pub mod prompt;
pub mod quickjs;
pub mod runtime;
pub mod sdk;
pub mod sdk_py;
pub mod strip;
pub mod transport;

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ExecutionToken;

pub use clock::{ClockPause, RunClock};
pub use events::{CodeDispatchEvent, CodeEventSink};
pub use host_work::HostWork;
pub use prompt::{PromptError, PromptSection, PromptSurface};
pub use quickjs::{QuickJsConfig, QuickJsRuntime};
pub use runtime::{
    BindingFn, BindingNamespace, CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult,
    CodeRuntime, CodeRuntimeError, ErrorClass,
};
pub use sdk::{SdkTool, json_schema_to_ts, render_tools_sdk, sdk_tool_from};
pub use strip::{SourceLimits, StripError, strip_program};

use crate::hooks::{AnyHook, DispatchLogFn};
use crate::registry::{PresentationMode, Registration, Scope, ToolRegistry};

impl Scope {
    /// Adds a `tools/code-dispatch-log` listener that sees only the sub-calls of `run_code` calls
    /// made by this scope (and its descendants). See [`ToolRegistry::on_code_dispatch_log`].
    pub fn on_code_dispatch_log(&self, listener: DispatchLogFn) -> Registration {
        self.registry()
            .hook_in(Some(self.id()), AnyHook::DispatchLog(listener))
    }
}

/// The SDK section per scope, with the registry generation it was built at.
type SdkCache = std::collections::HashMap<Option<dsh_tools::exec::ScopeId>, (u64, Arc<str>)>;

/// The Code Mode state of one registry.
#[derive(Default)]
pub(crate) struct CodeState {
    runtime: RwLock<Option<Arc<dyn CodeRuntime>>>,
    sink: RwLock<Option<Arc<dyn CodeEventSink>>>,
    /// The `run_code` transport per [flavour](flavour::FLAVOURS), built on first use.
    transports: [OnceLock<Option<ToolDefinition>>; flavour::FLAVOURS.len()],
    /// The SDK section per scope, with the registry generation it was built at.
    sdk_cache: std::sync::Mutex<SdkCache>,
    /// The clocks of the `run_code` executions in progress, by execution token: a sub-call's
    /// approval wait pauses its run's clock.
    clocks: std::sync::Mutex<std::collections::HashMap<ExecutionToken, RunClock>>,
}

/// A run clock registered for one `run_code` execution; unregistered on drop.
pub(crate) struct OpenRunClock<'a> {
    registry: &'a ToolRegistry,
    token: ExecutionToken,
    clock: RunClock,
}

impl OpenRunClock<'_> {
    pub(crate) fn clock(&self) -> &RunClock {
        &self.clock
    }
}

impl Drop for OpenRunClock<'_> {
    fn drop(&mut self) {
        self.registry.clocks().remove(&self.token);
    }
}

/// The actionable message when a non-native mode has no runtime (REFERENCE §8.1, in Rust terms).
pub(crate) fn missing_runtime_message(mode: PresentationMode) -> String {
    format!(
        "dsh-tools: mode \"{}\" requires a code runtime — set one with ToolRegistry::set_code_runtime (e.g. dsh_tools_runtime::code::quickjs::QuickJsRuntime) or use PresentationMode::Native",
        mode.as_str()
    )
}

impl ToolRegistry {
    /// Mounts the code runtime Code Mode programs run in.
    pub fn set_code_runtime(&self, runtime: Arc<dyn CodeRuntime>) {
        // The SDK section is in the runtime's language.
        self.inner
            .code
            .sdk_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self
            .inner
            .code
            .runtime
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(runtime);
    }

    /// The mounted code runtime.
    pub fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        self.inner
            .code
            .runtime
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Mounts the sink of `tool/code-dispatch-start` / `tool/code-dispatch` events.
    pub fn set_code_event_sink(&self, sink: Arc<dyn CodeEventSink>) {
        *self
            .inner
            .code
            .sink
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Adds a global `tools/code-dispatch-log` listener (REFERENCE §8.6 rule 14): it shapes the
    /// content every `tool/code-dispatch` event records. See [`DispatchLogFn`].
    pub fn on_code_dispatch_log(&self, listener: DispatchLogFn) -> Registration {
        self.hook_in(None, AnyHook::DispatchLog(listener))
    }

    fn clocks(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<ExecutionToken, RunClock>> {
        self.inner
            .code
            .clocks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a fresh run clock for the `run_code` execution `token`.
    pub(crate) fn open_run_clock(&self, token: ExecutionToken) -> OpenRunClock<'_> {
        let clock = RunClock::new();
        self.clocks().insert(token, clock.clone());
        OpenRunClock {
            registry: self,
            token,
            clock,
        }
    }

    /// Pauses the clock of the `run_code` run `parent` belongs to, if it is one.
    pub(crate) fn pause_run_clock(&self, parent: Option<ExecutionToken>) -> Option<ClockPause> {
        let parent = parent?;
        self.clocks().get(&parent).map(RunClock::pause)
    }

    /// The SDK section of `scope`, rebuilt only when the registry changed since it was built.
    pub(crate) fn cached_sdk(
        &self,
        scope: Option<dsh_tools::exec::ScopeId>,
        build: impl FnOnce() -> String,
    ) -> Arc<str> {
        let generation = self.inner.generation();
        let cache = &self.inner.code.sdk_cache;
        if let Some((built_at, text)) = cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&scope)
            && *built_at == generation
        {
            return Arc::clone(text);
        }
        let text: Arc<str> = build().into();
        cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(scope, (generation, Arc::clone(&text)));
        text
    }

    pub(crate) fn event_sink(&self) -> Option<Arc<dyn CodeEventSink>> {
        self.inner
            .code
            .sink
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The shared `run_code` transport (the same definition for every code-mode scope), in the
    /// flavour of the mounted runtime's language (TypeScript when none is mounted).
    pub(crate) fn transport(&self) -> Option<ToolDefinition> {
        let runtime = self.code_runtime();
        let index = flavour::index_or_typescript(runtime.as_deref().map(|r| r.language()));
        self.inner.code.transports[index]
            .get_or_init(|| {
                transport::run_code_definition(
                    Arc::downgrade(&self.inner),
                    &flavour::FLAVOURS[index],
                )
                .inspect_err(|e| tracing::error!("run_code transport is invalid: {e}"))
                .ok()
            })
            .clone()
    }
}
