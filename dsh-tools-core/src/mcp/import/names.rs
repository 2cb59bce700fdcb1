//! Live server names: unique per registry among open connections (`docs/CONTRACTS.md`, "MCP").

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

static LIVE: Mutex<Option<HashSet<(usize, String)>>> = Mutex::new(None);

/// Holds a server name for the lifetime of a connection.
#[derive(Debug)]
pub(crate) struct NameClaim {
    key: (usize, String),
}

impl NameClaim {
    /// Claims `name` for the registry identified by `registry`; `None` when it is taken.
    pub(crate) fn claim(registry: usize, name: &str) -> Option<Self> {
        let key = (registry, name.to_owned());
        let inserted = LIVE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(HashSet::new)
            .insert(key.clone());
        // Built only on success: dropping a claim releases its name.
        inserted.then(|| Self { key })
    }
}

impl Drop for NameClaim {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(set) = live.as_mut() {
            set.remove(&self.key);
        }
    }
}
