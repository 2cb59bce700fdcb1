//! Scope handles: an agent's view of the registry and the place its own registrations live.

use std::sync::Arc;

use dsh_tools::exec::{ScopeId, ToolExecution};
use dsh_tools::{ToolDefinition, ToolSet};

use super::layer::ScopeNode;
use super::mutate::ToolRestriction;
use super::{PresentationMode, Registration, RegistryChange, ToolRegistry};
use crate::error::RegistryError;
use crate::hooks::{AnyHook, ExecuteWrapperFn, PostExecuteFn, PreExecuteFn, ResultObserverFn};

/// An agent scope: an opaque key with an optional parent chain (REFERENCE §5.2).
///
/// Registrations made through a scope land in its layer: its tools shadow inherited ones for it
/// (and its descendants), its restrictions mask what it inherits, its hooks see only its calls
/// (and its descendants'). [`Scope::dispose`] removes all of its contributions.
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
/// let agent = registry.scope();
/// agent.restrict(ToolRestriction { deny: Some(vec!["bash".into()]), ..Default::default() }).unwrap().keep();
/// let names: Vec<String> = agent.visible().iter().map(|d| d.name().to_owned()).collect();
/// assert_eq!(names, ["read"]);
/// assert_eq!(registry.visible(None).len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Scope {
    id: ScopeId,
    registry: ToolRegistry,
}

impl Scope {
    pub(crate) fn create(registry: &ToolRegistry, parent: Option<ScopeId>) -> Self {
        let id = ScopeId(registry.inner.next_id());
        registry.inner.write().scopes.insert(
            id,
            ScopeNode {
                parent,
                layer: Default::default(),
                disposed: false,
            },
        );
        Self {
            id,
            registry: registry.clone(),
        }
    }

    /// The scope's key (put it in `ToolExecutionInput::agent`).
    pub fn id(&self) -> ScopeId {
        self.id
    }

    /// The registry this scope belongs to.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Creates a child scope (a sub-agent) whose chain continues with this scope.
    pub fn child(&self) -> Scope {
        Scope::create(&self.registry, Some(self.id))
    }

    /// Registers a tool for this scope only (shadowing a same-named inherited tool here).
    pub fn register(&self, def: ToolDefinition) -> Result<Registration, RegistryError> {
        self.registry.register_in(Some(self.id), def)
    }

    /// Registers a tool set for this scope only.
    pub fn register_set<T: ToolSet>(&self, set: Arc<T>) -> Result<Registration, RegistryError> {
        self.registry
            .register_all(Some(self.id), set.tool_definitions()?)
    }

    /// Masks the inherited tool surface (REFERENCE §5.6).
    pub fn restrict(&self, filter: ToolRestriction) -> Result<Registration, RegistryError> {
        self.registry.restrict_in(self.id, filter)
    }

    /// Declares this scope's presentation mode (REFERENCE §5.8).
    pub fn present_as(&self, mode: PresentationMode) -> Result<Registration, RegistryError> {
        self.registry.present_as_in(self.id, mode)
    }

    /// Adds a guard for this scope's calls (and its descendants').
    pub fn guard(
        &self,
        guard: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Registration {
        self.registry.guard_in(Some(self.id), Arc::new(guard))
    }

    /// Adds a pre-execute policy that sees only this scope's calls.
    pub fn on_pre_execute(&self, hook: PreExecuteFn) -> Registration {
        let scope = Some(self.id);
        self.registry.hook_in(scope, AnyHook::Pre(hook))
    }

    /// Adds an execute wrapper that sees only this scope's calls.
    pub fn on_execute(&self, hook: ExecuteWrapperFn) -> Registration {
        let scope = Some(self.id);
        self.registry.hook_in(scope, AnyHook::Wrapper(hook))
    }

    /// Adds a post-execute policy that sees only this scope's calls.
    pub fn on_post_execute(&self, hook: PostExecuteFn) -> Registration {
        let scope = Some(self.id);
        self.registry.hook_in(scope, AnyHook::Post(hook))
    }

    /// Adds a result observer that sees only this scope's calls.
    pub fn on_result(
        &self,
        observer: impl Fn(&ToolExecution, &dsh_tools::exec::ToolExecutionResult) + Send + Sync + 'static,
    ) -> Registration {
        let hook: ResultObserverFn = Arc::new(observer);
        let scope = Some(self.id);
        self.registry.hook_in(scope, AnyHook::Observer(hook))
    }

    /// The definition named `name` as this scope sees it.
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.registry.get(name, Some(self.id))
    }

    /// Every definition this scope sees.
    pub fn visible(&self) -> Vec<ToolDefinition> {
        self.registry.visible(Some(self.id))
    }

    /// This scope's pre-restriction name universe.
    pub fn known_names(&self) -> Vec<String> {
        self.registry.known_names(Some(self.id))
    }

    /// This scope's model-facing schemas.
    pub fn schemas(&self) -> Vec<dsh_tools::ToolSchemaWire> {
        self.registry.schemas(Some(self.id))
    }

    /// Removes every contribution of this scope: its tools, restrictions, guards, mode and hooks.
    /// Idempotent. Child scopes keep their own registrations.
    pub fn dispose(&self) {
        let removed = {
            let mut state = self.registry.inner.write();
            match state.scopes.get_mut(&self.id) {
                Some(node) if !node.disposed => {
                    node.disposed = true;
                    Some(std::mem::take(&mut node.layer))
                }
                _ => None,
            }
        };
        self.registry.inner.edit_hooks(|t| t.remove_scope(self.id));
        let Some(layer) = removed else {
            return;
        };
        for (_, def) in layer.tools.iter().rev() {
            let change = RegistryChange::Unregistered {
                name: def.name().to_owned(),
                scope: Some(self.id),
            };
            let _ = self.registry.notify(&change);
        }
        if !layer.restrictions.is_empty() || layer.mode.is_some() {
            let _ = self
                .registry
                .notify(&RegistryChange::ScopeChanged { scope: self.id });
        }
    }
}
