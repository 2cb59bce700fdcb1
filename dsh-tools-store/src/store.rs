//! The store trait every implementation provides.

use async_trait::async_trait;
use serde_json::Value;

use crate::{
    Approval, ArgsDigest, Checkpoint, Intent, IntentRecord, JournalRecord, RunInfo, StoreError,
    TaskRecord, TaskStatus,
};

/// A durable store: run journals, write-ahead intents, spent continuation ids, approval
/// decisions and task records, shared by every process that opens the same store with the
/// same [`StoreKey`](crate::StoreKey).
///
/// Every once-only step is atomic in the store itself (a unique key, a conditional write in one
/// transaction or Lua script, or a write under the directory's lock): of two processes racing
/// on it, exactly one sees `Ok(true)`. Every record read back is authenticated first; an
/// altered or moved one is refused with [`StoreError::Tampered`]. A failed call wrote nothing.
/// The trait is object-safe: hosts hold an `Arc<dyn DurableStore>`.
#[async_trait]
pub trait DurableStore: Send + Sync + std::fmt::Debug {
    /// Which store this is (`memory`, `file`, `postgres`, `redis`).
    fn kind(&self) -> &'static str;

    /// Begins run `run` with the host's `meta` (what it needs to resume the run). Refused with
    /// [`StoreError::RunExists`] when the id is taken.
    async fn begin_run(&self, run: &str, meta: &Value) -> Result<RunInfo, StoreError>;

    /// The run `run`, if the store has it.
    async fn run(&self, run: &str) -> Result<Option<RunInfo>, StoreError>;

    /// Appends entry `index` of run `run`, once: `Ok(true)` when it was written now,
    /// `Ok(false)` when entry `index` was already there (the stored one stays). Refused when
    /// the run does not exist or is finished.
    async fn append_entry(&self, run: &str, index: u64, entry: &Value) -> Result<bool, StoreError>;

    /// The entries of run `run`, by index (an index may be missing while calls complete out of
    /// order). Refused when the run does not exist.
    async fn entries(&self, run: &str) -> Result<Vec<JournalRecord>, StoreError>;

    /// Marks run `run` finished with its `outcome`: `Ok(true)` now, `Ok(false)` when it was
    /// already finished (the first outcome stays).
    async fn finish_run(&self, run: &str, outcome: &Value) -> Result<bool, StoreError>;

    /// The runs not finished, oldest first: those to recover after a crash.
    async fn unfinished_runs(&self) -> Result<Vec<RunInfo>, StoreError>;

    /// Saves the checkpoint of run `run` taken at `step` when it is later than the stored one:
    /// `Ok(true)` saved, `Ok(false)` a checkpoint of the same or a later step is there (it
    /// stays). Refused when the run does not exist or is finished.
    async fn save_checkpoint(
        &self,
        run: &str,
        step: u64,
        state: &Value,
    ) -> Result<bool, StoreError>;

    /// The latest checkpoint of run `run` (`None` before the first). Refused when the run does
    /// not exist.
    async fn checkpoint(&self, run: &str) -> Result<Option<Checkpoint>, StoreError>;

    /// Records the intent of a call of run `run` before it is dispatched, once: `Ok(false)`
    /// when an intent of the same call id exists (the stored one stays).
    async fn record_intent(&self, run: &str, intent: &Intent) -> Result<bool, StoreError>;

    /// Completes the intent of `call` with its `result`: `Ok(false)` when it was already
    /// completed (the first result stays). Refused when there is no such intent.
    async fn complete_intent(
        &self,
        run: &str,
        call: &str,
        result: &Value,
    ) -> Result<bool, StoreError>;

    /// Every intent of run `run`, in the order they were recorded.
    async fn intents(&self, run: &str) -> Result<Vec<IntentRecord>, StoreError>;

    /// The intents of run `run` without a result: calls whose outcome is unknown after a
    /// crash (they may or may not have taken effect).
    async fn unresolved_intents(&self, run: &str) -> Result<Vec<IntentRecord>, StoreError> {
        let mut intents = self.intents(run).await?;
        intents.retain(|record| record.completed.is_none());
        Ok(intents)
    }

    /// Spends continuation id `id`: `Ok(true)` when it was not spent before (the caller may
    /// resume), `Ok(false)` when it was. Exactly one of any number of concurrent spends of one
    /// id, in any number of processes, sees `Ok(true)`.
    async fn spend(&self, id: &str) -> Result<bool, StoreError>;

    /// Records a decision on the call `key` (replacing an earlier one).
    async fn record_approval(&self, key: &str, approval: &Approval) -> Result<(), StoreError>;

    /// The decision on the call `key` for arguments whose digest is `args`: `Ok(None)` when
    /// none was recorded; refused with [`StoreError::ApprovalArgsChanged`] when it was made for
    /// other arguments and with [`StoreError::ApprovalExpired`] when it expired — in both cases
    /// the call must be asked again. Stores forget an expired decision a day after it expired.
    async fn approval(&self, key: &str, args: &ArgsDigest) -> Result<Option<Approval>, StoreError>;

    /// Creates a task, once: `Ok(false)` when a live task has the id. An `expires_at` in the
    /// past is refused.
    async fn create_task(&self, task: &TaskRecord) -> Result<bool, StoreError>;

    /// The task `id`, unless it does not exist or expired.
    async fn task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError>;

    /// Moves task `id` from status `from` to `to` (and replaces its data when `data` is
    /// given), atomically: `Ok(false)` when its status was not `from`. Its expiry stays.
    /// Refused when the task does not exist or expired.
    async fn update_task(
        &self,
        id: &str,
        from: TaskStatus,
        to: TaskStatus,
        data: Option<&Value>,
    ) -> Result<bool, StoreError>;
}
