//! One behaviour suite, the same test functions, run against every store: memory, file,
//! PostgreSQL and Redis (the servers of scripts/services; see `common::server_url`).

mod common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use dsh_tools_store::{
    Approval, ArgsDigest, DurableStore, Intent, StoreError, TaskRecord, TaskStatus,
};
use serde_json::json;

use common::TestStore;

async fn journal_entries_append_once_and_read_in_order(t: TestStore) {
    let store = &*t.store;
    let run = format!("{}-run", t.prefix);
    let info = store
        .begin_run(&run, &json!({"program": "p"}))
        .await
        .unwrap();
    assert_eq!(info.finished, None);
    for index in [3, 1, 2] {
        assert!(
            store
                .append_entry(&run, index, &json!({"n": index}))
                .await
                .unwrap()
        );
    }
    assert!(
        !store
            .append_entry(&run, 2, &json!({"n": "again"}))
            .await
            .unwrap()
    );
    let entries = store.entries(&run).await.unwrap();
    let read: Vec<_> = entries.iter().map(|e| (e.index, e.entry.clone())).collect();
    assert_eq!(
        read,
        [
            (1, json!({"n": 1})),
            (2, json!({"n": 2})),
            (3, json!({"n": 3}))
        ]
    );
    let stored = store.run(&run).await.unwrap().unwrap();
    assert_eq!(
        (stored.id.as_str(), &stored.meta),
        (run.as_str(), &json!({"program": "p"}))
    );
    assert_eq!(stored.created_at, info.created_at);

    let again = store.begin_run(&run, &json!(null)).await.unwrap_err();
    assert_eq!(again, StoreError::RunExists { run: run.clone() });
    let ghost = format!("{}-ghost", t.prefix);
    let error = store.append_entry(&ghost, 1, &json!(1)).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("run {ghost} is not in the store")
    );
    assert_eq!(error.code(), "STORE_RUN_NOT_FOUND");
    assert_eq!(
        store.entries(&ghost).await.unwrap_err().code(),
        "STORE_RUN_NOT_FOUND"
    );
    assert_eq!(store.run(&ghost).await.unwrap(), None);
}

async fn finished_runs_take_nothing_and_leave_the_unfinished_list(t: TestStore) {
    let store = &*t.store;
    let (a, b) = (format!("{}-a", t.prefix), format!("{}-b", t.prefix));
    store.begin_run(&a, &json!(1)).await.unwrap();
    store.begin_run(&b, &json!(2)).await.unwrap();
    let open: Vec<String> = store
        .unfinished_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert!(open.contains(&a) && open.contains(&b), "{open:?}");

    assert!(
        store
            .finish_run(&a, &json!({"result": "done"}))
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_run(&a, &json!({"result": "other"}))
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .run(&a)
            .await
            .unwrap()
            .unwrap()
            .finished
            .map(|f| f.outcome),
        Some(json!({"result": "done"}))
    );
    let open: Vec<String> = store
        .unfinished_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert!(!open.contains(&a) && open.contains(&b), "{open:?}");

    let late = store.append_entry(&a, 1, &json!(1)).await.unwrap_err();
    assert_eq!(
        late.to_string(),
        format!("run {a} is finished: it takes no more entries or intents")
    );
    let intent = intent(&format!("{a}:code:1"));
    assert_eq!(
        store.record_intent(&a, &intent).await.unwrap_err().code(),
        "STORE_RUN_FINISHED"
    );
    let missing = format!("{}-missing", t.prefix);
    assert_eq!(
        store
            .finish_run(&missing, &json!(0))
            .await
            .unwrap_err()
            .code(),
        "STORE_RUN_NOT_FOUND"
    );
}

async fn checkpoints_keep_the_latest_step(t: TestStore) {
    let store = &*t.store;
    let run = format!("{}-run", t.prefix);
    store.begin_run(&run, &json!(null)).await.unwrap();
    assert_eq!(store.checkpoint(&run).await.unwrap(), None);
    assert!(
        store
            .save_checkpoint(&run, 2, &json!({"heap": "two"}))
            .await
            .unwrap()
    );
    assert!(
        store
            .save_checkpoint(&run, 5, &json!({"heap": "five"}))
            .await
            .unwrap()
    );
    assert!(
        !store
            .save_checkpoint(&run, 4, &json!({"heap": "four"}))
            .await
            .unwrap()
    );
    assert!(
        !store
            .save_checkpoint(&run, 5, &json!({"heap": "again"}))
            .await
            .unwrap()
    );
    let latest = store.checkpoint(&run).await.unwrap().unwrap();
    assert_eq!((latest.step, latest.state), (5, json!({"heap": "five"})));

    store.finish_run(&run, &json!(null)).await.unwrap();
    let late = store
        .save_checkpoint(&run, 6, &json!(null))
        .await
        .unwrap_err();
    assert_eq!(late.code(), "STORE_RUN_FINISHED");
    let ghost = format!("{}-ghost", t.prefix);
    assert_eq!(
        store.checkpoint(&ghost).await.unwrap_err().code(),
        "STORE_RUN_NOT_FOUND"
    );
}

fn intent(call: &str) -> Intent {
    Intent {
        call: call.into(),
        tool: "pay".into(),
        args_digest: ArgsDigest::of(&json!({"amount": 12})),
        idempotency_key: format!("key-{call}"),
    }
}

async fn intents_without_a_result_are_outcome_unknown(t: TestStore) {
    let store = &*t.store;
    let run = format!("{}-run", t.prefix);
    store.begin_run(&run, &json!(null)).await.unwrap();
    let (one, two) = (
        intent(&format!("{run}:code:1")),
        intent(&format!("{run}:code:2")),
    );
    assert!(store.record_intent(&run, &one).await.unwrap());
    assert!(store.record_intent(&run, &two).await.unwrap());
    let mut changed = one.clone();
    changed.tool = "other".into();
    assert!(
        !store.record_intent(&run, &changed).await.unwrap(),
        "the first intent stays"
    );

    assert!(
        store
            .complete_intent(&run, &one.call, &json!("paid"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .complete_intent(&run, &one.call, &json!("twice"))
            .await
            .unwrap()
    );
    let intents = store.intents(&run).await.unwrap();
    assert_eq!(intents.len(), 2);
    let first = intents.iter().find(|r| r.intent.call == one.call).unwrap();
    let result = first.completed.as_ref().map(|c| &c.result);
    assert_eq!((&first.intent, result), (&one, Some(&json!("paid"))));
    let unknown = store.unresolved_intents(&run).await.unwrap();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].intent, two);
    // `null` is a result like any other: the intent is completed.
    assert!(
        store
            .complete_intent(&run, &two.call, &json!(null))
            .await
            .unwrap()
    );
    assert!(store.unresolved_intents(&run).await.unwrap().is_empty());

    let error = store
        .complete_intent(&run, "nope", &json!(1))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no intent of call nope in run {run}")
    );
}

async fn a_spend_succeeds_once_among_concurrent_ones(t: TestStore) {
    let id = format!("{}-continuation", t.prefix);
    let spends: Vec<_> = (0..16)
        .map(|_| {
            let store = Arc::clone(&t.store);
            let id = id.clone();
            tokio::spawn(async move { store.spend(&id).await.unwrap() })
        })
        .collect();
    let mut wins = 0;
    for spend in spends {
        wins += usize::from(spend.await.unwrap());
    }
    assert_eq!(wins, 1);
    assert!(!t.store.spend(&id).await.unwrap());
    assert!(t.store.spend(&format!("{id}-other")).await.unwrap());
}

fn approval(args: &serde_json::Value, expires_at: SystemTime) -> Approval {
    Approval {
        args_digest: ArgsDigest::of(args),
        approver: "alice@example.com".into(),
        approved: true,
        reason: Some("looks right".into()),
        decided_at: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000),
        expires_at,
    }
}

async fn approvals_apply_to_their_arguments_until_they_expire(t: TestStore) {
    let store = &*t.store;
    let key = format!("{}-run:code:1", t.prefix);
    let args = json!({"to": "ops@example.com", "amount": 12});
    let digest = ArgsDigest::of(&args);
    assert_eq!(store.approval(&key, &digest).await.unwrap(), None);

    let hour = SystemTime::now() + Duration::from_secs(3600);
    let given = approval(&args, hour);
    store.record_approval(&key, &given).await.unwrap();
    let found = store.approval(&key, &digest).await.unwrap().unwrap();
    // Times are kept to the millisecond.
    assert_eq!(
        (found.approver.as_str(), found.approved, &found.args_digest),
        ("alice@example.com", true, &digest)
    );
    assert_eq!(found.decided_at, given.decided_at);

    let other = ArgsDigest::of(&json!({"to": "ops@example.com", "amount": 13}));
    let changed = store.approval(&key, &other).await.unwrap_err();
    assert_eq!(changed.code(), "APPROVAL_ARGS_CHANGED");
    assert_eq!(
        changed.to_string(),
        format!(
            "the approval of {key} was given for other arguments (approved {digest}, now {other}): ask again"
        )
    );

    let expired_at =
        SystemTime::UNIX_EPOCH + Duration::from_millis(unix_ms(SystemTime::now()) - 1000);
    store
        .record_approval(&key, &approval(&args, expired_at))
        .await
        .unwrap();
    let expired = store.approval(&key, &digest).await.unwrap_err();
    assert_eq!(
        expired,
        StoreError::ApprovalExpired {
            key: key.clone(),
            expired_at
        }
    );
    assert!(expired.to_string().ends_with(": ask again"), "{expired}");
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn task(id: &str, expires_at: Option<SystemTime>) -> TaskRecord {
    TaskRecord {
        id: id.into(),
        status: TaskStatus::Working,
        data: json!({"run": "r1"}),
        created_at: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_000),
        expires_at,
    }
}

async fn tasks_move_by_compare_and_set(t: TestStore) {
    let store = &*t.store;
    let id = format!("{}-task", t.prefix);
    let record = task(&id, None);
    assert!(store.create_task(&record).await.unwrap());
    assert!(!store.create_task(&record).await.unwrap());
    assert_eq!(store.task(&id).await.unwrap(), Some(record.clone()));

    assert!(
        store
            .update_task(&id, TaskStatus::Working, TaskStatus::InputRequired, None)
            .await
            .unwrap()
    );
    assert!(
        !store
            .update_task(&id, TaskStatus::Working, TaskStatus::Failed, None)
            .await
            .unwrap()
    );
    // Of concurrent moves from one status, one wins.
    let moves: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&t.store);
            let id = id.clone();
            tokio::spawn(async move {
                let data = json!({"winner": i});
                store
                    .update_task(
                        &id,
                        TaskStatus::InputRequired,
                        TaskStatus::Completed,
                        Some(&data),
                    )
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut wins = 0;
    for step in moves {
        wins += usize::from(step.await.unwrap());
    }
    assert_eq!(wins, 1);
    let done = store.task(&id).await.unwrap().unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert!(done.data.get("winner").is_some(), "{}", done.data);

    let ghost = format!("{}-ghost", t.prefix);
    let error = store
        .update_task(&ghost, TaskStatus::Working, TaskStatus::Failed, None)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("task {ghost} is not in the store (or it expired)")
    );
    let past = task(&ghost, Some(SystemTime::now() - Duration::from_secs(1)));
    assert_eq!(
        store.create_task(&past).await.unwrap_err().code(),
        "STORE_INVALID_INPUT"
    );
}

async fn tasks_expire(t: TestStore) {
    let store = &*t.store;
    let id = format!("{}-brief", t.prefix);
    let expires = SystemTime::now() + Duration::from_millis(300);
    assert!(store.create_task(&task(&id, Some(expires))).await.unwrap());
    assert!(store.task(&id).await.unwrap().is_some());
    // Expiry is about time passing: wait it out.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.task(&id).await.unwrap(), None);
    assert_eq!(
        store
            .update_task(&id, TaskStatus::Working, TaskStatus::Failed, None)
            .await
            .unwrap_err()
            .code(),
        "STORE_TASK_NOT_FOUND"
    );
    // An expired id can be used again.
    assert!(store.create_task(&task(&id, None)).await.unwrap());
}

async fn ids_the_stores_cannot_hold_are_refused(t: TestStore) {
    let store = &*t.store;
    let empty = store.spend("").await.unwrap_err();
    assert_eq!(empty.to_string(), "invalid continuation id: it is empty");
    let nul = store.begin_run("a\0b", &json!(null)).await.unwrap_err();
    assert_eq!(
        nul.to_string(),
        "invalid run id: it contains a NUL character"
    );
    let long = "x".repeat(dsh_tools_store::MAX_ID_BYTES + 1);
    assert_eq!(
        store.task(&long).await.unwrap_err().code(),
        "STORE_INVALID_INPUT"
    );
    // Ids are opaque: separators, newlines and non-ASCII are kept apart.
    for id in [
        format!("{}/a:b", t.prefix),
        format!("{}\nline", t.prefix),
        format!("{}-ünï", t.prefix),
    ] {
        assert!(store.spend(&id).await.unwrap(), "{id:?}");
    }
    assert!(!store.spend(&format!("{}\nline", t.prefix)).await.unwrap());
}

/// Each behaviour, as one test per store.
macro_rules! suite {
    ($($behaviour:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() { super::$behaviour(crate::common::memory()).await })*
        }
        mod file {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() { super::$behaviour(crate::common::file()).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                if let Some(store) = crate::common::postgres().await { super::$behaviour(store).await }
            })*
        }
        mod redis {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $behaviour() {
                if let Some(store) = crate::common::redis() { super::$behaviour(store).await }
            })*
        }
    };
}

suite!(
    journal_entries_append_once_and_read_in_order,
    finished_runs_take_nothing_and_leave_the_unfinished_list,
    intents_without_a_result_are_outcome_unknown,
    checkpoints_keep_the_latest_step,
    a_spend_succeeds_once_among_concurrent_ones,
    approvals_apply_to_their_arguments_until_they_expire,
    tasks_move_by_compare_and_set,
    tasks_expire,
    ids_the_stores_cannot_hold_are_refused,
);

#[test]
fn the_store_trait_is_object_safe_and_shareable() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<Arc<dyn DurableStore>>();
}
