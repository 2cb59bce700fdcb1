//! Scope handles: an agent's view of the registry and the place its own registrations live.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_tools::exec::{ScopeId, ToolExecution};
use dsh_tools::{ToolDefinition, ToolSet};

use super::mutate::ToolRestriction;
use super::{PresentationMode, Registration, RegistryChange, ToolRegistry};
use crate::error::RegistryError;
use crate::hooks::{
    ExecuteWrapper, ExecuteWrapperFn, Guard, HookKind, PostExecute, PostExecuteFn, PreExecute,
    PreExecuteFn, ResultObserver, ResultObserverFn,
};

/// An agent scope: an opaque key with an optional parent chain (`docs/CONTRACTS.md`, "The
/// registry").
///
/// Registrations made through a scope land in its layer: its tools shadow inherited ones for it
/// (and its descendants), its restrictions mask what it inherits, its hooks see only its calls
/// (and its descendants'). [`Scope::dispose`] removes all of its contributions.
///
/// A scope lives as long as its handles: clones share one scope, and dropping the last one
/// disposes it — unless it was [kept](Scope::keep), in which case it lives until
/// [`Scope::dispose`] or the registry's end. Child scopes are scopes of their own: disposing a
/// parent leaves its children (and what they registered) in place.
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::{ToolRegistry, ToolRestriction};
///
/// let tool = |name: &str| ToolDefinition::builder(name).description("t")
///     .execute(|_, _| async { Ok(serde_json::Value::Null) }).build().unwrap();
/// let registry = ToolRegistry::new();
/// registry.register(tool("read")).unwrap().keep();
/// registry.register(tool("bash")).unwrap().keep();
/// let agent = registry.new_scope();
/// agent.restrict(ToolRestriction { deny: Some(vec!["bash".into()]), ..Default::default() }).unwrap().keep();
/// let names: Vec<String> = agent.visible().iter().map(|d| d.name().to_owned()).collect();
/// assert_eq!(names, ["read"]);
/// assert_eq!(registry.visible(None).len(), 2);
///
/// // Dropping the scope disposes it, with its own tools.
/// let helper = registry.new_scope();
/// helper.register(tool("scratch")).unwrap().keep();
/// let id = helper.id();
/// drop(helper);
/// assert!(registry.get("scratch", Some(id)).is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Scope {
    handle: Arc<Handle>,
}

/// What the clones of one scope share; disposes the scope when the last one goes.
#[derive(Debug)]
struct Handle {
    id: ScopeId,
    registry: ToolRegistry,
    kept: AtomicBool,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.kept.load(Ordering::SeqCst) {
            dispose(&self.registry, self.id);
        }
    }
}

impl Scope {
    pub(crate) fn create(registry: &ToolRegistry, parent: Option<ScopeId>) -> Self {
        let id = ScopeId(registry.inner.next_id());
        registry.inner.write().create(id, parent);
        Self {
            handle: Arc::new(Handle {
                id,
                registry: registry.clone(),
                kept: AtomicBool::new(false),
            }),
        }
    }

    /// The scope's key (put it in `ToolExecutionInput::agent`).
    pub fn id(&self) -> ScopeId {
        self.handle.id
    }

    /// The registry this scope belongs to.
    pub fn registry(&self) -> &ToolRegistry {
        &self.handle.registry
    }

    /// Keeps the scope after its last handle is dropped (until [`Scope::dispose`] or the end of
    /// the registry), and returns its key.
    pub fn keep(self) -> ScopeId {
        self.handle.kept.store(true, Ordering::SeqCst);
        self.handle.id
    }

    /// Creates a child scope (a sub-agent) whose chain continues with this scope.
    pub fn child(&self) -> Scope {
        Scope::create(self.registry(), Some(self.id()))
    }

    /// Registers a tool for this scope only (shadowing a same-named inherited tool here).
    pub fn register(&self, def: ToolDefinition) -> Result<Registration, RegistryError> {
        self.registry().register_in(Some(self.id()), def)
    }

    /// Registers a tool set for this scope only.
    pub fn register_set<T: ToolSet>(&self, set: Arc<T>) -> Result<Registration, RegistryError> {
        self.registry()
            .register_all(Some(self.id()), set.tool_definitions()?)
    }

    /// Masks the inherited tool surface (`docs/CONTRACTS.md`, "The registry", restricting).
    pub fn restrict(&self, filter: ToolRestriction) -> Result<Registration, RegistryError> {
        self.registry().restrict_in(self.id(), filter)
    }

    /// Declares this scope's presentation mode (`docs/CONTRACTS.md`, "The registry", presentation
    /// modes).
    pub fn present_as(&self, mode: PresentationMode) -> Result<Registration, RegistryError> {
        self.registry().present_as_in(self.id(), mode)
    }

    /// Sets the result budget of this scope's calls (and its descendants', unless they set their
    /// own), in tokens: `None` turns budgets off for them. A tool's own budget still wins over
    /// it; it wins over the registry's (`docs/CONTRACTS.md`, "Result budgets"). A later call
    /// replaces it; disposing the handle lifts it.
    ///
    /// ```
    /// use dsh_tools_runtime::ToolRegistry;
    ///
    /// let registry = ToolRegistry::new();
    /// let agent = registry.new_scope();
    /// assert_eq!(registry.result_budget(Some(agent.id())), Some(25_000));
    /// let budget = agent.set_max_result_tokens(Some(4_000)).unwrap();
    /// assert_eq!(registry.result_budget(Some(agent.child().id())), Some(4_000));
    /// budget.dispose();
    /// assert_eq!(registry.result_budget(Some(agent.id())), Some(25_000));
    /// ```
    pub fn set_max_result_tokens(
        &self,
        max_tokens: Option<usize>,
    ) -> Result<Registration, RegistryError> {
        self.registry().result_budget_in(self.id(), max_tokens)
    }

    /// Adds a hook of kind `K` that sees only this scope's calls (and its descendants').
    pub fn add_hook<K: HookKind>(&self, hook: K::Hook) -> Registration {
        self.registry().hook_in::<K>(Some(self.id()), hook)
    }

    /// Adds a guard for this scope's calls (and its descendants').
    pub fn guard(
        &self,
        guard: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Registration {
        self.add_hook::<Guard>(Arc::new(guard))
    }

    /// Adds a pre-execute policy that sees only this scope's calls.
    pub fn on_pre_execute(&self, hook: PreExecuteFn) -> Registration {
        self.add_hook::<PreExecute>(hook)
    }

    /// Adds an execute wrapper that sees only this scope's calls.
    pub fn on_execute(&self, hook: ExecuteWrapperFn) -> Registration {
        self.add_hook::<ExecuteWrapper>(hook)
    }

    /// Adds a post-execute policy that sees only this scope's calls.
    pub fn on_post_execute(&self, hook: PostExecuteFn) -> Registration {
        self.add_hook::<PostExecute>(hook)
    }

    /// Adds a result observer that sees only this scope's calls.
    pub fn on_result(
        &self,
        observer: impl Fn(&ToolExecution, &dsh_tools::exec::ToolExecutionResult) + Send + Sync + 'static,
    ) -> Registration {
        let hook: ResultObserverFn = Arc::new(observer);
        self.add_hook::<ResultObserver>(hook)
    }

    /// The definition named `name` as this scope sees it.
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.registry().get(name, Some(self.id()))
    }

    /// Every definition this scope sees.
    pub fn visible(&self) -> Vec<ToolDefinition> {
        self.registry().visible(Some(self.id()))
    }

    /// This scope's pre-restriction name universe.
    pub fn known_names(&self) -> Vec<String> {
        self.registry().known_names(Some(self.id()))
    }

    /// This scope's model-facing schemas.
    pub fn schemas(&self) -> Vec<dsh_tools::ToolSchemaWire> {
        self.registry().schemas(Some(self.id()))
    }

    /// Removes every contribution of this scope: its tools, restrictions, guards, mode and hooks,
    /// and what its presentation cached for it. Idempotent. Child scopes keep their own
    /// registrations.
    pub fn dispose(&self) {
        dispose(self.registry(), self.id());
    }
}

/// Disposes scope `id` of `registry` (once; later calls do nothing).
fn dispose(registry: &ToolRegistry, id: ScopeId) {
    let removed = registry.inner.write().dispose(id);
    registry.inner.pipeline.edit_hooks(|t| t.remove_scope(id));
    let Some(layer) = removed else {
        return;
    };
    registry.inner.search_indexes.forget(id);
    let extensions = registry.inner.read().extensions.clone();
    for extension in extensions {
        extension.scope_disposed(id);
    }
    for (_, def) in layer.tools.iter().rev() {
        let change = RegistryChange::Unregistered {
            name: def.name().to_owned(),
            scope: Some(id),
        };
        let _ = registry.notify(&change);
    }
    if !layer.restrictions.is_empty() || layer.mode.is_some() || layer.budget.is_some() {
        let _ = registry.notify(&RegistryChange::ScopeChanged { scope: id });
    }
}
