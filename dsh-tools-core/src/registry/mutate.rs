//! Registry mutators, shared by the global registry and scopes, and their undo.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use dsh_tools::exec::ScopeId;
use dsh_tools::{ToolDefinition, ToolSet};

use super::deferral::TOOL_SEARCH_NAME;
use super::layer::{Restriction, quoted_names};
use super::{
    Effect, Inner, PresentationMode, Registration, RegistryChange, ReservedName, ToolRegistry, view,
};
use crate::error::RegistryError;
use crate::error::panic_message;

/// A `restrict` filter: keep only `allow`, and/or remove `deny`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRestriction {
    /// Only these inherited tools stay visible (an empty list hides every inherited tool).
    pub allow: Option<Vec<String>>,
    /// These inherited tools are hidden.
    pub deny: Option<Vec<String>>,
}

impl ToolRegistry {
    /// Registers a tool in the global layer.
    pub fn register(&self, def: ToolDefinition) -> Result<Registration, RegistryError> {
        self.register_in(None, def)
    }

    /// Registers every `#[tool]` linked into the binary (sorted by name; duplicates rejected).
    pub fn register_collected(&self) -> Result<Registration, RegistryError> {
        self.register_all(None, dsh_tools::collected_tools()?)
    }

    /// Registers a tool set (the `#[tool_set]` methods of `set`) in the global layer.
    pub fn register_set<T: ToolSet>(&self, set: Arc<T>) -> Result<Registration, RegistryError> {
        self.register_all(None, set.tool_definitions()?)
    }

    /// Adds a change listener (every change, scoped or not). A panicking listener rolls the
    /// mutation that triggered it back.
    pub fn on_change(
        &self,
        listener: impl Fn(&RegistryChange) + Send + Sync + 'static,
    ) -> Registration {
        let id = self.inner.next_id();
        self.inner
            .listeners
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, Arc::new(listener)));
        Registration::new(&self.inner, Effect::Listener { id })
    }

    pub(crate) fn register_all(
        &self,
        scope: Option<ScopeId>,
        defs: Vec<ToolDefinition>,
    ) -> Result<Registration, RegistryError> {
        let mut done = Vec::with_capacity(defs.len());
        for def in defs {
            match self.register_in(scope, def) {
                Ok(handle) => done.push(handle),
                Err(error) => {
                    done.iter().rev().for_each(Registration::dispose);
                    return Err(error);
                }
            }
        }
        Ok(Registration::combine(done))
    }

    pub(crate) fn register_in(
        &self,
        scope: Option<ScopeId>,
        def: ToolDefinition,
    ) -> Result<Registration, RegistryError> {
        let name = def.name().to_owned();
        if let Some(reserved) = self.reserved(&name) {
            return Err(RegistryError::ReservedName {
                name: reserved.name,
                holder: reserved.holder,
            });
        }
        let id = self.inner.next_id();
        {
            let mut state = self.inner.write();
            let layer = state.layer_mut(scope).ok_or(RegistryError::ScopeDisposed)?;
            if layer.tool(&name).is_some() {
                return Err(match scope {
                    None => RegistryError::DuplicateGlobal(name),
                    Some(_) => RegistryError::DuplicateScoped(name),
                });
            }
            layer.tools.push((id, def));
        }
        let change = RegistryChange::Registered { name, scope };
        if let Err(message) = self.notify(&change) {
            if let Some(layer) = self.inner.write().layer_mut(scope) {
                layer.remove(id);
            }
            return Err(RegistryError::ChangeListener(message));
        }
        Ok(Registration::new(&self.inner, Effect::Layer { scope, id }))
    }

    pub(crate) fn restrict_in(
        &self,
        scope: ScopeId,
        filter: ToolRestriction,
    ) -> Result<Registration, RegistryError> {
        if filter.allow.is_none() && filter.deny.is_none() {
            return Err(RegistryError::EmptyRestriction);
        }
        let named = filter.allow.iter().chain(filter.deny.iter()).flatten();
        if let Some(reserved) = named.clone().find_map(|n| self.reserved(n)) {
            return Err(RegistryError::RestrictReserved {
                name: reserved.name,
                holder: reserved.holder,
            });
        }
        let id = self.inner.next_id();
        {
            let mut state = self.inner.write();
            // A disposed scope accepts no restriction (it would be silently dropped below).
            if state.layer_mut(Some(scope)).is_none() {
                return Err(RegistryError::ScopeDisposed);
            }
            let restrictable = view::view(&state, Some(scope)).restrictable;
            let mut unknown: Vec<String> = Vec::new();
            for name in named {
                // Every unknown occurrence, allow first then deny, as the reference lists them.
                if !restrictable.contains(name) {
                    unknown.push(name.clone());
                }
            }
            if !unknown.is_empty() {
                let mut known = restrictable;
                known.sort();
                return Err(RegistryError::UnknownRestrictedNames {
                    names: quoted_names(&unknown),
                    known: if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
            let restriction = Restriction {
                id,
                allow: filter.allow.map(|v| v.into_iter().collect::<HashSet<_>>()),
                deny: filter.deny.map(|v| v.into_iter().collect::<HashSet<_>>()),
            };
            if let Some(layer) = state.layer_mut(Some(scope)) {
                layer.restrictions.push(restriction);
            }
        }
        self.notify_or_undo(scope, id)
    }

    pub(crate) fn present_as_in(
        &self,
        scope: ScopeId,
        mode: PresentationMode,
    ) -> Result<Registration, RegistryError> {
        let id = self.inner.next_id();
        {
            let mut state = self.inner.write();
            let layer = state
                .layer_mut(Some(scope))
                .ok_or(RegistryError::ScopeDisposed)?;
            if let Some((_, old)) = layer.mode {
                return Err(RegistryError::PresentationConflict {
                    new: mode.as_str(),
                    old: old.as_str(),
                });
            }
            layer.mode = Some((id, mode));
        }
        self.notify_or_undo(scope, id)
    }

    /// Declares the result budget of `scope` (replacing an earlier one of that scope).
    pub(crate) fn result_budget_in(
        &self,
        scope: ScopeId,
        max_tokens: Option<usize>,
    ) -> Result<Registration, RegistryError> {
        let id = self.inner.next_id();
        {
            let mut state = self.inner.write();
            let layer = state
                .layer_mut(Some(scope))
                .ok_or(RegistryError::ScopeDisposed)?;
            layer.budget = Some((id, max_tokens));
        }
        if let Some(max_tokens) = max_tokens {
            self.inner
                .budget_floor
                .fetch_min(max_tokens, Ordering::AcqRel);
        }
        self.notify_or_undo(scope, id)
    }

    /// The extension's hold on `name`, if it has one.
    fn reserved(&self, name: &str) -> Option<ReservedName> {
        if name == TOOL_SEARCH_NAME {
            return Some(ReservedName {
                name: TOOL_SEARCH_NAME,
                holder: "tool search (deferred loading)",
            });
        }
        let state = self.inner.read();
        state
            .extensions
            .iter()
            .flat_map(|extension| extension.reserved())
            .find(|r| r.name == name)
            .copied()
    }

    /// Tells the listeners that `scope` changed by its layer entry `id`, and returns the
    /// registration that undoes the entry; a failing listener undoes it at once.
    fn notify_or_undo(&self, scope: ScopeId, id: u64) -> Result<Registration, RegistryError> {
        if let Err(message) = self.notify(&RegistryChange::ScopeChanged { scope }) {
            if let Some(layer) = self.inner.write().layer_mut(Some(scope)) {
                layer.remove(id);
            }
            return Err(RegistryError::ChangeListener(message));
        }
        Ok(Registration::new(
            &self.inner,
            Effect::Layer {
                scope: Some(scope),
                id,
            },
        ))
    }

    /// Delivers a change to every listener; a panicking listener's message is returned.
    pub(crate) fn notify(&self, change: &RegistryChange) -> Result<(), String> {
        self.inner.notify(change)
    }
}

impl Inner {
    pub(crate) fn notify(&self, change: &RegistryChange) -> Result<(), String> {
        let listeners: Vec<_> = self
            .listeners
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        for listener in listeners {
            catch_unwind(AssertUnwindSafe(|| listener(change))).map_err(|p| panic_message(&*p))?;
        }
        Ok(())
    }

    /// Undoes one effect (idempotent at the handle level).
    pub(crate) fn undo(&self, effect: &Effect) {
        match effect {
            Effect::Nothing => {}
            Effect::Composite(effects) => effects.iter().rev().for_each(|e| self.undo(e)),
            Effect::Hook { id } => self.pipeline.edit_hooks(|t| t.remove(*id)),
            Effect::Listener { id } => self
                .listeners
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(l, _)| l != id),
            Effect::Layer { scope, id } => {
                let removed = {
                    let mut state = self.write();
                    let name = state.layer_mut(*scope).and_then(|l| {
                        l.tools
                            .iter()
                            .find(|(e, _)| e == id)
                            .map(|(_, d)| d.name().to_owned())
                    });
                    let removed = state.layer_mut(*scope).is_some_and(|l| l.remove(*id));
                    removed.then_some(name)
                };
                // Removal never rolls back: a listener panic here is contained.
                match removed {
                    Some(Some(name)) => {
                        let _ = self.notify(&RegistryChange::Unregistered {
                            name,
                            scope: *scope,
                        });
                    }
                    Some(None) => {
                        if let Some(scope) = scope {
                            let _ = self.notify(&RegistryChange::ScopeChanged { scope: *scope });
                        }
                    }
                    None => {}
                }
            }
        }
    }
}
