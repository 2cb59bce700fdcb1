//! What the host writes: [`CodeMode`] installs Code Mode on a registry, and [`CodeModeExt`]
//! gives the registry Code Mode's host methods.

use std::future::Future;
use std::sync::{Arc, PoisonError};

use dsh_tools::exec::ToolExecutionInput;

use super::durable::{self, ContinuationError, Durability, Resume, RunOutcome};
use super::state::CodeModeState;
use super::{CodeEventSink, CodeRuntime, runs};
use dsh_tools_core::{RegistryError, ToolRegistry};

/// Code Mode, ready to install on a registry: the code runtime its programs run in, and
/// optionally the sink of its dispatch events. Installing it gives every scope presenting in
/// `code` or `both` the `run_code` tool and its SDK (`docs/CONTRACTS.md`, "Code Mode").
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools_runtime::code::CodeMode;
/// use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
/// use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
///
/// let registry = ToolRegistry::with_config(RegistryConfig {
///     mode: PresentationMode::Code,
///     ..RegistryConfig::default()
/// });
/// CodeMode::new(Arc::new(QuickJsRuntime::default())).install(&registry).unwrap();
/// assert_eq!(registry.known_names(None).len(), 0);
/// assert!(registry.get("run_code", None).is_some());
/// ```
pub struct CodeMode {
    runtime: Arc<dyn CodeRuntime>,
    sink: Option<Arc<dyn CodeEventSink>>,
}

impl std::fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeMode")
            .field("language", &self.runtime.language())
            .finish_non_exhaustive()
    }
}

impl CodeMode {
    /// Code Mode whose programs run in `runtime`.
    pub fn new(runtime: Arc<dyn CodeRuntime>) -> Self {
        Self {
            runtime,
            sink: None,
        }
    }

    /// Sends `tool/code-dispatch-start` / `tool/code-dispatch` events to `sink` (see
    /// [`CodeModeExt::set_code_event_sink`]).
    #[must_use]
    pub fn with_event_sink(mut self, sink: Arc<dyn CodeEventSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Installs Code Mode on `registry`: its scope extension, and the hooks through which its
    /// runs take part in approval. Refused when `run_code` is already held (Code Mode is
    /// installed, or a stored tool has the name).
    pub fn install(self, registry: &ToolRegistry) -> Result<(), RegistryError> {
        let state = Arc::new(CodeModeState::new(
            registry.downgrade(),
            self.runtime,
            self.sink,
        ));
        registry.install_extension(Arc::clone(&state) as _)?;
        runs::install_hooks(registry, &state.runs);
        Ok(())
    }
}

/// Code Mode's host methods on a registry (`use dsh_tools_runtime::code::CodeModeExt`). On a
/// registry without Code Mode installed, the setters do nothing and the runs fail.
pub trait CodeModeExt {
    /// Mounts the code runtime Code Mode programs run in, in place of the installed one.
    fn set_code_runtime(&self, runtime: Arc<dyn CodeRuntime>);

    /// The mounted code runtime.
    fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>>;

    /// Mounts the sink of `tool/code-dispatch-start` / `tool/code-dispatch` events.
    fn set_code_event_sink(&self, sink: Arc<dyn CodeEventSink>);

    /// Runs a `run_code` call (`input.name` must be `run_code`) with suspension enabled: a
    /// sub-call whose pre-execute decision is `ask` suspends the run instead of asking the
    /// approval service (see [`durable`](super::durable)).
    fn run_code_suspendable(
        &self,
        input: ToolExecutionInput,
        durability: &Durability,
    ) -> impl Future<Output = RunOutcome> + Send;

    /// Resumes a suspended run: opens `continuation` with the durability's key, spends its id,
    /// and runs the program again by replay with `resume.decision` for its pending calls.
    ///
    /// A continuation that is not one, was altered or truncated, was sealed with another key,
    /// or was already resumed is refused before anything runs.
    fn resume_code(
        &self,
        continuation: &str,
        resume: Resume,
        durability: &Durability,
    ) -> impl Future<Output = Result<RunOutcome, ContinuationError>> + Send;
}

impl CodeModeExt for ToolRegistry {
    fn set_code_runtime(&self, runtime: Arc<dyn CodeRuntime>) {
        if let Some(code) = CodeModeState::of(self) {
            *code.runtime.write().unwrap_or_else(PoisonError::into_inner) = Some(runtime);
        }
    }

    fn code_runtime(&self) -> Option<Arc<dyn CodeRuntime>> {
        CodeModeState::of(self)?.runtime()
    }

    fn set_code_event_sink(&self, sink: Arc<dyn CodeEventSink>) {
        if let Some(code) = CodeModeState::of(self) {
            *code.sink.write().unwrap_or_else(PoisonError::into_inner) = Some(sink);
        }
    }

    fn run_code_suspendable(
        &self,
        input: ToolExecutionInput,
        durability: &Durability,
    ) -> impl Future<Output = RunOutcome> + Send {
        durable::run_code_suspendable(self, input, durability)
    }

    fn resume_code(
        &self,
        continuation: &str,
        resume: Resume,
        durability: &Durability,
    ) -> impl Future<Output = Result<RunOutcome, ContinuationError>> + Send {
        durable::resume_code(self, continuation, resume, durability)
    }
}
