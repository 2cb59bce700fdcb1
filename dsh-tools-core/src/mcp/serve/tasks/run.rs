//! The tasks of one served view: created in the store before the handle is answered, run in
//! the background, asked for input through `tasks/update`, cancelled, and read back by
//! `tasks/get` (`docs/CONTRACTS.md`, "Tasks over MCP").

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{AskError, CallerInput, InputKind, InputRequest};
use rmcp::model::{
    ClientCapabilities, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::store::{TaskEntry, TaskState, TaskStore, TaskStoreError};

/// The poll interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

/// A task this process runs: its cancellation and its unanswered questions.
#[derive(Default)]
pub(crate) struct Live {
    pub(crate) cancel: CancellationToken,
    pending: Mutex<BTreeMap<String, (Value, oneshot::Sender<Value>)>>,
    /// Serialises this process's writes of the task.
    write: tokio::sync::Mutex<()>,
}

/// The tasks of one served view.
#[derive(Debug)]
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    ttl: Duration,
    live: Mutex<HashMap<String, Arc<Live>>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn store_error(e: TaskStoreError) -> rmcp::ErrorData {
    match e {
        TaskStoreError::NotFound(id) => unknown(&id),
        other => rmcp::ErrorData::internal_error(other.to_string(), None),
    }
}

/// The protocol error of an unknown task id (-32602, naming it).
fn unknown(id: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::invalid_params(
        format!("unknown task: {id} (never created here, or expired)"),
        Some(json!({"taskId": id})),
    )
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, ttl: Duration) -> Arc<Self> {
        Arc::new(Self {
            store,
            ttl,
            live: Mutex::default(),
        })
    }

    /// Creates a working task for `tool` (in the store before this returns).
    pub(crate) async fn create(&self, tool: &str) -> Result<(Task, Arc<Live>), rmcp::ErrorData> {
        let now = SystemTime::now();
        let entry = TaskEntry {
            id: format!("task-{}", super::super::rounds::nonce()),
            status: TaskState::Working,
            data: json!({"tool": tool, "updatedAt": unix_ms(now)}),
            created_at: now,
            expires_at: Some(now + self.ttl),
        };
        let created = self.store.create(&entry).await.map_err(store_error)?;
        if !created {
            return Err(rmcp::ErrorData::internal_error(
                format!("task id {} is taken", entry.id),
                None,
            ));
        }
        let live = Arc::new(Live::default());
        lock(&self.live).insert(entry.id.clone(), Arc::clone(&live));
        Ok((self.task(&entry), live))
    }

    /// The wire task of `entry` (without its payload).
    fn task(&self, entry: &TaskEntry) -> Task {
        let updated = entry.data["updatedAt"]
            .as_u64()
            .map_or(entry.created_at, |ms| {
                UNIX_EPOCH + Duration::from_millis(ms)
            });
        let mut task = Task::new(
            entry.id.clone(),
            status(entry.status),
            iso8601(entry.created_at),
            iso8601(updated),
        )
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        task.ttl_ms = Some(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        task
    }

    fn live(&self, id: &str) -> Option<Arc<Live>> {
        lock(&self.live).get(id).cloned()
    }

    /// Writes `to` with `data` over the task's current state, unless it is over.
    async fn write(
        &self,
        id: &str,
        change: impl Fn(&TaskEntry) -> Option<(TaskState, Value)>,
    ) -> Result<(), TaskStoreError> {
        let entry = self
            .store
            .get(id)
            .await?
            .ok_or_else(|| TaskStoreError::NotFound(id.to_owned()))?;
        if entry.status.is_terminal() {
            return Ok(());
        }
        if let Some((to, mut data)) = change(&entry) {
            data["updatedAt"] = json!(unix_ms(SystemTime::now()));
            self.store.update(id, entry.status, to, &data).await?;
        }
        Ok(())
    }

    /// Records the task's unanswered questions (or that it runs again).
    async fn publish(&self, id: &str, live: &Live) {
        let _writing = live.write.lock().await;
        let asked: serde_json::Map<String, Value> = lock(&live.pending)
            .iter()
            .map(|(key, (request, _))| (key.clone(), request.clone()))
            .collect();
        let written = self
            .write(id, |entry| {
                let mut data = entry.data.clone();
                if asked.is_empty() {
                    data.as_object_mut()?.remove("inputRequests");
                    (entry.status != TaskState::Working).then_some((TaskState::Working, data))
                } else {
                    data["inputRequests"] = Value::Object(asked.clone());
                    Some((TaskState::InputRequired, data))
                }
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(task = id, "recording the task's questions failed: {e}");
        }
    }

    /// Records the tool's result, `isError` ones included (unless the task was cancelled
    /// meanwhile): the task completed.
    pub(crate) async fn finish(&self, id: &str, result: JsonObject) {
        let Some(live) = self.live(id) else { return };
        {
            let _writing = live.write.lock().await;
            let written = self
                .write(id, |entry| {
                    let mut data = entry.data.clone();
                    data.as_object_mut()?.remove("inputRequests");
                    data["result"] = Value::Object(result.clone());
                    Some((TaskState::Completed, data))
                })
                .await;
            if let Err(e) = written {
                tracing::warn!(task = id, "recording the task's outcome failed: {e}");
            }
        }
        lock(&self.live).remove(id);
    }

    /// `tasks/get`: the task and its payload. A task not over that no process here runs was
    /// orphaned by a server that stopped: it is failed now, saying so.
    pub(crate) async fn get(&self, id: &str) -> Result<GetTaskResult, rmcp::ErrorData> {
        let entry = self.entry(id).await?;
        let entry = if !entry.status.is_terminal() && self.live(id).is_none() {
            let error = json!({
                "code": -32603,
                "message": format!(
                    "task {id} was orphaned: the server that ran it stopped before it \
                     finished, so its outcome is unknown (the tool may or may not have taken \
                     effect)"
                ),
            });
            let mut data = entry.data.clone();
            data["error"] = error;
            data["updatedAt"] = json!(unix_ms(SystemTime::now()));
            self.store
                .update(id, entry.status, TaskState::Failed, &data)
                .await
                .map_err(store_error)?;
            self.entry(id).await?
        } else {
            entry
        };
        let payload = match entry.status {
            TaskState::Working => TaskPayload::Working,
            TaskState::InputRequired => TaskPayload::InputRequired {
                input_requests: serde_json::from_value(entry.data["inputRequests"].clone())
                    .unwrap_or_default(),
            },
            TaskState::Completed => TaskPayload::Completed {
                result: object(&entry.data["result"]),
            },
            TaskState::Failed => TaskPayload::Failed {
                error: object(&entry.data["error"]),
            },
            TaskState::Cancelled => TaskPayload::Cancelled,
        };
        Ok(GetTaskResult::new(DetailedTask::new(
            self.task(&entry),
            payload,
        )))
    }

    async fn entry(&self, id: &str) -> Result<TaskEntry, rmcp::ErrorData> {
        self.store
            .get(id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| unknown(id))
    }

    /// `tasks/update`: answers the questions the task asked (answers to keys it did not ask
    /// are ignored).
    pub(crate) async fn update(
        &self,
        id: &str,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), rmcp::ErrorData> {
        self.entry(id).await?;
        let Some(live) = self.live(id) else {
            return Ok(());
        };
        for (key, answer) in responses {
            let asked = lock(&live.pending).remove(&key);
            if let Some((_, reply)) = asked {
                let _ = reply.send(answer);
            }
        }
        self.publish(id, &live).await;
        Ok(())
    }

    /// `tasks/cancel`: a task not over is cancelled (and its run stopped); an ended one stays.
    pub(crate) async fn cancel(&self, id: &str) -> Result<(), rmcp::ErrorData> {
        self.entry(id).await?;
        let Some(live) = self.live(id) else {
            return Ok(());
        };
        {
            let _writing = live.write.lock().await;
            self.write(id, |entry| {
                let mut data = entry.data.clone();
                data.as_object_mut()?.remove("inputRequests");
                Some((TaskState::Cancelled, data))
            })
            .await
            .map_err(store_error)?;
        }
        live.cancel.cancel();
        lock(&live.pending).clear();
        Ok(())
    }
}

fn object(value: &Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

fn status(state: TaskState) -> TaskStatus {
    match state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired => TaskStatus::InputRequired,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    }
}

/// A task's questions: parked in the task until `tasks/update` answers them.
pub(crate) struct TaskInput {
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) id: String,
    pub(crate) live: Arc<Live>,
    pub(crate) capabilities: ClientCapabilities,
}

impl CallerInput for TaskInput {
    fn can_answer(&self, kind: InputKind) -> bool {
        super::super::rounds::declares(&self.capabilities, kind)
    }

    fn ask(&self, key: &str, request: InputRequest) -> BoxFuture<'static, Result<Value, AskError>> {
        let kind = request.kind;
        if !self.can_answer(kind) {
            return Box::pin(std::future::ready(Err(AskError::NotDeclared(kind))));
        }
        let (reply, answer) = oneshot::channel();
        lock(&self.live.pending).insert(key.to_owned(), (request.to_mcp(), reply));
        let (tasks, id, live) = (
            Arc::clone(&self.tasks),
            self.id.clone(),
            Arc::clone(&self.live),
        );
        Box::pin(async move {
            tasks.publish(&id, &live).await;
            answer.await.map_err(|_| AskError::Failed {
                kind,
                reason: "the task ended before the question was answered".to_owned(),
            })
        })
    }
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `time` as RFC 3339 UTC with milliseconds, e.g. `2026-12-07T22:55:01.123Z`.
pub(crate) fn iso8601(time: SystemTime) -> String {
    let ms = unix_ms(time);
    let (secs, millis) = (ms / 1000, ms % 1000);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::super::MemoryTaskStore;
    use super::*;

    fn tasks(ttl: Duration) -> Arc<Tasks> {
        Tasks::new(Arc::new(MemoryTaskStore::default()), ttl)
    }

    fn status_of(result: &GetTaskResult) -> Value {
        serde_json::to_value(result).unwrap()["status"].clone()
    }

    #[tokio::test]
    async fn a_task_is_readable_once_created_and_cancelled_once() {
        let tasks = tasks(Duration::from_secs(60));
        let (task, live) = tasks.create("slow").await.unwrap();
        assert_eq!(task.ttl_ms, Some(60_000));
        let read = tasks.get(&task.task_id).await.unwrap();
        assert_eq!(status_of(&read), "working");
        tasks.cancel(&task.task_id).await.unwrap();
        assert!(live.cancel.is_cancelled());
        // The run ends after the cancel: the task stays cancelled.
        tasks.finish(&task.task_id, JsonObject::new()).await;
        tasks.cancel(&task.task_id).await.unwrap();
        let read = serde_json::to_value(tasks.get(&task.task_id).await.unwrap()).unwrap();
        assert_eq!(read["status"], "cancelled");
        assert!(read.get("result").is_none(), "{read}");
    }

    #[tokio::test]
    async fn a_completed_task_inlines_its_result() {
        let tasks = tasks(Duration::from_secs(60));
        let (task, _live) = tasks.create("quick").await.unwrap();
        let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
        tasks
            .finish(&task.task_id, result.as_object().unwrap().clone())
            .await;
        let read = serde_json::to_value(tasks.get(&task.task_id).await.unwrap()).unwrap();
        assert_eq!(read["status"], "completed");
        assert_eq!(read["result"], result);
        assert_eq!(read["resultType"], "complete");
    }

    #[tokio::test]
    async fn unknown_and_expired_ids_are_invalid_params_naming_the_id() {
        let tasks = tasks(Duration::ZERO);
        let (task, _live) = tasks.create("gone").await.unwrap();
        for id in ["task-unknown", task.task_id.as_str()] {
            let expected = format!("unknown task: {id} (never created here, or expired)");
            let got = tasks.get(id).await.unwrap_err();
            assert_eq!(
                (got.code.0, got.message.as_ref()),
                (-32602, expected.as_str())
            );
            let got = tasks.cancel(id).await.unwrap_err();
            assert_eq!(got.message, expected);
            let got = tasks.update(id, BTreeMap::new()).await.unwrap_err();
            assert_eq!(got.message, expected);
        }
    }

    #[tokio::test]
    async fn a_task_no_process_here_runs_reads_as_failed() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
        let before = Tasks::new(Arc::clone(&store), Duration::from_secs(60));
        let (task, _live) = before.create("interrupted").await.unwrap();
        // Another server on the same store (the first one stopped).
        let after = Tasks::new(store, Duration::from_secs(60));
        let read = serde_json::to_value(after.get(&task.task_id).await.unwrap()).unwrap();
        assert_eq!(read["status"], "failed");
        assert_eq!(read["error"]["code"], -32603);
        assert!(read.get("result").is_none(), "{read}");
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_684_101_123);
        assert_eq!(iso8601(t), "2026-12-07T22:55:01.123Z");
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }
}
