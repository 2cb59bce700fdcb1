//! The tool registry: a global layer plus scopes (REFERENCE §5).

mod handle;
mod layer;
mod mutate;
pub use mutate::ToolRestriction;
mod scope;
mod view;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use dsh_tools::exec::{ScopeId, StateMap, ToolExecutionInput, ToolExecutionMode};
use dsh_tools::{ToolDefinition, ToolSchemaWire};

use crate::approval::ApprovalService;
use crate::hooks::HookTables;

pub(crate) use handle::Effect;
pub use handle::Registration;
pub(crate) use layer::RegistryState;
pub use scope::Scope;

/// How a scope's tools are presented to the model (REFERENCE §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PresentationMode {
    /// Native function calling (the default).
    #[default]
    Native,
    /// Code Mode only: the model calls `run_code`; native tools are reached from programs.
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

/// Registry configuration (REFERENCE §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryConfig {
    /// The deployment's default presentation mode.
    pub mode: PresentationMode,
    /// How many parallel-safe calls of one batch (or one Code Mode run) may run at once.
    pub max_parallel_sub_calls: NonZeroUsize,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            mode: PresentationMode::Native,
            max_parallel_sub_calls: NonZeroUsize::new(10).unwrap_or(NonZeroUsize::MIN),
        }
    }
}

/// A registry change (REFERENCE §5.9), delivered unfiltered to every change listener.
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
    /// A restriction was added or lifted, or a presentation mode declared or lifted.
    ScopeChanged {
        /// The scope.
        scope: ScopeId,
    },
}

pub(crate) type ChangeListener = Arc<dyn Fn(&RegistryChange) + Send + Sync>;

pub(crate) struct Inner {
    pub(crate) config: RegistryConfig,
    pub(crate) state: RwLock<RegistryState>,
    pub(crate) hooks: RwLock<Arc<HookTables>>,
    pub(crate) listeners: RwLock<Vec<(u64, ChangeListener)>>,
    pub(crate) approval: RwLock<Option<Arc<dyn ApprovalService>>>,
    pub(crate) states: RwLock<Arc<StateMap>>,
    #[cfg(feature = "code-mode")]
    pub(crate) code: crate::code::CodeState,
    ids: AtomicU64,
    /// Bumped by every write to the registry state: a cached projection (the SDK text) built
    /// at one generation is stale at any other.
    generation: AtomicU64,
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
        self.generation.fetch_add(1, Ordering::SeqCst);
        guard
    }

    /// The current state generation (see [`Inner::write`]).
    #[cfg(feature = "code-mode")]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(crate) fn hook_tables(&self) -> Arc<HookTables> {
        Arc::clone(&self.hooks.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn edit_hooks(&self, edit: impl FnOnce(&mut HookTables)) {
        let mut guard = self.hooks.write().unwrap_or_else(PoisonError::into_inner);
        edit(Arc::make_mut(&mut guard));
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
                hooks: RwLock::new(Arc::new(HookTables::default())),
                listeners: RwLock::new(Vec::new()),
                approval: RwLock::new(None),
                states: RwLock::new(Arc::new(StateMap::default())),
                #[cfg(feature = "code-mode")]
                code: crate::code::CodeState::default(),
                ids: AtomicU64::new(1),
                generation: AtomicU64::new(0),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> RegistryConfig {
        self.inner.config
    }

    /// Creates a new top-level scope (an agent).
    pub fn scope(&self) -> Scope {
        Scope::create(self, None)
    }

    /// The visible definition named `name` as `scope` sees it (shadowing and restrictions
    /// applied; `None` = the global view).
    pub fn get(&self, name: &str, scope: Option<ScopeId>) -> Option<ToolDefinition> {
        if name == crate::RUN_CODE_NAME {
            return self.transport_for(scope);
        }
        view::get(&self.inner.read(), name, scope)
    }

    /// The `run_code` transport when `scope`'s mode is not native (REFERENCE §5.4 rule 6).
    fn transport_for(&self, scope: Option<ScopeId>) -> Option<ToolDefinition> {
        #[cfg(feature = "code-mode")]
        if self.effective_mode(scope) != PresentationMode::Native {
            return self.transport();
        }
        let _ = scope;
        None
    }

    /// Every definition `scope` can see, in visible order.
    pub fn visible(&self, scope: Option<ScopeId>) -> Vec<ToolDefinition> {
        let mut visible = view::view(&self.inner.read(), scope).visible;
        visible.extend(self.transport_for(scope));
        visible
    }

    /// The pre-restriction name universe of `scope` (inherited names plus its own).
    pub fn known_names(&self, scope: Option<ScopeId>) -> Vec<String> {
        view::view(&self.inner.read(), scope).known_names
    }

    /// The model-facing schemas of the visible tools (fresh copies the caller may mutate).
    pub fn schemas(&self, scope: Option<ScopeId>) -> Vec<ToolSchemaWire> {
        self.visible(scope)
            .iter()
            .map(ToolDefinition::schema)
            .collect()
    }

    /// The effective presentation mode of `scope`.
    pub fn effective_mode(&self, scope: Option<ScopeId>) -> PresentationMode {
        self.inner
            .read()
            .declared_mode(scope)
            .unwrap_or(self.inner.config.mode)
    }

    /// How the call may be scheduled (REFERENCE §5.5): parallel only when the resolved tool
    /// classifies these raw arguments as concurrency-safe; otherwise exclusive.
    pub fn execution_mode(&self, input: &ToolExecutionInput) -> ToolExecutionMode {
        let Some(def) = self.resolve_executable(&input.name, input.agent, input.parent.is_some())
        else {
            return ToolExecutionMode::Exclusive;
        };
        let args = &input.arguments;
        let safe = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            def.is_concurrency_safe(args)
        }))
        .unwrap_or(false);
        if safe {
            ToolExecutionMode::Parallel
        } else {
            ToolExecutionMode::Exclusive
        }
    }

    /// The definition a call may execute: visible, and not collapsed behind `run_code`.
    pub(crate) fn resolve_executable(
        &self,
        name: &str,
        agent: Option<ScopeId>,
        nested: bool,
    ) -> Option<ToolDefinition> {
        if name == crate::RUN_CODE_NAME {
            return self.transport_for(agent);
        }
        let state = self.inner.read();
        let def = view::get(&state, name, agent)?;
        let mode = state.declared_mode(agent).unwrap_or(self.inner.config.mode);
        let collapsed = !nested && mode == PresentationMode::Code;
        (!collapsed).then_some(def)
    }

    /// Mounts the host's approval service (consulted when a pre-execute policy asks).
    pub fn set_approval(&self, service: Arc<dyn ApprovalService>) {
        *self
            .inner
            .approval
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(service);
    }

    /// Makes host state available to `State<T>` tool parameters.
    pub fn provide_state<T: Send + Sync + 'static>(&self, value: Arc<T>) {
        let mut guard = self
            .inner
            .states
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::make_mut(&mut guard).insert(value);
    }
}
