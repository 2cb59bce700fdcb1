//! One layer of registrations: the global layer or one scope's (`docs/CONTRACTS.md`, "The
//! registry").

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ScopeId;

use super::PresentationMode;

/// A compiled `restrict` filter.
#[derive(Debug, Clone)]
pub(crate) struct Restriction {
    pub(crate) id: u64,
    pub(crate) allow: Option<HashSet<String>>,
    pub(crate) deny: Option<HashSet<String>>,
}

impl Restriction {
    pub(crate) fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.contains(name))
            && self.deny.as_ref().is_none_or(|deny| !deny.contains(name))
    }
}

/// Named tools (insertion order, unique per layer), restrictions, a presentation cell and a
/// result-budget cell (`None` inside: budgets off for the scope).
#[derive(Clone, Default)]
pub(crate) struct Layer {
    pub(crate) tools: Vec<(u64, ToolDefinition)>,
    pub(crate) restrictions: Vec<Restriction>,
    pub(crate) mode: Option<(u64, PresentationMode)>,
    pub(crate) budget: Option<(u64, Option<usize>)>,
    /// The deferred tools tool search found for this layer's scope, in the order found.
    pub(crate) found: Vec<String>,
}

impl Layer {
    pub(crate) fn tool(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools
            .iter()
            .find(|(_, def)| def.name() == name)
            .map(|(_, def)| def)
    }

    pub(crate) fn admits(&self, name: &str) -> bool {
        self.restrictions.iter().all(|r| r.admits(name))
    }

    /// Removes the entry with this id; returns whether anything was removed.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        if let Some(i) = self.tools.iter().position(|(e, _)| *e == id) {
            self.tools.remove(i);
            return true;
        }
        if let Some(i) = self.restrictions.iter().position(|r| r.id == id) {
            self.restrictions.remove(i);
            return true;
        }
        if self.mode.is_some_and(|(e, _)| e == id) {
            self.mode = None;
            return true;
        }
        if self.budget.is_some_and(|(e, _)| e == id) {
            self.budget = None;
            return true;
        }
        false
    }
}

/// A scope: its parent link and its layer.
#[derive(Clone, Default)]
pub(crate) struct ScopeNode {
    pub(crate) parent: Option<ScopeId>,
    pub(crate) layer: Layer,
    /// A disposed scope accepts no registrations. It stays (empty) while it has children, so
    /// they still inherit through its parent link, and is freed with its last child.
    pub(crate) disposed: bool,
    /// How many nodes name this one as their parent.
    pub(crate) children: usize,
}

/// Everything the registry knows, behind one `RwLock`.
#[derive(Clone, Default)]
pub(crate) struct RegistryState {
    pub(crate) global: Layer,
    pub(crate) scopes: HashMap<ScopeId, ScopeNode>,
    /// Defer every tool beyond this many of a scope's visible tools (see
    /// `ToolRegistry::defer_beyond`).
    pub(crate) defer_beyond: Option<usize>,
    /// The installed extensions, in installation order (see
    /// `ToolRegistry::install_extension`).
    pub(crate) extensions: Vec<Arc<dyn super::ScopeExtension>>,
}

impl RegistryState {
    /// Adds a live scope under `parent`.
    pub(crate) fn create(&mut self, id: ScopeId, parent: Option<ScopeId>) {
        if let Some(node) = parent.and_then(|p| self.scopes.get_mut(&p)) {
            node.children += 1;
        }
        self.scopes.insert(
            id,
            ScopeNode {
                parent,
                ..ScopeNode::default()
            },
        );
    }

    /// Disposes `scope`: its layer is taken out and returned (`None` when it was already
    /// disposed or is unknown), and the node is freed unless children still inherit through it.
    pub(crate) fn dispose(&mut self, scope: ScopeId) -> Option<Layer> {
        let node = self.scopes.get_mut(&scope).filter(|node| !node.disposed)?;
        node.disposed = true;
        let layer = std::mem::take(&mut node.layer);
        self.free(scope);
        Some(layer)
    }

    /// Frees `scope` and then each ancestor, as long as the node is disposed and childless.
    fn free(&mut self, scope: ScopeId) {
        let mut cursor = Some(scope);
        while let Some(id) = cursor {
            match self.scopes.get(&id) {
                Some(node) if node.disposed && node.children == 0 => {
                    cursor = node.parent;
                    self.scopes.remove(&id);
                    if let Some(parent) = cursor.and_then(|p| self.scopes.get_mut(&p)) {
                        parent.children -= 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// The scope chain of `scope`, farthest ancestor first, the scope itself last. Only live
    /// scopes appear; a cycle (impossible through the API) is cut.
    pub(crate) fn chain(&self, scope: ScopeId) -> Vec<ScopeId> {
        let mut chain = Vec::new();
        let mut cursor = Some(scope);
        while let Some(id) = cursor {
            let Some(node) = self.scopes.get(&id) else {
                break;
            };
            if chain.contains(&id) {
                break;
            }
            chain.push(id);
            cursor = node.parent;
        }
        chain.reverse();
        chain
    }

    /// The live layer of `scope` (`None` for a disposed or unknown scope).
    pub(crate) fn layer(&self, scope: Option<ScopeId>) -> Option<&Layer> {
        match scope {
            None => Some(&self.global),
            Some(id) => self
                .scopes
                .get(&id)
                .filter(|node| !node.disposed)
                .map(|node| &node.layer),
        }
    }

    pub(crate) fn layer_mut(&mut self, scope: Option<ScopeId>) -> Option<&mut Layer> {
        match scope {
            None => Some(&mut self.global),
            Some(id) => self
                .scopes
                .get_mut(&id)
                .filter(|node| !node.disposed)
                .map(|node| &mut node.layer),
        }
    }

    /// The effective presentation mode of a scope: the nearest declaration along its chain.
    pub(crate) fn declared_mode(&self, scope: Option<ScopeId>) -> Option<PresentationMode> {
        let scope = scope?;
        self.chain(scope).iter().rev().find_map(|id| {
            self.scopes
                .get(id)
                .and_then(|n| n.layer.mode.map(|(_, m)| m))
        })
    }
}

impl RegistryState {
    /// The result budget declared nearest along the chain of `scope`: `Some(None)` when that
    /// declaration turns budgets off, `None` when no scope of the chain declares one.
    pub(crate) fn declared_budget(&self, scope: Option<ScopeId>) -> Option<Option<usize>> {
        let scope = scope?;
        self.chain(scope).iter().rev().find_map(|id| {
            self.scopes
                .get(id)
                .and_then(|n| n.layer.budget.map(|(_, b)| b))
        })
    }
}

/// Renders the name list of the unknown-restriction error: `tool "x"` or `tools "x", "y"`.
pub(crate) fn quoted_names(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    if quoted.len() == 1 {
        format!("tool {}", quoted[0])
    } else {
        format!("tools {}", quoted.join(", "))
    }
}

/// Helper for `HashMap` lookups by scope id.
pub(crate) fn scope_layer(state: &RegistryState, id: ScopeId) -> Option<&Layer> {
    state.scopes.get(&id).map(|node| &node.layer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disposed_scope_is_freed_with_its_last_child() {
        let mut state = RegistryState::default();
        let (root, parent, child) = (ScopeId(1), ScopeId(2), ScopeId(3));
        state.create(root, None);
        state.create(parent, Some(root));
        state.create(child, Some(parent));

        assert!(state.dispose(parent).is_some());
        assert!(state.dispose(parent).is_none(), "once");
        assert!(
            state.scopes.contains_key(&parent),
            "the child inherits through it"
        );
        assert_eq!(state.chain(child), [root, parent, child]);

        assert!(state.dispose(child).is_some());
        assert!(!state.scopes.contains_key(&child));
        assert!(
            !state.scopes.contains_key(&parent),
            "freed with its last child"
        );
        assert_eq!(state.scopes[&root].children, 0);

        assert!(state.dispose(root).is_some());
        assert!(state.scopes.is_empty());
    }

    #[test]
    fn a_childless_scope_is_freed_at_once_and_refuses_registrations() {
        let mut state = RegistryState::default();
        let scope = ScopeId(7);
        state.create(scope, None);
        assert!(state.layer(Some(scope)).is_some());
        assert!(state.dispose(scope).is_some());
        assert!(state.scopes.is_empty());
        assert!(state.layer_mut(Some(scope)).is_none());
    }
}
