//! Registration handles: each mutator returns one; disposing it removes exactly that effect.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use dsh_tools::exec::ScopeId;

use super::Inner;

/// What a handle undoes.
#[derive(Debug, Clone)]
pub(crate) enum Effect {
    /// A layer entry (tool, restriction, presentation mode).
    Layer { scope: Option<ScopeId>, id: u64 },
    /// A hook (of any kind, guards included).
    Hook { id: u64 },
    /// A change listener.
    Listener { id: u64 },
    /// Several effects, undone in reverse order.
    Composite(Vec<Effect>),
    /// Nothing (an empty composite).
    Nothing,
}

/// The handle of one registry effect (a registered tool, restriction, guard, hook, presentation
/// mode or listener). [`Registration::dispose`] removes exactly that effect; it is idempotent.
///
/// Dropping the handle keeps the effect (it then lives as long as its scope or the registry).
#[must_use = "keep the handle to undo the registration, or call `.keep()` to make it permanent"]
#[derive(Debug)]
pub struct Registration {
    registry: Weak<Inner>,
    effect: Effect,
    disposed: AtomicBool,
}

impl Registration {
    pub(crate) fn new(registry: &Arc<Inner>, effect: Effect) -> Self {
        Self {
            registry: Arc::downgrade(registry),
            effect,
            disposed: AtomicBool::new(false),
        }
    }

    /// Combines several registrations into one handle that disposes all of them (last first).
    pub fn combine(registrations: Vec<Registration>) -> Self {
        let registry = registrations
            .first()
            .map(|r| r.registry.clone())
            .unwrap_or_default();
        let effects = registrations
            .into_iter()
            .filter(|r| !r.disposed.load(Ordering::SeqCst))
            .map(|r| r.effect.clone())
            .collect::<Vec<_>>();
        Self {
            registry,
            effect: if effects.is_empty() {
                Effect::Nothing
            } else {
                Effect::Composite(effects)
            },
            disposed: AtomicBool::new(false),
        }
    }

    /// Removes the effect. Calling it again (or after the registry is gone) does nothing.
    pub fn dispose(&self) {
        if self.disposed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(inner) = self.registry.upgrade() {
            inner.undo(&self.effect);
        }
    }

    /// Whether [`Registration::dispose`] was called.
    pub fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    /// Keeps the effect for the lifetime of its scope or registry (drops the handle).
    pub fn keep(self) {}
}
