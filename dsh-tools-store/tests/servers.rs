//! The database servers stopped and started under the store (scripts/services): written data
//! survives a restart, and a stopped server gives `STORE_UNAVAILABLE` and writes nothing.

mod common;

use std::time::SystemTime;

use dsh_tools_store::{DurableStore, StoreKey, TaskRecord, TaskStatus};
use serde_json::json;

use common::TestStore;

/// Starts the server again when the test ends, passed or failed, so that later tests have it.
struct Stopped(&'static str);

impl Stopped {
    fn stop(server: &'static str) -> Self {
        common::services(&format!("stop-{server}"));
        Self(server)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        common::services(&format!("start-{}", self.0));
    }
}

async fn write(t: &TestStore) -> (String, String, String) {
    let store = &*t.store;
    let (run, spent, task) = (
        format!("{}-run", t.prefix),
        format!("{}-c1", t.prefix),
        format!("{}-task", t.prefix),
    );
    store
        .begin_run(&run, &json!({"program": "p"}))
        .await
        .unwrap();
    store
        .append_entry(&run, 1, &json!({"ok": 1}))
        .await
        .unwrap();
    store
        .append_entry(&run, 2, &json!({"ok": 2}))
        .await
        .unwrap();
    assert!(store.spend(&spent).await.unwrap());
    let record = TaskRecord {
        id: task.clone(),
        status: TaskStatus::Working,
        data: json!(null),
        created_at: SystemTime::now(),
        expires_at: None,
    };
    assert!(store.create_task(&record).await.unwrap());
    (run, spent, task)
}

async fn unavailable_while_stopped(store: &dyn DurableStore, t: &TestStore) {
    let name = store.kind();
    for error in [
        store
            .begin_run(&format!("{}-while-down", t.prefix), &json!(null))
            .await
            .unwrap_err(),
        store.spend(&format!("{}-c2", t.prefix)).await.unwrap_err(),
        store
            .entries(&format!("{}-run", t.prefix))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(error.code(), "STORE_UNAVAILABLE", "{error}");
        let prefix = format!("the {name} store is unavailable: ");
        assert!(error.to_string().starts_with(&prefix), "{error}");
    }
}

async fn all_there_after_restart(
    store: &dyn DurableStore,
    t: &TestStore,
    (run, spent, task): &(String, String, String),
) {
    let entries = store.entries(run).await.unwrap();
    assert_eq!(
        entries.iter().map(|e| e.entry.clone()).collect::<Vec<_>>(),
        [json!({"ok": 1}), json!({"ok": 2})]
    );
    assert!(
        !store.spend(spent).await.unwrap(),
        "spent before the restart"
    );
    assert_eq!(
        store.task(task).await.unwrap().unwrap().status,
        TaskStatus::Working
    );
    // Nothing of what failed while the server was down was written.
    assert_eq!(
        store
            .run(&format!("{}-while-down", t.prefix))
            .await
            .unwrap(),
        None
    );
    assert!(store.spend(&format!("{}-c2", t.prefix)).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_data_across_a_restart_and_reports_itself_down() {
    let key = StoreKey::generate();
    let Some(url) = common::postgres_schema().await else {
        return;
    };
    let t = common::postgres_at(&url, key.clone());
    let written = write(&t).await;
    {
        let _stopped = Stopped::stop("postgres");
        unavailable_while_stopped(&*t.store, &t).await;
    }
    // A new process after the restart, and the old store once the server is back.
    let fresh = common::postgres_at(&url, key);
    all_there_after_restart(&*fresh.store, &t, &written).await;
    assert_eq!(t.store.entries(&written.0).await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_keeps_data_across_a_restart_and_reports_itself_down() {
    let key = StoreKey::generate();
    let prefix = common::unique("redis");
    let Some(t) = common::redis_with(key.clone(), &prefix) else {
        return;
    };
    let written = write(&t).await;
    {
        let _stopped = Stopped::stop("redis");
        unavailable_while_stopped(&*t.store, &t).await;
    }
    let fresh = common::redis_with(key, &prefix).unwrap();
    all_there_after_restart(&*fresh.store, &t, &written).await;
    assert_eq!(t.store.entries(&written.0).await.unwrap().len(), 2);
}
