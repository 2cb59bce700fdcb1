//! The rules every store shares, over a [`Backend`]'s atomic operations: ids are checked,
//! records sealed on the way in and verified on the way out, runs, intents, approvals and tasks
//! follow their state rules.

use std::time::SystemTime;

use serde_json::Value;

use crate::backend::{Backend, Child, ChildInsert, Coll};
use crate::error::unix_ms;
use crate::seal::Kind;
use crate::{
    Approval, ArgsDigest, Checkpoint, Completion, Finished, Intent, IntentRecord, JournalRecord,
    RunInfo, StoreError, StoreKey, TaskRecord, TaskStatus,
};

/// Longest id the stores accept, in bytes.
pub const MAX_ID_BYTES: usize = 1024;

/// How long a store keeps an expired approval (so that a lookup says `APPROVAL_EXPIRED`
/// rather than nothing), in milliseconds.
const APPROVAL_GRACE_MS: i64 = 24 * 60 * 60 * 1000;

/// The id of a run's one checkpoint record.
const LATEST: &str = "latest";

/// How often a compare-and-swap that lost a race is retried before the store reports it.
const SWAP_TRIES: usize = 16;

/// A backend and the key that authenticates its records.
#[derive(Debug)]
pub(crate) struct Core<B> {
    pub(crate) key: StoreKey,
    pub(crate) backend: B,
}

fn now() -> i64 {
    unix_ms(SystemTime::now())
}

/// Refuses an id the stores cannot hold.
pub(crate) fn check_id(what: &'static str, id: &str) -> Result<(), StoreError> {
    let reason = if id.is_empty() {
        "it is empty".to_owned()
    } else if id.len() > MAX_ID_BYTES {
        format!("it is {} bytes, over {MAX_ID_BYTES}", id.len())
    } else if id.contains('\0') {
        "it contains a NUL character".to_owned()
    } else {
        return Ok(());
    };
    Err(StoreError::InvalidInput { what, reason })
}

impl<B: Backend> Core<B> {
    fn busy(&self, what: &str) -> StoreError {
        StoreError::unavailable(
            self.backend.name(),
            format!("{what} kept changing under {SWAP_TRIES} attempts"),
        )
    }

    fn open_run(&self, run: &str, sealed: &str) -> Result<RunInfo, StoreError> {
        let info: RunInfo = self.key.open(Kind::Run, &[run], sealed)?;
        if info.id != run {
            return Err(StoreError::Tampered {
                what: Kind::Run.what(),
                location: Kind::Run.location(&[run]),
            });
        }
        Ok(info)
    }

    async fn sealed_run(&self, run: &str) -> Result<(String, RunInfo), StoreError> {
        check_id("run id", run)?;
        let sealed = self
            .backend
            .get(Coll::Run, run, now())
            .await?
            .ok_or_else(|| StoreError::RunNotFound { run: run.into() })?;
        let info = self.open_run(run, &sealed)?;
        Ok((sealed, info))
    }

    pub(crate) async fn begin_run(&self, run: &str, meta: &Value) -> Result<RunInfo, StoreError> {
        check_id("run id", run)?;
        let info = RunInfo {
            id: run.into(),
            meta: meta.clone(),
            created_at: crate::error::from_unix_ms(now()),
            finished: None,
        };
        let sealed = self.key.seal(Kind::Run, &[run], &info);
        if self.backend.begin_run(run, &sealed).await? {
            Ok(info)
        } else {
            Err(StoreError::RunExists { run: run.into() })
        }
    }

    pub(crate) async fn run(&self, run: &str) -> Result<Option<RunInfo>, StoreError> {
        match self.sealed_run(run).await {
            Ok((_, info)) => Ok(Some(info)),
            Err(StoreError::RunNotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        sealed: &str,
    ) -> Result<bool, StoreError> {
        match self.backend.insert_child(child, run, id, sealed).await? {
            ChildInsert::Inserted => Ok(true),
            ChildInsert::Exists => Ok(false),
            ChildInsert::NoRun => Err(StoreError::RunNotFound { run: run.into() }),
            ChildInsert::Finished => Err(StoreError::RunFinished { run: run.into() }),
        }
    }

    pub(crate) async fn append_entry(
        &self,
        run: &str,
        index: u64,
        entry: &Value,
    ) -> Result<bool, StoreError> {
        check_id("run id", run)?;
        let id = index.to_string();
        let sealed = self.key.seal(Kind::Entry, &[run, &id], entry);
        self.insert_child(Child::Entry, run, &id, &sealed).await
    }

    pub(crate) async fn entries(&self, run: &str) -> Result<Vec<JournalRecord>, StoreError> {
        self.sealed_run(run).await?;
        let mut entries = Vec::new();
        for (id, sealed) in self.backend.children(Child::Entry, run).await? {
            let entry = self.key.open(Kind::Entry, &[run, &id], &sealed)?;
            let index = id.parse().map_err(|_| StoreError::Tampered {
                what: Kind::Entry.what(),
                location: Kind::Entry.location(&[run, &id]),
            })?;
            entries.push(JournalRecord { index, entry });
        }
        entries.sort_by_key(|record| record.index);
        Ok(entries)
    }

    pub(crate) async fn finish_run(&self, run: &str, outcome: &Value) -> Result<bool, StoreError> {
        for _ in 0..SWAP_TRIES {
            let (sealed, mut info) = self.sealed_run(run).await?;
            if info.finished.is_some() {
                return Ok(false);
            }
            info.finished = Some(Finished {
                at: SystemTime::now(),
                outcome: outcome.clone(),
            });
            let new = self.key.seal(Kind::Run, &[run], &info);
            if self.backend.finish_run(run, &sealed, &new).await? {
                return Ok(true);
            }
        }
        Err(self.busy("the run"))
    }

    pub(crate) async fn unfinished_runs(&self) -> Result<Vec<RunInfo>, StoreError> {
        let mut runs = Vec::new();
        for (run, sealed) in self.backend.open_runs().await? {
            let info = self.open_run(&run, &sealed)?;
            if info.finished.is_none() {
                runs.push(info);
            }
        }
        runs.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(runs)
    }

    pub(crate) async fn save_checkpoint(
        &self,
        run: &str,
        step: u64,
        state: &Value,
    ) -> Result<bool, StoreError> {
        let checkpoint = Checkpoint {
            step,
            state: state.clone(),
        };
        let new = self.key.seal(Kind::Checkpoint, &[run], &checkpoint);
        for _ in 0..SWAP_TRIES {
            let (_, info) = self.sealed_run(run).await?;
            if info.finished.is_some() {
                return Err(StoreError::RunFinished { run: run.into() });
            }
            let Some((old, stored)) = self.sealed_checkpoint(run).await? else {
                if self
                    .insert_child(Child::Checkpoint, run, LATEST, &new)
                    .await?
                {
                    return Ok(true);
                }
                continue;
            };
            if stored.step >= step {
                return Ok(false);
            }
            if self
                .backend
                .swap_child(Child::Checkpoint, run, LATEST, &old, &new)
                .await?
            {
                return Ok(true);
            }
        }
        Err(self.busy("the checkpoint"))
    }

    async fn sealed_checkpoint(
        &self,
        run: &str,
    ) -> Result<Option<(String, Checkpoint)>, StoreError> {
        let Some(sealed) = self
            .backend
            .get_child(Child::Checkpoint, run, LATEST)
            .await?
        else {
            return Ok(None);
        };
        let checkpoint = self.key.open(Kind::Checkpoint, &[run], &sealed)?;
        Ok(Some((sealed, checkpoint)))
    }

    pub(crate) async fn checkpoint(&self, run: &str) -> Result<Option<Checkpoint>, StoreError> {
        self.sealed_run(run).await?;
        Ok(self.sealed_checkpoint(run).await?.map(|(_, c)| c))
    }

    pub(crate) async fn record_intent(
        &self,
        run: &str,
        intent: &Intent,
    ) -> Result<bool, StoreError> {
        check_id("run id", run)?;
        check_id("call id", &intent.call)?;
        let record = IntentRecord {
            intent: intent.clone(),
            recorded_at: SystemTime::now(),
            completed: None,
        };
        let sealed = self.key.seal(Kind::Intent, &[run, &intent.call], &record);
        self.insert_child(Child::Intent, run, &intent.call, &sealed)
            .await
    }

    fn open_intent(&self, run: &str, call: &str, sealed: &str) -> Result<IntentRecord, StoreError> {
        let record: IntentRecord = self.key.open(Kind::Intent, &[run, call], sealed)?;
        if record.intent.call != call {
            return Err(StoreError::Tampered {
                what: Kind::Intent.what(),
                location: Kind::Intent.location(&[run, call]),
            });
        }
        Ok(record)
    }

    pub(crate) async fn complete_intent(
        &self,
        run: &str,
        call: &str,
        result: &Value,
    ) -> Result<bool, StoreError> {
        check_id("run id", run)?;
        check_id("call id", call)?;
        for _ in 0..SWAP_TRIES {
            let sealed = self
                .backend
                .get_child(Child::Intent, run, call)
                .await?
                .ok_or_else(|| StoreError::IntentNotFound {
                    run: run.into(),
                    call: call.into(),
                })?;
            let mut record = self.open_intent(run, call, &sealed)?;
            if record.completed.is_some() {
                return Ok(false);
            }
            record.completed = Some(Completion {
                at: SystemTime::now(),
                result: result.clone(),
            });
            let new = self.key.seal(Kind::Intent, &[run, call], &record);
            if self
                .backend
                .swap_child(Child::Intent, run, call, &sealed, &new)
                .await?
            {
                return Ok(true);
            }
        }
        Err(self.busy("the intent"))
    }

    pub(crate) async fn intents(&self, run: &str) -> Result<Vec<IntentRecord>, StoreError> {
        self.sealed_run(run).await?;
        let mut intents = Vec::new();
        for (call, sealed) in self.backend.children(Child::Intent, run).await? {
            intents.push(self.open_intent(run, &call, &sealed)?);
        }
        intents
            .sort_by(|a, b| (a.recorded_at, &a.intent.call).cmp(&(b.recorded_at, &b.intent.call)));
        Ok(intents)
    }

    pub(crate) async fn spend(&self, id: &str) -> Result<bool, StoreError> {
        check_id("continuation id", id)?;
        let sealed = self.key.seal(Kind::Spent, &[id], &());
        if self
            .backend
            .insert(Coll::Spent, id, &sealed, None, now())
            .await?
        {
            return Ok(true);
        }
        // Spent before: a forged row must not block a continuation unnoticed.
        if let Some(stored) = self.backend.get(Coll::Spent, id, now()).await? {
            self.key.open::<()>(Kind::Spent, &[id], &stored)?;
        }
        Ok(false)
    }

    pub(crate) async fn record_approval(
        &self,
        key: &str,
        approval: &Approval,
    ) -> Result<(), StoreError> {
        check_id("approval key", key)?;
        let sealed = self.key.seal(Kind::Approval, &[key], approval);
        let forget = unix_ms(approval.expires_at).saturating_add(APPROVAL_GRACE_MS);
        self.backend
            .put(Coll::Approval, key, &sealed, Some(forget))
            .await
    }

    pub(crate) async fn approval(
        &self,
        key: &str,
        args: &ArgsDigest,
    ) -> Result<Option<Approval>, StoreError> {
        check_id("approval key", key)?;
        let Some(sealed) = self.backend.get(Coll::Approval, key, now()).await? else {
            return Ok(None);
        };
        let approval: Approval = self.key.open(Kind::Approval, &[key], &sealed)?;
        if &approval.args_digest != args {
            return Err(StoreError::ApprovalArgsChanged {
                key: key.into(),
                approved: approval.args_digest.to_string(),
                requested: args.to_string(),
            });
        }
        if unix_ms(approval.expires_at) <= now() {
            return Err(StoreError::ApprovalExpired {
                key: key.into(),
                expired_at: approval.expires_at,
            });
        }
        Ok(Some(approval))
    }

    pub(crate) async fn create_task(&self, task: &TaskRecord) -> Result<bool, StoreError> {
        check_id("task id", &task.id)?;
        let now = now();
        let expires = task.expires_at.map(unix_ms);
        if expires.is_some_and(|expires| expires <= now) {
            return Err(StoreError::InvalidInput {
                what: "task expiry",
                reason: format!("task {} would expire before it is created", task.id),
            });
        }
        let sealed = self.key.seal(Kind::Task, &[&task.id], task);
        self.backend
            .insert(Coll::Task, &task.id, &sealed, expires, now)
            .await
    }

    async fn sealed_task(&self, id: &str) -> Result<Option<(String, TaskRecord)>, StoreError> {
        check_id("task id", id)?;
        let Some(sealed) = self.backend.get(Coll::Task, id, now()).await? else {
            return Ok(None);
        };
        let task: TaskRecord = self.key.open(Kind::Task, &[id], &sealed)?;
        if task.id != id {
            return Err(StoreError::Tampered {
                what: Kind::Task.what(),
                location: Kind::Task.location(&[id]),
            });
        }
        Ok(Some((sealed, task)))
    }

    pub(crate) async fn task(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.sealed_task(id).await?.map(|(_, task)| task))
    }

    pub(crate) async fn update_task(
        &self,
        id: &str,
        from: TaskStatus,
        to: TaskStatus,
        data: Option<&Value>,
    ) -> Result<bool, StoreError> {
        for _ in 0..SWAP_TRIES {
            let (sealed, mut task) = self
                .sealed_task(id)
                .await?
                .ok_or_else(|| StoreError::TaskNotFound { task: id.into() })?;
            if task.status != from {
                return Ok(false);
            }
            task.status = to;
            if let Some(data) = data {
                task.data = data.clone();
            }
            let new = self.key.seal(Kind::Task, &[id], &task);
            if self
                .backend
                .swap(Coll::Task, id, &sealed, &new, now())
                .await?
            {
                return Ok(true);
            }
        }
        Err(self.busy("the task"))
    }
}
