//! Stored rows are untrusted: a journal entry, task record or spent id altered (or moved to
//! another run) in the file, in PostgreSQL with SQL, or in Redis with its commands is refused
//! with an error naming what and where.

mod common;

use std::time::SystemTime;

use dsh_tools_store::{DurableStore, StoreError, TaskRecord, TaskStatus};
use serde_json::json;

use common::TestStore;

/// Two runs, `a` with entries 1 and 2, `b` with none, and a working task.
async fn seed(t: &TestStore) -> (String, String, String) {
    let store = &*t.store;
    let (a, b, task) = (
        format!("{}-a", t.prefix),
        format!("{}-b", t.prefix),
        format!("{}-task", t.prefix),
    );
    store.begin_run(&a, &json!(null)).await.unwrap();
    store.begin_run(&b, &json!(null)).await.unwrap();
    store
        .append_entry(&a, 1, &json!({"ok": "paid 12"}))
        .await
        .unwrap();
    store
        .append_entry(&a, 2, &json!({"ok": "mailed"}))
        .await
        .unwrap();
    let record = TaskRecord {
        id: task.clone(),
        status: TaskStatus::Working,
        data: json!({"run": a}),
        created_at: SystemTime::now(),
        expires_at: None,
    };
    store.create_task(&record).await.unwrap();
    (a, b, task)
}

fn refused(error: StoreError, expected: &str) {
    assert_eq!(error.code(), "STORE_RECORD_TAMPERED");
    assert_eq!(error.to_string(), expected);
}

/// After the rows were altered: entry 1 of `a` changed, entry 2 of `a` moved to `b`, the
/// task's status changed.
async fn assert_refused(store: &dyn DurableStore, a: &str, b: &str, task: &str) {
    refused(
        store.entries(a).await.unwrap_err(),
        &format!(
            "journal entry at run {a}, entry 1 refused: it was altered or moved (authentication failed)"
        ),
    );
    refused(
        store.entries(b).await.unwrap_err(),
        &format!(
            "journal entry at run {b}, entry 2 refused: it was altered or moved (authentication failed)"
        ),
    );
    refused(
        store.task(task).await.unwrap_err(),
        &format!("task at task {task} refused: it was altered or moved (authentication failed)"),
    );
    refused(
        store
            .update_task(task, TaskStatus::Completed, TaskStatus::Failed, None)
            .await
            .unwrap_err(),
        &format!("task at task {task} refused: it was altered or moved (authentication failed)"),
    );
}

#[tokio::test]
async fn file_rows_altered_on_disk_are_refused() {
    let t = common::file();
    let (a, b, task) = seed(&t).await;
    let root = t.dir.as_ref().unwrap().path().to_owned();
    let h = |s: &str| sha256_hex(s);
    let entry = |run: &str, n: &str| root.join("entry").join(h(run)).join(h(n));
    let text = std::fs::read_to_string(entry(&a, "1")).unwrap();
    std::fs::write(entry(&a, "1"), text.replace("paid 12", "paid 99")).unwrap();
    std::fs::create_dir_all(entry(&b, "2").parent().unwrap()).unwrap();
    std::fs::rename(entry(&a, "2"), entry(&b, "2")).unwrap();
    let task_file = root.join("task").join(h(&task));
    let text = std::fs::read_to_string(&task_file).unwrap();
    std::fs::write(&task_file, text.replace("\"working\"", "\"completed\"")).unwrap();
    assert_refused(&*t.store, &a, &b, &task).await;

    // A spent id forged without the key does not pass for a spent continuation unnoticed.
    let forged = format!("{}-forged", t.prefix);
    std::fs::create_dir_all(root.join("spent")).unwrap();
    std::fs::write(
        root.join("spent").join(h(&forged)),
        format!("-\n\"{forged}\"\nAAAA.null"),
    )
    .unwrap();
    refused(
        t.store.spend(&forged).await.unwrap_err(),
        &format!(
            "spent id at continuation {forged} refused: it was altered or moved (authentication failed)"
        ),
    );
}

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    common::hex(&Sha256::digest(text.as_bytes()))
}

#[tokio::test]
async fn postgres_rows_altered_with_sql_are_refused() {
    let Some(url) = common::postgres_schema().await else {
        return;
    };
    let t = common::postgres_at(&url, dsh_tools_store::StoreKey::generate());
    let (a, b, task) = seed(&t).await;
    let sql = common::postgres_client(&url).await;
    let changed = sql
        .execute(
            "UPDATE dsh_store_entries SET value = replace(value, 'paid 12', 'paid 99') WHERE run_id = $1 AND id = '1'",
            &[&a],
        )
        .await
        .unwrap();
    assert_eq!(changed, 1);
    sql.execute(
        "UPDATE dsh_store_entries SET run_id = $2 WHERE run_id = $1 AND id = '2'",
        &[&a, &b],
    )
    .await
    .unwrap();
    sql.execute("UPDATE dsh_store_tasks SET value = replace(value, '\"working\"', '\"completed\"') WHERE id = $1", &[&task])
        .await
        .unwrap();
    assert_refused(&*t.store, &a, &b, &task).await;
}

#[tokio::test]
async fn redis_rows_altered_with_commands_are_refused() {
    let Some(t) = common::redis() else { return };
    let (a, b, task) = seed(&t).await;
    let mut redis =
        common::redis_connection(&common::server_url("DSH_TEST_REDIS_URL").unwrap()).await;
    let p = &t.prefix;
    let one: String = redis::cmd("HGET")
        .arg(format!("{p}:entry:{a}"))
        .arg("1")
        .query_async(&mut redis)
        .await
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(format!("{p}:entry:{a}"))
        .arg("1")
        .arg(one.replace("paid 12", "paid 99"))
        .query_async(&mut redis)
        .await
        .unwrap();
    let two: String = redis::cmd("HGET")
        .arg(format!("{p}:entry:{a}"))
        .arg("2")
        .query_async(&mut redis)
        .await
        .unwrap();
    let _: () = redis::cmd("HDEL")
        .arg(format!("{p}:entry:{a}"))
        .arg("2")
        .query_async(&mut redis)
        .await
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(format!("{p}:entry:{b}"))
        .arg("2")
        .arg(two)
        .query_async(&mut redis)
        .await
        .unwrap();
    let record: String = redis::cmd("GET")
        .arg(format!("{p}:task:{task}"))
        .query_async(&mut redis)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg(format!("{p}:task:{task}"))
        .arg(record.replace("\"working\"", "\"completed\""))
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_refused(&*t.store, &a, &b, &task).await;
}
