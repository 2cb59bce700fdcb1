//! The one error type of every store, with stable codes.

use std::time::SystemTime;

/// Why a store operation failed. Each variant has a stable code ([`StoreError::code`]); a
/// failed operation wrote nothing (stores write each step in one transaction, one Lua script,
/// or one rename under the directory's lock).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store cannot be reached or did not answer: a database that is down, a refused
    /// connection, a directory that cannot be written. Nothing was written.
    #[error("the {store} store is unavailable: {detail}")]
    Unavailable {
        /// Which store (`memory`, `file`, `postgres`, `redis`).
        store: &'static str,
        /// What failed, as the driver or the operating system said it (never a password).
        detail: String,
    },
    /// A stored record failed authentication: it was altered, forged, or moved from another
    /// run or key. It was not used.
    #[error("{what} at {location} refused: it was altered or moved (authentication failed)")]
    Tampered {
        /// What kind of record (`journal entry`, `run`, `intent`, `approval`, `task`, `spent id`).
        what: &'static str,
        /// Where: the run id and entry index, the task id, the approval key.
        location: String,
    },
    /// No run of that id.
    #[error("run {run} is not in the store")]
    RunNotFound {
        /// The run id.
        run: String,
    },
    /// The run already exists (`begin_run` of an id in use).
    #[error("run {run} already exists")]
    RunExists {
        /// The run id.
        run: String,
    },
    /// The run is finished: its journal takes no more entries and intents.
    #[error("run {run} is finished: it takes no more entries or intents")]
    RunFinished {
        /// The run id.
        run: String,
    },
    /// No intent of that call in that run.
    #[error("no intent of call {call} in run {run}")]
    IntentNotFound {
        /// The run id.
        run: String,
        /// The call id.
        call: String,
    },
    /// No task of that id (or it expired).
    #[error("task {task} is not in the store (or it expired)")]
    TaskNotFound {
        /// The task id.
        task: String,
    },
    /// The approval decision expired: the call must be asked again.
    #[error("the approval of {key} expired at {} (unix ms): ask again", unix_ms(*.expired_at))]
    ApprovalExpired {
        /// The approval's key (the call it approves).
        key: String,
        /// When it expired.
        expired_at: SystemTime,
    },
    /// The approval decision was made for other arguments: the call must be asked again.
    #[error(
        "the approval of {key} was given for other arguments (approved {approved}, now {requested}): ask again"
    )]
    ApprovalArgsChanged {
        /// The approval's key.
        key: String,
        /// The digest the decision is bound to.
        approved: String,
        /// The digest of the arguments now.
        requested: String,
    },
    /// An id or value the store cannot hold (empty, too long).
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// Which input.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The host key is shorter than [`MIN_KEY_BYTES`](crate::MIN_KEY_BYTES).
    #[error(
        "a store key needs at least {} bytes (got {bytes})",
        crate::MIN_KEY_BYTES
    )]
    KeyTooShort {
        /// The length given.
        bytes: usize,
    },
    /// The database holds a newer schema than this build knows.
    #[error(
        "the {store} store's schema is version {found}, newer than this build's {supported}: upgrade dsh-tools-store"
    )]
    SchemaTooNew {
        /// Which store.
        store: &'static str,
        /// The version found.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
}

impl StoreError {
    /// The stable code of the error.
    ///
    /// ```
    /// use dsh_tools_store::StoreError;
    /// let error = StoreError::Unavailable { store: "redis", detail: "connection refused".into() };
    /// assert_eq!(error.code(), "STORE_UNAVAILABLE");
    /// assert_eq!(error.to_string(), "the redis store is unavailable: connection refused");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unavailable { .. } => "STORE_UNAVAILABLE",
            Self::Tampered { .. } => "STORE_RECORD_TAMPERED",
            Self::RunNotFound { .. } => "STORE_RUN_NOT_FOUND",
            Self::RunExists { .. } => "STORE_RUN_EXISTS",
            Self::RunFinished { .. } => "STORE_RUN_FINISHED",
            Self::IntentNotFound { .. } => "STORE_INTENT_NOT_FOUND",
            Self::TaskNotFound { .. } => "STORE_TASK_NOT_FOUND",
            Self::ApprovalExpired { .. } => "APPROVAL_EXPIRED",
            Self::ApprovalArgsChanged { .. } => "APPROVAL_ARGS_CHANGED",
            Self::InvalidInput { .. } => "STORE_INVALID_INPUT",
            Self::KeyTooShort { .. } => "STORE_KEY_TOO_SHORT",
            Self::SchemaTooNew { .. } => "STORE_SCHEMA_TOO_NEW",
        }
    }

    pub(crate) fn unavailable(store: &'static str, detail: impl std::fmt::Display) -> Self {
        Self::Unavailable {
            store,
            detail: detail.to_string(),
        }
    }
}

/// An error and its sources, each said once (`error connecting to server: Connection refused`).
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text
}

/// Milliseconds since the Unix epoch (0 before it; saturating far after).
pub(crate) fn unix_ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The time `ms` milliseconds after the Unix epoch.
pub(crate) fn from_unix_ms(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}
