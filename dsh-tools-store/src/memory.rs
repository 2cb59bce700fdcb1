//! The store in memory: one process, gone when it exits (tests, single-shot hosts).

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use crate::StoreError;
use crate::backend::{Backend, Child, ChildInsert, Coll, Pair};
use crate::core::Core;
use crate::forward::forward_store;
use crate::seal::StoreKey;

/// The store in memory (one process). Records are sealed like every store's, so that its
/// behaviour and costs are the others' minus the medium.
///
/// ```
/// use dsh_tools_store::{DurableStore, MemoryStore, StoreKey};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::new(StoreKey::generate());
/// assert!(store.spend("continuation-1").await.unwrap());
/// assert!(!store.spend("continuation-1").await.unwrap());
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    core: Core<MemoryBackend>,
}

impl MemoryStore {
    /// An empty store whose records `key` authenticates.
    pub fn new(key: StoreKey) -> Self {
        Self {
            core: Core {
                key,
                backend: MemoryBackend::default(),
            },
        }
    }
}

forward_store!(MemoryStore, "memory");

#[derive(Debug, Default)]
struct State {
    records: HashMap<(Coll, String), (String, Option<i64>)>,
    open: HashSet<String>,
    children: HashMap<(Child, String), HashMap<String, String>>,
}

#[derive(Debug, Default)]
pub(crate) struct MemoryBackend {
    state: Mutex<State>,
}

impl MemoryBackend {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn live(record: Option<&(String, Option<i64>)>, now: i64) -> Option<&String> {
    record
        .filter(|(_, expires)| expires.is_none_or(|expires| expires > now))
        .map(|(value, _)| value)
}

#[async_trait]
impl Backend for MemoryBackend {
    fn name(&self) -> &'static str {
        "memory"
    }

    async fn insert(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        let key = (coll, id.to_owned());
        if live(state.records.get(&key), now).is_some() {
            return Ok(false);
        }
        state.records.insert(key, (value.to_owned(), expires));
        Ok(true)
    }

    async fn put(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
    ) -> Result<(), StoreError> {
        self.state()
            .records
            .insert((coll, id.to_owned()), (value.to_owned(), expires));
        Ok(())
    }

    async fn get(&self, coll: Coll, id: &str, now: i64) -> Result<Option<String>, StoreError> {
        Ok(live(self.state().records.get(&(coll, id.to_owned())), now).cloned())
    }

    async fn swap(
        &self,
        coll: Coll,
        id: &str,
        old: &str,
        new: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        let key = (coll, id.to_owned());
        if live(state.records.get(&key), now).is_none_or(|value| value != old) {
            return Ok(false);
        }
        if let Some(record) = state.records.get_mut(&key) {
            record.0 = new.to_owned();
        }
        Ok(true)
    }

    async fn begin_run(&self, run: &str, value: &str) -> Result<bool, StoreError> {
        let mut state = self.state();
        let key = (Coll::Run, run.to_owned());
        if state.records.contains_key(&key) {
            return Ok(false);
        }
        state.records.insert(key, (value.to_owned(), None));
        state.open.insert(run.to_owned());
        Ok(true)
    }

    async fn finish_run(&self, run: &str, old: &str, new: &str) -> Result<bool, StoreError> {
        let mut state = self.state();
        match state.records.get_mut(&(Coll::Run, run.to_owned())) {
            Some(record) if record.0 == old => record.0 = new.to_owned(),
            _ => return Ok(false),
        }
        state.open.remove(run);
        Ok(true)
    }

    async fn open_runs(&self) -> Result<Vec<Pair>, StoreError> {
        let state = self.state();
        Ok(state
            .open
            .iter()
            .filter_map(|run| {
                let (value, _) = state.records.get(&(Coll::Run, run.clone()))?;
                Some((run.clone(), value.clone()))
            })
            .collect())
    }

    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        value: &str,
    ) -> Result<ChildInsert, StoreError> {
        let mut state = self.state();
        if !state.records.contains_key(&(Coll::Run, run.to_owned())) {
            return Ok(ChildInsert::NoRun);
        }
        if !state.open.contains(run) {
            return Ok(ChildInsert::Finished);
        }
        let records = state.children.entry((child, run.to_owned())).or_default();
        if records.contains_key(id) {
            return Ok(ChildInsert::Exists);
        }
        records.insert(id.to_owned(), value.to_owned());
        Ok(ChildInsert::Inserted)
    }

    async fn get_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .state()
            .children
            .get(&(child, run.to_owned()))
            .and_then(|records| records.get(id))
            .cloned())
    }

    async fn swap_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        match state
            .children
            .get_mut(&(child, run.to_owned()))
            .and_then(|records| records.get_mut(id))
        {
            Some(value) if value == old => {
                *value = new.to_owned();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn children(&self, child: Child, run: &str) -> Result<Vec<Pair>, StoreError> {
        Ok(self
            .state()
            .children
            .get(&(child, run.to_owned()))
            .map(|records| {
                records
                    .iter()
                    .map(|(id, value)| (id.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }
}
