//! What each store implements: a few atomic operations on sealed records. The rules (sealing,
//! verification, run state, expiry of approvals, task transitions) live once, in `core`.

use async_trait::async_trait;

use crate::StoreError;

/// The top-level collections (one record per id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Coll {
    Run,
    Spent,
    Approval,
    Task,
}

impl Coll {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Spent => "spent",
            Self::Approval => "approval",
            Self::Task => "task",
        }
    }
}

/// The collections of records that belong to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Child {
    Entry,
    Intent,
    Checkpoint,
}

impl Child {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Entry => "entry",
            Self::Intent => "intent",
            Self::Checkpoint => "checkpoint",
        }
    }
}

/// What inserting a run's record found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildInsert {
    Inserted,
    Exists,
    NoRun,
    Finished,
}

/// A record's value and id as a backend returns them.
pub(crate) type Pair = (String, String);

/// Atomic operations on sealed records. `now` and `expires` are Unix milliseconds; a record
/// whose expiry is at or before `now` does not exist.
#[async_trait]
pub(crate) trait Backend: Send + Sync + std::fmt::Debug + 'static {
    /// The store's name in errors.
    fn name(&self) -> &'static str;
    /// Inserts when no live record has the id: `true` when inserted.
    async fn insert(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// Inserts or replaces.
    async fn put(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
    ) -> Result<(), StoreError>;
    /// The live record of the id.
    async fn get(&self, coll: Coll, id: &str, now: i64) -> Result<Option<String>, StoreError>;
    /// Replaces the live record `old` by `new` (keeping its expiry): `true` when it was `old`.
    async fn swap(
        &self,
        coll: Coll,
        id: &str,
        old: &str,
        new: &str,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// Inserts run record `value` and marks the run open: `true` when inserted.
    async fn begin_run(&self, run: &str, value: &str) -> Result<bool, StoreError>;
    /// Replaces run record `old` by `new` and marks the run finished: `true` when it was `old`.
    async fn finish_run(&self, run: &str, old: &str, new: &str) -> Result<bool, StoreError>;
    /// The records of the open runs (id, value).
    async fn open_runs(&self) -> Result<Vec<Pair>, StoreError>;
    /// Inserts a record of `run` when the run exists, is open, and has none of that id.
    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        value: &str,
    ) -> Result<ChildInsert, StoreError>;
    /// The record `id` of `run`.
    async fn get_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError>;
    /// Replaces record `id` of `run` from `old` to `new`: `true` when it was `old`.
    async fn swap_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError>;
    /// Every record of `run` (id, value), in no particular order.
    async fn children(&self, child: Child, run: &str) -> Result<Vec<Pair>, StoreError>;
}
