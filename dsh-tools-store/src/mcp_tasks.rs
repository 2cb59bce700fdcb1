//! A durable store as the task store of the MCP server (`mcp` feature): served tasks outlive
//! the server's process (`docs/CONTRACTS.md`, "Tasks over MCP").

use std::sync::Arc;

use async_trait::async_trait;
use dsh_tools_core::mcp::{TaskEntry, TaskState, TaskStore, TaskStoreError};
use serde_json::Value;

use crate::{DurableStore, StoreError, TaskRecord, TaskStatus};

/// Tasks of the MCP server kept in a [`DurableStore`] (sealed like every record of it).
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools_core::mcp::{McpTasks, TaskEntry, TaskState, TaskStore};
/// use dsh_tools_store::{McpTaskStore, MemoryStore, StoreKey};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = McpTaskStore::new(Arc::new(MemoryStore::new(StoreKey::new([7u8; 32]).unwrap())));
/// let task = TaskEntry { id: "t1".into(), status: TaskState::Working, data: serde_json::json!({}),
///     created_at: std::time::SystemTime::now(), expires_at: None };
/// assert!(store.create(&task).await.unwrap());
/// assert_eq!(store.get("t1").await.unwrap().unwrap().status, TaskState::Working);
/// let _served = McpTasks::new().store(Arc::new(store));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct McpTaskStore {
    store: Arc<dyn DurableStore>,
}

impl McpTaskStore {
    /// The tasks kept in `store`.
    pub fn new(store: Arc<dyn DurableStore>) -> Self {
        Self { store }
    }
}

fn status(state: TaskState) -> TaskStatus {
    match state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        _ => TaskStatus::Cancelled,
    }
}

fn state(status: TaskStatus) -> TaskState {
    match status {
        TaskStatus::Working => TaskState::Working,
        TaskStatus::InputRequired => TaskState::InputRequired,
        TaskStatus::Completed => TaskState::Completed,
        TaskStatus::Failed => TaskState::Failed,
        _ => TaskState::Cancelled,
    }
}

fn failed(e: StoreError) -> TaskStoreError {
    match e {
        StoreError::TaskNotFound { task } => TaskStoreError::NotFound(task),
        other => TaskStoreError::Store(other.to_string()),
    }
}

#[async_trait]
impl TaskStore for McpTaskStore {
    async fn create(&self, task: &TaskEntry) -> Result<bool, TaskStoreError> {
        let record = TaskRecord {
            id: task.id.clone(),
            status: status(task.status),
            data: task.data.clone(),
            created_at: task.created_at,
            expires_at: task.expires_at,
        };
        self.store.create_task(&record).await.map_err(failed)
    }

    async fn get(&self, id: &str) -> Result<Option<TaskEntry>, TaskStoreError> {
        let record = self.store.task(id).await.map_err(failed)?;
        Ok(record.map(|record| TaskEntry {
            id: record.id,
            status: state(record.status),
            data: record.data,
            created_at: record.created_at,
            expires_at: record.expires_at,
        }))
    }

    async fn update(
        &self,
        id: &str,
        from: TaskState,
        to: TaskState,
        data: &Value,
    ) -> Result<bool, TaskStoreError> {
        from.check_transition(to)?;
        self.store
            .update_task(id, status(from), status(to), Some(data))
            .await
            .map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use serde_json::json;

    use super::*;
    use crate::{MemoryStore, StoreKey};

    #[tokio::test]
    async fn tasks_round_trip_and_illegal_moves_are_refused() {
        let key = StoreKey::new([7u8; 32]).unwrap();
        let store = McpTaskStore::new(Arc::new(MemoryStore::new(key)));
        let task = TaskEntry {
            id: "t1".into(),
            status: TaskState::Working,
            data: json!({"tool": "bash"}),
            created_at: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_000),
            expires_at: None,
        };
        assert!(store.create(&task).await.unwrap());
        assert_eq!(store.get("t1").await.unwrap(), Some(task.clone()));
        let asked = json!({"inputRequests": {"confirm": {}}});
        let moved = store.update("t1", TaskState::Working, TaskState::InputRequired, &asked);
        assert!(moved.await.unwrap());
        let got = store.get("t1").await.unwrap().unwrap();
        assert_eq!((got.status, got.data), (TaskState::InputRequired, asked));
        let none = json!({});
        let cancelled = store.update("t1", TaskState::InputRequired, TaskState::Cancelled, &none);
        assert!(cancelled.await.unwrap());
        let illegal = store.update("t1", TaskState::Cancelled, TaskState::Working, &none);
        assert_eq!(
            illegal.await.unwrap_err().to_string(),
            "a cancelled task cannot become working: it is over"
        );
        let missing = store.update("t2", TaskState::Working, TaskState::Failed, &none);
        assert_eq!(
            missing.await.unwrap_err(),
            TaskStoreError::NotFound("t2".into())
        );
        assert_eq!(store.get("t2").await.unwrap(), None);
    }
}
