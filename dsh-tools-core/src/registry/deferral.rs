//! Deferred loading (`docs/CONTRACTS.md`, "Tool search and deferred loading"): which of a
//! scope's visible tools the model is shown up front, which wait to be found through tool
//! search, and which were found.
//!
//! A tool is deferred when it says so ([`Loading::Deferred`]) or when the registry defers
//! everything beyond a number of tools ([`ToolRegistry::defer_beyond`]) and it is neither
//! pinned nor among the first ones. Deferred tools stay executable; what changes is only what
//! the model is shown. A scope that has deferred tools is shown the reserved `tool_search` tool
//! right after its loaded tools; the tools it finds are listed after that, in the order they were
//! found, so the prefix of the tool list stays the same as tools are found.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::exec::ScopeId;
use dsh_tools::{Loading, ToolDefinition};

use super::layer::RegistryState;
use super::{RegistryChange, ToolRegistry, view};
use crate::search::{SearchHit, ToolIndex};

/// The reserved name of the native tool-search tool.
pub const TOOL_SEARCH_NAME: &str = "tool_search";

/// A scope's visible tools, split by what the model is shown.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    /// Shown up front, in visible order.
    pub(crate) loaded: Vec<ToolDefinition>,
    /// Deferred and found, in the order they were found.
    pub(crate) found: Vec<ToolDefinition>,
    /// Deferred and not found yet, in visible order.
    pub(crate) waiting: Vec<ToolDefinition>,
}

impl Listing {
    /// Whether the scope defers anything (and so is shown `tool_search`).
    pub(crate) fn defers(&self) -> bool {
        !self.found.is_empty() || !self.waiting.is_empty()
    }

    /// Every deferred tool, found or not (what tool search searches).
    pub(crate) fn deferred(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.waiting.iter().chain(&self.found)
    }

    /// What the model is shown, in order: the loaded tools, `tool_search` when anything is
    /// deferred, then the found tools.
    pub(crate) fn shown(self, tool_search: impl FnOnce() -> ToolDefinition) -> Vec<ToolDefinition> {
        let defers = self.defers();
        let mut shown = self.loaded;
        if defers {
            shown.push(tool_search());
        }
        shown.extend(self.found);
        shown
    }
}

/// Splits `visible` (a scope's visible stored tools, in visible order).
pub(crate) fn split(
    state: &RegistryState,
    scope: Option<ScopeId>,
    visible: Vec<ToolDefinition>,
) -> Listing {
    let found_names: &[String] = state.layer(scope).map_or(&[], |l| &l.found);
    let mut listing = Listing::default();
    let mut deferred = Vec::new();
    for def in visible {
        let defer = match def.loading() {
            Loading::Pinned => false,
            Loading::Deferred => true,
            Loading::Auto => state
                .defer_beyond
                .is_some_and(|limit| listing.loaded.len() >= limit),
        };
        if defer {
            deferred.push(def);
        } else {
            listing.loaded.push(def);
        }
    }
    for name in found_names {
        if let Some(i) = deferred.iter().position(|d| d.name() == name) {
            listing.found.push(deferred.remove(i));
        }
    }
    listing.waiting = deferred;
    listing
}

/// A scope's deferred tools (compared by identity) and their search index.
type IndexEntry = (Vec<ToolDefinition>, Arc<ToolIndex>);

/// The search index of one scope's deferred tools, kept while those tools stay the same.
#[derive(Default)]
pub(crate) struct IndexCache {
    entries: Mutex<HashMap<Option<ScopeId>, IndexEntry>>,
}

impl IndexCache {
    fn index(&self, scope: Option<ScopeId>, deferred: &[ToolDefinition]) -> Arc<ToolIndex> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((tools, index)) = entries.get(&scope)
            && tools.len() == deferred.len()
            && tools.iter().zip(deferred).all(|(a, b)| a.ptr_eq(b))
        {
            return Arc::clone(index);
        }
        let index = Arc::new(ToolIndex::from_definitions(deferred));
        entries.insert(scope, (deferred.to_vec(), Arc::clone(&index)));
        index
    }

    pub(crate) fn forget(&self, scope: ScopeId) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&Some(scope));
    }
}

impl ToolRegistry {
    /// Defers every tool beyond the first `limit` of each scope's visible tools (in visible
    /// order), except pinned ones ([`Loading::Pinned`]); `None` (the default) defers only the
    /// tools marked [`Loading::Deferred`]. Deferred tools are left out of the wire list and the
    /// Code Mode SDK until tool search finds them; they stay executable. Set it before prompts
    /// are built: it announces no change event.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools_runtime::ToolRegistry;
    ///
    /// let tool = |name: &str| ToolDefinition::builder(name).description("A tool.")
    ///     .execute(|_, _| async { Ok(serde_json::Value::Null) }).build().unwrap();
    /// let registry = ToolRegistry::new();
    /// for name in ["read", "write", "grep"] {
    ///     registry.register(tool(name)).unwrap().keep();
    /// }
    /// registry.defer_beyond(Some(2));
    /// let shown: Vec<String> = registry.schemas(None).into_iter().map(|s| s.name).collect();
    /// assert_eq!(shown, ["read", "write", "tool_search"]);
    /// assert_eq!(registry.deferred(None)[0].name(), "grep");
    /// assert!(registry.get("grep", None).is_some(), "still executable");
    /// ```
    pub fn defer_beyond(&self, limit: Option<usize>) {
        self.inner.write().defer_beyond = limit;
    }

    /// The split of `scope`'s visible stored tools.
    pub(crate) fn listing(&self, scope: Option<ScopeId>) -> Listing {
        let state = self.inner.read();
        let visible = view::view(&state, scope).visible;
        split(&state, scope, visible)
    }

    /// The deferred tools of `scope` that tool search has not found yet, in visible order.
    pub fn deferred(&self, scope: Option<ScopeId>) -> Vec<ToolDefinition> {
        self.listing(scope).waiting
    }

    /// The deferred tools of `scope` that tool search found, in the order they were found
    /// (they are shown to the model after its other tools).
    pub fn found(&self, scope: Option<ScopeId>) -> Vec<ToolDefinition> {
        self.listing(scope).found
    }

    /// Searches `scope`'s deferred tools (found or not) for `query`, best first, at most
    /// `limit` (see [`crate::search`] for the ranking).
    pub fn search_deferred(
        &self,
        scope: Option<ScopeId>,
        query: &str,
        limit: usize,
    ) -> Vec<SearchHit> {
        let listing = self.listing(scope);
        let deferred: Vec<ToolDefinition> = listing.deferred().cloned().collect();
        if deferred.is_empty() {
            return Vec::new();
        }
        self.inner
            .search_indexes
            .index(scope, &deferred)
            .search(query, limit)
    }

    /// Marks deferred tools of `scope` found: from the next prompt on they are shown to the
    /// model, after its other tools, in the order found. Names that are not waiting deferred
    /// tools of the scope are ignored. Returns the names newly found; a scope (not the global
    /// view) that found any announces [`RegistryChange::ScopeChanged`].
    pub fn discover<'n>(
        &self,
        scope: Option<ScopeId>,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Vec<String> {
        let waiting: Vec<String> = self
            .deferred(scope)
            .iter()
            .map(|d| d.name().to_owned())
            .collect();
        let mut added = Vec::new();
        {
            let mut state = self.inner.write();
            let Some(layer) = state.layer_mut(scope) else {
                return added;
            };
            for name in names {
                if waiting.iter().any(|w| w == name) && !layer.found.iter().any(|f| f == name) {
                    layer.found.push(name.to_owned());
                    added.push(name.to_owned());
                }
            }
        }
        if let (Some(scope), false) = (scope, added.is_empty()) {
            // A found tool only adds to what the model is shown; a failing listener changes
            // nothing here.
            if let Err(message) = self.notify(&RegistryChange::ScopeChanged { scope }) {
                tracing::warn!("a change listener failed on a found tool: {message}");
            }
        }
        added
    }
}
