//! Where hooks live: one table per hook kind, copied on write, snapshotted by each call.

use std::any::{Any, TypeId};
use std::sync::Arc;

use dsh_tools::exec::{ScopeId, ToolExecution};

/// A kind of pipeline hook: a marker type naming what its hooks are.
///
/// Each kind has one table in the pipeline's hook store; [`ToolRegistry::add_hook`] and
/// [`Scope::add_hook`] put a hook into its kind's table, and the pipeline stage that runs the
/// kind reads the table. The named methods (`on_pre_execute`, `guard`, …) are shorthands.
///
/// A kind is only useful together with the stage that runs it: the pipeline's stages run the
/// kinds of this module, and an extension runs its own kinds where it chooses, reading the
/// hooks that apply to a call with
/// [`ToolRegistry::applicable_hooks`](crate::ToolRegistry::applicable_hooks).
///
/// ```
/// use dsh_tools::exec::PreToolDecision;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::hooks::{PreExecute, pre_execute_fn};
///
/// let registry = ToolRegistry::new();
/// registry
///     .add_hook::<PreExecute>(pre_execute_fn(|_, _| async { PreToolDecision::Allow }))
///     .keep();
/// ```
///
/// [`ToolRegistry::add_hook`]: crate::ToolRegistry::add_hook
/// [`Scope::add_hook`]: crate::Scope::add_hook
pub trait HookKind: 'static {
    /// What a hook of this kind is (a shared function).
    type Hook: Clone + Send + Sync + 'static;
}

/// A hook and the scope it was registered for (`None` = every call).
#[derive(Clone)]
pub(crate) struct Scoped<H> {
    pub(crate) id: u64,
    pub(crate) scope: Option<ScopeId>,
    pub(crate) hook: H,
}

/// One kind's table, behind its type.
trait Table: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// The table without hook `id`, or `None` when it holds no such hook.
    fn without(&self, id: u64) -> Option<Arc<dyn Table>>;
    /// The table without `scope`'s hooks, or `None` when it holds none.
    fn without_scope(&self, scope: ScopeId) -> Option<Arc<dyn Table>>;
}

impl<H: Clone + Send + Sync + 'static> Table for Vec<Scoped<H>> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn without(&self, id: u64) -> Option<Arc<dyn Table>> {
        self.iter().any(|h| h.id == id).then(|| {
            let rest: Vec<Scoped<H>> = self.iter().filter(|h| h.id != id).cloned().collect();
            Arc::new(rest) as Arc<dyn Table>
        })
    }

    fn without_scope(&self, scope: ScopeId) -> Option<Arc<dyn Table>> {
        self.iter().any(|h| h.scope == Some(scope)).then(|| {
            let rest: Vec<Scoped<H>> = self
                .iter()
                .filter(|h| h.scope != Some(scope))
                .cloned()
                .collect();
            Arc::new(rest) as Arc<dyn Table>
        })
    }
}

/// Every hook table. A call copies the store out (one `Arc`) when it starts, so hooks added or
/// removed while it runs take effect from the next call.
#[derive(Clone, Default)]
pub(crate) struct HookTables {
    /// `(kind, table)`; a handful of kinds, so a scan beats a map.
    tables: Vec<(TypeId, Arc<dyn Table>)>,
    /// Bumped by every edit: tells a snapshot from the store as it is now.
    pub(crate) version: u64,
}

impl HookTables {
    /// The hooks of kind `K`, in registration order.
    pub(crate) fn get<K: HookKind>(&self) -> &[Scoped<K::Hook>] {
        let kind = TypeId::of::<K>();
        self.tables
            .iter()
            .find(|(k, _)| *k == kind)
            .and_then(|(_, table)| table.as_any().downcast_ref::<Vec<Scoped<K::Hook>>>())
            .map_or(&[], Vec::as_slice)
    }

    /// Appends a hook of kind `K`.
    pub(crate) fn insert<K: HookKind>(&mut self, id: u64, scope: Option<ScopeId>, hook: K::Hook) {
        let kind = TypeId::of::<K>();
        let mut table = self.get::<K>().to_vec();
        table.push(Scoped { id, scope, hook });
        let table: Arc<dyn Table> = Arc::new(table);
        match self.tables.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, slot)) => *slot = table,
            None => self.tables.push((kind, table)),
        }
    }

    /// Removes hook `id`, whatever its kind.
    pub(crate) fn remove(&mut self, id: u64) {
        for (_, table) in &mut self.tables {
            if let Some(rest) = table.without(id) {
                *table = rest;
                return;
            }
        }
    }

    /// Removes every hook registered for `scope`.
    pub(crate) fn remove_scope(&mut self, scope: ScopeId) {
        for (_, table) in &mut self.tables {
            if let Some(rest) = table.without_scope(scope) {
                *table = rest;
            }
        }
    }
}

/// Which hooks apply to one call: the unscoped ones, and those registered for the call's agent or
/// one of its ancestors (`chain`: the agent's scope chain, computed only when needed).
pub(crate) fn applicable<H: Clone>(
    table: &[Scoped<H>],
    exec: &ToolExecution,
    chain: impl FnOnce(ScopeId) -> Vec<ScopeId>,
) -> Vec<H> {
    if table.is_empty() {
        return Vec::new();
    }
    if table.iter().all(|h| h.scope.is_none()) {
        return table.iter().map(|h| h.hook.clone()).collect();
    }
    let ancestry = exec.agent.map(|agent| (agent, chain(agent)));
    table
        .iter()
        .filter(|h| match (h.scope, &ancestry) {
            (None, _) => true,
            (Some(scope), Some((agent, chain))) => scope == *agent || chain.contains(&scope),
            (Some(_), None) => false,
        })
        .map(|h| h.hook.clone())
        .collect()
}
