//! Stored rows are untrusted: a journal entry, task record, approval or spent id altered (or moved to
//! another run) in the file, in PostgreSQL with SQL, or in Redis with its commands is refused
//! with an error naming what and where.

mod common;

use std::time::SystemTime;

use dsh_tools_store::{Approval, ArgsDigest, DurableStore, StoreError, TaskRecord, TaskStatus};
use serde_json::json;

use common::TestStore;

/// The arguments alice approved.
fn approved_args() -> serde_json::Value {
    json!({"amount": 12})
}

/// Two runs, `a` with entries 1 and 2, `b` with none, a working task, and alice's approval of
/// `<a>:code:1`.
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
    let approval = Approval {
        args_digest: ArgsDigest::of(&approved_args()),
        approver: "alice@example.com".into(),
        approved: true,
        reason: None,
        decided_at: SystemTime::now(),
        expires_at: SystemTime::now() + std::time::Duration::from_secs(3600),
    };
    store
        .record_approval(&format!("{a}:code:1"), &approval)
        .await
        .unwrap();
    (a, b, task)
}

fn refused(error: StoreError, expected: &str) {
    assert_eq!(error.code(), "STORE_RECORD_TAMPERED");
    assert_eq!(error.to_string(), expected);
}

/// After the rows were altered: entry 1 of `a` changed, entry 2 of `a` moved to `b`, the
/// task's status changed, the approver of the approval changed.
async fn assert_refused(store: &dyn DurableStore, a: &str, b: &str, task: &str) {
    let key = format!("{a}:code:1");
    refused(
        store
            .approval(&key, &ArgsDigest::of(&approved_args()))
            .await
            .unwrap_err(),
        &format!("approval at key {key} refused: it was altered or moved (authentication failed)"),
    );
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
    let approval_file = root.join("approval").join(h(&format!("{a}:code:1")));
    let text = std::fs::read_to_string(&approval_file).unwrap();
    std::fs::write(&approval_file, text.replace("alice", "mallory")).unwrap();
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
    let approvals = sql
        .execute(
            "UPDATE dsh_store_approvals SET value = replace(value, 'alice', 'mallory') WHERE id = $1",
            &[&format!("{a}:code:1")],
        )
        .await
        .unwrap();
    assert_eq!(approvals, 1);
    assert_refused(&*t.store, &a, &b, &task).await;
}

/// Replaces `from` by `to` in the string at `key` (its TTL kept).
async fn redis_edit(
    redis: &mut redis::aio::MultiplexedConnection,
    key: &str,
    from: &str,
    to: &str,
) {
    let value: String = redis::cmd("GET").arg(key).query_async(redis).await.unwrap();
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(value.replace(from, to))
        .arg("KEEPTTL")
        .query_async(redis)
        .await
        .unwrap();
}

#[tokio::test]
async fn redis_rows_altered_with_commands_are_refused() {
    let Some(t) = common::redis() else { return };
    let (a, b, task) = seed(&t).await;
    let mut redis =
        common::redis_connection(&common::server_url("DSH_TEST_REDIS_URL").unwrap()).await;
    let p = &t.prefix;
    let (entries_a, entries_b) = (format!("{p}:entry:{a}"), format!("{p}:entry:{b}"));
    let (one, two): (String, String) = redis::cmd("HMGET")
        .arg(&entries_a)
        .arg("1")
        .arg("2")
        .query_async(&mut redis)
        .await
        .unwrap();
    let _: () = redis::pipe()
        .atomic()
        .cmd("HSET")
        .arg(&entries_a)
        .arg("1")
        .arg(one.replace("paid 12", "paid 99"))
        .cmd("HDEL")
        .arg(&entries_a)
        .arg("2")
        .cmd("HSET")
        .arg(&entries_b)
        .arg("2")
        .arg(two)
        .query_async(&mut redis)
        .await
        .unwrap();
    redis_edit(
        &mut redis,
        &format!("{p}:task:{task}"),
        "\"working\"",
        "\"completed\"",
    )
    .await;
    redis_edit(
        &mut redis,
        &format!("{p}:approval:{a}:code:1"),
        "alice",
        "mallory",
    )
    .await;
    assert_refused(&*t.store, &a, &b, &task).await;
}
