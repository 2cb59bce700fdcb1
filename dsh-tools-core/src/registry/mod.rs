//! The tool registry: a global layer plus scopes (`docs/CONTRACTS.md`, "The registry") — storage
//! and visibility.
//!
//! The registry stores tools, restrictions and presentation modes per layer and answers what a
//! scope sees. Everything about running a call belongs to the [`Pipeline`] it owns; the host's
//! entry points into it (`execute`, `execute_batch`, the hook registrations) are in `host.rs`.
//! An extension that adds tools of its own (Code Mode's transport) plugs in through
//! [`ScopeExtension`], installed by the host.

mod deferral;
mod extension;
mod handle;
mod host;
mod lane;
mod layer;
mod mutate;
mod prompt;
mod scope;
mod tool_search;
mod view;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, Weak};

use dsh_tools::exec::{ScopeId, ToolExecutionInput, ToolExecutionMode};
use dsh_tools::{Callers, ToolDefinition, ToolSchemaWire};

use crate::batch::BatchOptions;
use crate::error::ToolNotFoundError;
use crate::pipeline::{self, Host, Pipeline, Resolution};
use crate::tokens::budget::DEFAULT_MAX_RESULT_TOKENS;

pub use deferral::TOOL_SEARCH_NAME;
pub use extension::{ReservedName, ScopeExtension};
pub(crate) use handle::Effect;
pub use handle::Registration;
pub use lane::Lane;
pub(crate) use layer::RegistryState;
pub use mutate::ToolRestriction;
pub use prompt::{PromptError, PromptSection, PromptSurface};
pub use scope::Scope;
pub use tool_search::{TOOL_SEARCH_DEFAULT_LIMIT, TOOL_SEARCH_DESCRIPTION, TOOL_SEARCH_MAX_LIMIT};

/// How a scope's tools are presented to the model (`docs/CONTRACTS.md`, "Presentation modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PresentationMode {
    /// Native function calling (the default).
    #[default]
    Native,
    /// Code Mode only: the model calls the Code Mode tool; native tools are reached from
    /// programs.
    Code,
    /// Both.
    Both,
}

impl PresentationMode {
    /// The wire name: `native`, `code` or `both`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Code => "code",
            Self::Both => "both",
        }
    }
}

/// Registry configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryConfig {
    /// The deployment's default presentation mode.
    pub mode: PresentationMode,
    /// How many parallel-safe calls of one batch (or one Code Mode run) may run at once.
    pub max_parallel_sub_calls: NonZeroUsize,
    /// The budget, in tokens, of each top-level result's model-facing content when neither the
    /// tool nor the calling scope sets one (`docs/CONTRACTS.md`, "Result budgets"); `None` turns
    /// budgets off. Default [`DEFAULT_MAX_RESULT_TOKENS`] (25,000).
    pub max_result_tokens: Option<usize>,
    /// How a tool without a renderer of its own shows its value to the model: compact JSON
    /// (the default) or pretty ([`ResultJson`](dsh_tools::json::ResultJson)).
    pub result_json: dsh_tools::json::ResultJson,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            mode: PresentationMode::Native,
            max_parallel_sub_calls: BatchOptions::default().max_parallel,
            max_result_tokens: Some(DEFAULT_MAX_RESULT_TOKENS),
            result_json: dsh_tools::json::ResultJson::default(),
        }
    }
}

impl From<RegistryConfig> for BatchOptions {
    /// The cap of a registry: `max_parallel_sub_calls`.
    fn from(config: RegistryConfig) -> Self {
        Self::new(config.max_parallel_sub_calls)
    }
}

/// A registry change (`docs/CONTRACTS.md`, "The registry", change events), delivered unfiltered to
/// every change listener.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryChange {
    /// A tool was registered.
    Registered {
        /// Its name.
        name: String,
        /// Its scope (`None` = global).
        scope: Option<ScopeId>,
    },
    /// A tool was unregistered.
    Unregistered {
        /// Its name.
        name: String,
        /// Its scope.
        scope: Option<ScopeId>,
    },
    /// A restriction was added or lifted, a presentation mode declared or lifted, or a result
    /// budget set or lifted.
    ScopeChanged {
        /// The scope.
        scope: ScopeId,
    },
}

pub(crate) type ChangeListener = Arc<dyn Fn(&RegistryChange) + Send + Sync>;

pub(crate) struct Inner {
    config: RegistryConfig,
    state: RwLock<RegistryState>,
    listeners: RwLock<Vec<(u64, ChangeListener)>>,
    /// Where calls run.
    pipeline: Pipeline,
    /// The `tool_search` definition, built on first use.
    tool_search: OnceLock<ToolDefinition>,
    /// The search index of each scope's deferred tools.
    pub(crate) search_indexes: deferral::IndexCache,
    ids: AtomicU64,
    /// Bumped by every write to `state` (see [`Host::generation`]).
    generation: AtomicU64,
    /// No budget smaller than this was ever configured or declared (see
    /// [`Host::budget_floor`]); it only goes down.
    pub(crate) budget_floor: AtomicUsize,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Inner {
    pub(crate) fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, RegistryState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, RegistryState> {
        let guard = self.state.write().unwrap_or_else(PoisonError::into_inner);
        self.generation.fetch_add(1, Ordering::AcqRel);
        guard
    }
}

/// The tool registry: global and scoped registrations, visibility, and the execution pipeline.
///
/// Cheap to clone (one `Arc`), `Send + Sync`; reads (visibility, schemas) take a shared lock and
/// never block each other.
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::ToolRegistry;
///
/// let registry = ToolRegistry::new();
/// let echo = ToolDefinition::builder("echo")
///     .description("Echo.")
///     .execute(|args, _| async move { Ok((*args).clone()) })
///     .build()
///     .unwrap();
/// let handle = registry.register(echo).unwrap();
/// assert_eq!(registry.known_names(None), ["echo"]);
/// handle.dispose();
/// assert!(registry.get("echo", None).is_none());
/// ```
#[derive(Clone, Debug)]
pub struct ToolRegistry {
    pub(crate) inner: Arc<Inner>,
}

/// A registry held weakly, by what the registry itself owns (an extension's tools): it does not
/// keep the registry alive.
///
/// ```
/// use dsh_tools_runtime::ToolRegistry;
/// let registry = ToolRegistry::new();
/// let weak = registry.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(registry);
/// assert!(weak.upgrade().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct WeakRegistry(Weak<Inner>);

impl WeakRegistry {
    /// The registry, unless it was dropped.
    pub fn upgrade(&self) -> Option<ToolRegistry> {
        self.0.upgrade().map(|inner| ToolRegistry { inner })
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// A registry with the default configuration (native mode, 10 parallel sub-calls).
    pub fn new() -> Self {
        Self::with_config(RegistryConfig::default())
    }

    /// A registry with `config`.
    pub fn with_config(config: RegistryConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                state: RwLock::new(RegistryState::default()),
                listeners: RwLock::new(Vec::new()),
                pipeline: Pipeline::laying_out(config.result_json),
                tool_search: OnceLock::new(),
                search_indexes: deferral::IndexCache::default(),
                ids: AtomicU64::new(1),
                generation: AtomicU64::new(0),
                budget_floor: AtomicUsize::new(config.max_result_tokens.unwrap_or(usize::MAX)),
            }),
        }
    }

    /// The registry held weakly (see [`WeakRegistry`]).
    pub fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.inner))
    }

    /// The configuration.
    pub fn config(&self) -> RegistryConfig {
        self.inner.config
    }

    /// Creates a new top-level scope (an agent). Dropping its last handle disposes it, unless it
    /// was [kept](Scope::keep).
    pub fn new_scope(&self) -> Scope {
        Scope::create(self, None)
    }

    /// Whether `scope` is a live (not disposed) scope of this registry.
    pub fn is_live(&self, scope: ScopeId) -> bool {
        self.inner.read().layer(Some(scope)).is_some()
    }

    /// The visible definition named `name` as `scope` sees it (shadowing and restrictions
    /// applied; `None` = the global view).
    pub fn get(&self, name: &str, scope: Option<ScopeId>) -> Option<ToolDefinition> {
        let state = self.inner.read();
        if !state.extensions.is_empty() {
            let mode = self.mode_in(&state, scope);
            if let Some(tool) = state.extensions.iter().find_map(|e| e.tool(name, mode)) {
                return Some(tool);
            }
        }
        if name == TOOL_SEARCH_NAME {
            return self.tool_search_in(&state, scope);
        }
        view::get(&state, name, scope)
    }

    /// The `tool_search` definition, when `scope` defers anything.
    fn tool_search_in(
        &self,
        state: &RegistryState,
        scope: Option<ScopeId>,
    ) -> Option<ToolDefinition> {
        let visible = view::view(state, scope).visible;
        deferral::split(state, scope, visible)
            .defers()
            .then(|| self.tool_search())
    }

    /// The registry's `tool_search` definition.
    pub(crate) fn tool_search(&self) -> ToolDefinition {
        self.inner
            .tool_search
            .get_or_init(|| tool_search::definition(self.downgrade()))
            .clone()
    }

    /// Every definition `scope` can see, in visible order — deferred tools included (they are
    /// executable); [`ToolRegistry::shown`] is what the model is shown.
    pub fn visible(&self, scope: Option<ScopeId>) -> Vec<ToolDefinition> {
        let state = self.inner.read();
        let mut visible = view::view(&state, scope).visible;
        let mode = self.mode_in(&state, scope);
        for extension in &state.extensions {
            visible.extend(extension.tools(mode));
        }
        visible
    }

    /// What the model of `scope` is shown, in order: its visible tools that are not deferred,
    /// `tool_search` when it defers any, the deferred tools it found (in the order found), then
    /// what its presentation adds (`run_code`). See [`ToolRegistry::defer_beyond`].
    pub fn shown(&self, scope: Option<ScopeId>) -> Vec<ToolDefinition> {
        let mut shown = self.listing(scope).shown(|| self.tool_search());
        let state = self.inner.read();
        let mode = self.mode_in(&state, scope);
        for extension in &state.extensions {
            shown.extend(extension.tools(mode));
        }
        shown
    }

    /// The pre-restriction name universe of `scope` (inherited names plus its own).
    pub fn known_names(&self, scope: Option<ScopeId>) -> Vec<String> {
        view::view(&self.inner.read(), scope).known_names
    }

    /// The model-facing schemas of the [shown](ToolRegistry::shown) tools the model may call
    /// directly (fresh copies the caller may mutate): a tool with [`Callers::Code`] is left out,
    /// and so are deferred tools not found yet.
    pub fn schemas(&self, scope: Option<ScopeId>) -> Vec<ToolSchemaWire> {
        self.shown(scope)
            .iter()
            .filter(|def| def.callers().model())
            .map(ToolDefinition::schema)
            .collect()
    }

    /// The result budget a call by `scope` gets when its tool sets none: the nearest scope
    /// declaration ([`Scope::set_max_result_tokens`]), else the registry's
    /// [`RegistryConfig::max_result_tokens`]. `None`: results are not cut.
    pub fn result_budget(&self, scope: Option<ScopeId>) -> Option<usize> {
        if scope.is_none() {
            return self.inner.config.max_result_tokens;
        }
        self.inner
            .read()
            .declared_budget(scope)
            .unwrap_or(self.inner.config.max_result_tokens)
    }

    /// The effective presentation mode of `scope`.
    pub fn effective_mode(&self, scope: Option<ScopeId>) -> PresentationMode {
        self.mode_in(&self.inner.read(), scope)
    }

    fn mode_in(&self, state: &RegistryState, scope: Option<ScopeId>) -> PresentationMode {
        state.declared_mode(scope).unwrap_or(self.inner.config.mode)
    }

    /// How the call may be scheduled (`docs/CONTRACTS.md`, "The registry", scheduling): parallel
    /// only when the resolved tool classifies these raw arguments as concurrency-safe; otherwise
    /// exclusive.
    pub fn execution_mode(&self, input: &ToolExecutionInput) -> ToolExecutionMode {
        pipeline::classify(self, input)
    }
}

impl Host for ToolRegistry {
    fn pipeline(&self) -> &Pipeline {
        &self.inner.pipeline
    }

    /// The definition a call runs: an extra tool of an extension, or a visible stored tool —
    /// unless an extension (or, failing one, the callers rule) hides it from direct calls.
    fn resolve(&self, name: &str, agent: Option<ScopeId>, nested: bool) -> Resolution {
        let state = self.inner.read();
        let extensions = &state.extensions[..];
        let mode = match extensions {
            [] => PresentationMode::Native,
            _ => self.mode_in(&state, agent),
        };
        if let Some(tool) = extensions.iter().find_map(|e| e.tool(name, mode)) {
            return Resolution::Runs(tool);
        }
        let found = if name == TOOL_SEARCH_NAME {
            self.tool_search_in(&state, agent)
        } else {
            view::get(&state, name, agent)
        };
        let Some(def) = found else {
            return Resolution::Unknown;
        };
        let refusal = if nested {
            // A call from inside another (a Code Mode sub-call) of a tool only the model calls.
            (def.callers() == Callers::Native).then(|| {
                ToolNotFoundError::hidden(format!(
                    "tool \"{name}\" is callable by the model directly, not from code (callers = \"native\")"
                ))
            })
        } else {
            extensions
                .iter()
                .find_map(|e| e.hides(&def, mode))
                .or_else(|| {
                    (def.callers() == Callers::Code).then(|| {
                        ToolNotFoundError::hidden(format!(
                            "unknown tool \"{name}\": it is callable only from Code Mode programs (callers = \"code\"), not directly"
                        ))
                    })
                })
        };
        drop(state);
        match refusal {
            Some(refusal) => Resolution::Hidden { def, refusal },
            None => Resolution::Runs(def),
        }
    }

    fn result_budget(&self, agent: Option<ScopeId>) -> Option<usize> {
        ToolRegistry::result_budget(self, agent)
    }

    fn budget_floor(&self) -> usize {
        self.inner.budget_floor.load(Ordering::Acquire)
    }

    fn chain(&self, agent: ScopeId) -> Vec<ScopeId> {
        self.inner.read().chain(agent)
    }

    fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }
}
