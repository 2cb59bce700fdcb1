//! The records a store holds, as the host sees them.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ArgsDigest;

/// A durable run: what the host recorded when it began, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run id.
    pub id: String,
    /// What the host needs to resume it (program, language, arguments …): opaque to the store.
    pub meta: Value,
    /// When it began.
    #[serde(with = "ms")]
    pub created_at: SystemTime,
    /// How and when it ended (`None` while it is unfinished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<Finished>,
}

/// How and when a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// When.
    #[serde(with = "ms")]
    pub at: SystemTime,
    /// The outcome the host recorded (opaque to the store; `null` is an outcome too).
    pub outcome: Value,
}

/// When a call completed, and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// When.
    #[serde(with = "ms")]
    pub at: SystemTime,
    /// The call's result (opaque to the store; `null` is a result too).
    pub result: Value,
}

/// One journal entry: the `index`th completed call of a run and what it settled with (opaque
/// to the store).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalRecord {
    /// The entry's number in its run.
    pub index: u64,
    /// The entry.
    pub entry: Value,
}

/// The latest checkpoint of a run: the state a runtime that snapshots (Python on Monty)
/// resumes from, and the step it was taken at (later steps replace earlier ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The step it was taken at (the number of calls made, for instance).
    pub step: u64,
    /// The runtime's state: opaque to the store.
    pub state: Value,
}

/// A write-ahead intent: a side-effecting call about to be dispatched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The call's id (`<run id>:code:<n>`), unique in its run.
    pub call: String,
    /// The tool called.
    pub tool: String,
    /// The digest of its arguments.
    pub args_digest: ArgsDigest,
    /// The idempotency key the call receives (stable across replays and machines).
    pub idempotency_key: String,
}

/// An intent and, once the call completed, its result. An intent without a result found on
/// recovery is a call whose outcome is unknown: it may or may not have taken effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntentRecord {
    /// The intent.
    pub intent: Intent,
    /// When it was recorded.
    #[serde(with = "ms")]
    pub recorded_at: SystemTime,
    /// The call's completion (`None`: not completed; on recovery, outcome unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<Completion>,
}

/// A person's decision on a call, bound to the digest of the exact arguments it was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The digest of the arguments decided on.
    pub args_digest: ArgsDigest,
    /// Who decided (as the host authenticated them).
    pub approver: String,
    /// Whether the call may run.
    pub approved: bool,
    /// The approver's reason, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When the decision was made.
    #[serde(with = "ms")]
    pub decided_at: SystemTime,
    /// When it stops applying: a later lookup is refused with `APPROVAL_EXPIRED`.
    #[serde(with = "ms")]
    pub expires_at: SystemTime,
}

/// The status of a task (MCP's task states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input (an approval, an answer).
    InputRequired,
    /// Done.
    Completed,
    /// Failed.
    Failed,
    /// Cancelled.
    Cancelled,
}

/// A task: a long-running request whose state outlives the process serving it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id.
    pub id: String,
    /// Its status.
    pub status: TaskStatus,
    /// What the host keeps with it (result, run id …): opaque to the store.
    pub data: Value,
    /// When it was created.
    #[serde(with = "ms")]
    pub created_at: SystemTime,
    /// When the store forgets it (`None`: kept until deleted by the operator).
    #[serde(default, with = "ms_opt", skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<SystemTime>,
}

/// `SystemTime` as Unix milliseconds.
mod ms {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(time: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(crate::error::unix_ms(*time))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        Ok(crate::error::from_unix_ms(i64::deserialize(d)?))
    }
}

/// `Option<SystemTime>` as Unix milliseconds.
mod ms_opt {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        time: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match time {
            Some(time) => s.serialize_some(&crate::error::unix_ms(*time)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(crate::error::from_unix_ms))
    }
}
