//! Where served tasks live (`docs/CONTRACTS.md`, "Tasks over MCP"): a small object-safe
//! store the server needs, its status machine, and the in-memory default. A durable store
//! (a directory, PostgreSQL, Redis) plugs in through the runtime's `store` feature.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task's status (MCP's task states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskState {
    /// Running.
    Working,
    /// Waiting for the client's answers (`tasks/update`).
    InputRequired,
    /// Done: the tool's result (an `isError` one included).
    Completed,
    /// The server failed the request (a protocol-level error).
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskState {
    /// Whether the task is over (completed, failed or cancelled).
    ///
    /// ```
    /// use dsh_tools_runtime::mcp::TaskState;
    /// assert!(TaskState::Cancelled.is_terminal());
    /// assert!(!TaskState::InputRequired.is_terminal());
    /// ```
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The wire name, e.g. `input_required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether a task may move from `self` to `to`: a working task may wait for input or end;
    /// a waiting one may resume or end; an ended one never moves again.
    ///
    /// ```
    /// use dsh_tools_runtime::mcp::TaskState;
    /// assert!(TaskState::Working.check_transition(TaskState::Completed).is_ok());
    /// assert_eq!(
    ///     TaskState::Completed.check_transition(TaskState::Working).unwrap_err().to_string(),
    ///     "a completed task cannot become working: it is over",
    /// );
    /// ```
    pub fn check_transition(self, to: TaskState) -> Result<(), TaskStoreError> {
        use TaskState::{Cancelled, Completed, Failed, InputRequired, Working};
        let legal = matches!(
            (self, to),
            (Working, InputRequired | Completed | Failed | Cancelled)
                | (
                    InputRequired,
                    InputRequired | Working | Completed | Failed | Cancelled
                )
        );
        if legal {
            Ok(())
        } else {
            Err(TaskStoreError::IllegalTransition { from: self, to })
        }
    }
}

/// One task as a [`TaskStore`] keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEntry {
    /// The task id.
    pub id: String,
    /// Its status.
    pub status: TaskState,
    /// What the server keeps with it (tool, result or error, questions, timestamps).
    pub data: Value,
    /// When it was created.
    pub created_at: SystemTime,
    /// When the store forgets it (`None`: never).
    pub expires_at: Option<SystemTime>,
}

/// Why a task store refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The status machine forbids the move.
    #[error("a {} task cannot become {}: {}", from.as_str(), to.as_str(),
        if from.is_terminal() { "it is over" } else { "not a legal move" })]
    IllegalTransition {
        /// The status it has.
        from: TaskState,
        /// The status asked for.
        to: TaskState,
    },
    /// No live task has the id (never created, or expired).
    #[error("no task {0} (unknown or expired)")]
    NotFound(String),
    /// The store itself failed.
    #[error("the task store failed: {0}")]
    Store(String),
}

/// What the MCP server needs of a task store. Object-safe: the server holds an
/// `Arc<dyn TaskStore>`. Each write is atomic in the store: of two racing updates of one task,
/// one sees `Ok(true)`.
#[async_trait]
pub trait TaskStore: Send + Sync + std::fmt::Debug {
    /// Creates `task`, once: `Ok(false)` when a live task has its id.
    async fn create(&self, task: &TaskEntry) -> Result<bool, TaskStoreError>;

    /// The task `id`, unless it does not exist or expired.
    async fn get(&self, id: &str) -> Result<Option<TaskEntry>, TaskStoreError>;

    /// Moves task `id` from `from` to `to` with `data`, atomically: `Ok(false)` when its status
    /// was not `from`. Refused ([`TaskStoreError::NotFound`]) when there is no live task `id`,
    /// and ([`TaskStoreError::IllegalTransition`]) when the move is not legal.
    async fn update(
        &self,
        id: &str,
        from: TaskState,
        to: TaskState,
        data: &Value,
    ) -> Result<bool, TaskStoreError>;
}

/// Tasks in this process's memory: the default (lost when the process ends).
///
/// ```
/// use dsh_tools_runtime::mcp::{MemoryTaskStore, TaskEntry, TaskState, TaskStore};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryTaskStore::default();
/// let task = TaskEntry { id: "t1".into(), status: TaskState::Working, data: serde_json::json!({}),
///     created_at: std::time::SystemTime::now(), expires_at: None };
/// assert!(store.create(&task).await.unwrap());
/// assert!(store.update("t1", TaskState::Working, TaskState::Completed, &task.data).await.unwrap());
/// assert_eq!(store.get("t1").await.unwrap().unwrap().status, TaskState::Completed);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskEntry>>,
}

impl MemoryTaskStore {
    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskEntry>> {
        let mut tasks = self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = SystemTime::now();
        tasks.retain(|_, task| task.expires_at.is_none_or(|at| at > now));
        tasks
    }
}

#[async_trait]
impl TaskStore for MemoryTaskStore {
    async fn create(&self, task: &TaskEntry) -> Result<bool, TaskStoreError> {
        let mut tasks = self.live();
        if tasks.contains_key(&task.id) {
            return Ok(false);
        }
        tasks.insert(task.id.clone(), task.clone());
        Ok(true)
    }

    async fn get(&self, id: &str) -> Result<Option<TaskEntry>, TaskStoreError> {
        Ok(self.live().get(id).cloned())
    }

    async fn update(
        &self,
        id: &str,
        from: TaskState,
        to: TaskState,
        data: &Value,
    ) -> Result<bool, TaskStoreError> {
        from.check_transition(to)?;
        let mut tasks = self.live();
        let task = tasks
            .get_mut(id)
            .ok_or_else(|| TaskStoreError::NotFound(id.to_owned()))?;
        if task.status != from {
            return Ok(false);
        }
        task.status = to;
        task.data = data.clone();
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn entry(id: &str, expires_at: Option<SystemTime>) -> TaskEntry {
        TaskEntry {
            id: id.to_owned(),
            status: TaskState::Working,
            data: json!({}),
            created_at: SystemTime::now(),
            expires_at,
        }
    }

    #[test]
    fn the_status_machine_allows_exactly_the_legal_moves() {
        use TaskState::{Cancelled, Completed, Failed, InputRequired, Working};
        let all = [Working, InputRequired, Completed, Failed, Cancelled];
        for from in all {
            for to in all {
                let legal = match from {
                    Working => to != Working,
                    InputRequired => true,
                    _ => false,
                };
                assert_eq!(
                    from.check_transition(to).is_ok(),
                    legal,
                    "{from:?} -> {to:?}"
                );
            }
        }
        assert_eq!(
            Working.check_transition(Working).unwrap_err().to_string(),
            "a working task cannot become working: not a legal move"
        );
        assert_eq!(
            Cancelled
                .check_transition(Completed)
                .unwrap_err()
                .to_string(),
            "a cancelled task cannot become completed: it is over"
        );
    }

    #[tokio::test]
    async fn the_memory_store_refuses_illegal_moves_and_forgets_expired_tasks() {
        let store = MemoryTaskStore::default();
        assert!(store.create(&entry("t", None)).await.unwrap());
        assert!(!store.create(&entry("t", None)).await.unwrap());
        let data = json!({"result": {}});
        let moved = store.update("t", TaskState::Working, TaskState::Completed, &data);
        assert!(moved.await.unwrap());
        // Not from the status it has: no move.
        let stale = store.update("t", TaskState::Working, TaskState::Failed, &data);
        assert!(!stale.await.unwrap());
        let illegal = store.update("t", TaskState::Completed, TaskState::Working, &data);
        assert_eq!(
            illegal.await.unwrap_err(),
            TaskStoreError::IllegalTransition {
                from: TaskState::Completed,
                to: TaskState::Working
            }
        );
        let missing = store.update("nope", TaskState::Working, TaskState::Failed, &data);
        assert_eq!(
            missing.await.unwrap_err().to_string(),
            "no task nope (unknown or expired)"
        );
        let past = SystemTime::now() - Duration::from_secs(1);
        assert!(store.create(&entry("old", Some(past))).await.unwrap());
        assert_eq!(store.get("old").await.unwrap(), None);
    }
}
