//! Runs journaled as they go in a `DurableStore` (memory, file, PostgreSQL, Redis): a run whose
//! process stopped mid-call is resumed by id from the store, journaled calls are not run again,
//! the call in flight is `OUTCOME_UNKNOWN` (or retried with the same idempotency key).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::durable::{
    ContinuationKey, Decision, Durability, MemorySpentStore, OutcomeUnknownPolicy, Resume,
    RunOutcome, resume_run,
};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use dsh_tools_store::{
    ArgsDigest, DurableStore, FileStore, MemoryStore, PostgresStore, RedisStore, StoreKey,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Every tool body run: (tool, idempotency key).
type Calls = Arc<Mutex<Vec<(String, String)>>>;

const PROGRAM: &str = r#"
const a = await tools.read({n: 1});
const b = await tools.pay({amount: 12});
let c;
try { c = await tools.ship({to: "ops"}); } catch (e) { c = String(e.message); }
return [a, b, c, Date.now() > 0];
"#;

/// A host (one process): `read` (read-only), `pay` and `ship` (side effects); `ship` never
/// returns when `ship_hangs` (it tells `started` first): the process stops while it is in
/// flight.
fn host(calls: &Calls, ship_hangs: bool, started: Arc<Notify>) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
    CodeMode::new(Arc::new(runtime)).install(&registry).unwrap();
    for name in ["read", "pay", "ship"] {
        let (calls, started) = (Arc::clone(calls), Arc::clone(&started));
        let mut builder = ToolDefinition::builder(name)
            .description("A counted tool.")
            .parameters_json(json!({"type": "object"}));
        if name == "read" {
            builder = builder.annotations(ToolAnnotations {
                read_only_hint: Some(true),
                ..ToolAnnotations::default()
            });
        }
        let tool = builder
            .execute(move |args, ctx| {
                let (calls, started) = (Arc::clone(&calls), Arc::clone(&started));
                let key = ctx.idempotency_key().to_owned();
                async move {
                    calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((name.to_owned(), key));
                    if name == "ship" && ship_hangs {
                        started.notify_one();
                        std::future::pending::<()>().await;
                    }
                    Ok(json!({name: *args}))
                }
            })
            .build()
            .unwrap();
        registry.register(tool).unwrap().keep();
    }
    registry
}

fn count(calls: &Calls, tool: &str) -> usize {
    calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(name, _)| name == tool)
        .count()
}

fn run_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("run-{}-{nanos}", std::process::id())
}

/// Runs [`PROGRAM`] until `ship` is in flight, then stops it (the future is dropped with the
/// host: what a killed process leaves is what the store holds).
async fn start_and_stop(store: &Arc<dyn DurableStore>, run: &str, calls: &Calls) {
    let started = Arc::new(Notify::new());
    let registry = host(calls, true, Arc::clone(&started));
    let durability = durability(store);
    let input = ToolExecutionInput::new(
        run,
        "run_code",
        json!({"code": PROGRAM, "description": "pay and ship"}),
    );
    tokio::select! {
        outcome = registry.run_code_suspendable(input, &durability) => {
            panic!("the run ended while ship hangs: {outcome:?}")
        }
        () = started.notified() => {}
    }
}

fn durability(store: &Arc<dyn DurableStore>) -> Durability {
    Durability::new(
        ContinuationKey::generate(),
        Arc::new(MemorySpentStore::default()),
    )
    .with_store(Arc::clone(store))
}

async fn resume(
    store: &Arc<dyn DurableStore>,
    run: &str,
    calls: &Calls,
    policy: OutcomeUnknownPolicy,
) -> Value {
    let registry = host(calls, false, Arc::new(Notify::new()));
    let resume = Resume::new(Decision::APPROVE).on_outcome_unknown(policy);
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        resume_run(&registry, run, resume, &durability(store)),
    )
    .await
    .expect("the resumed run ended")
    .unwrap();
    let RunOutcome::Completed(result) = outcome else {
        panic!("the resumed run suspended")
    };
    result
        .value()
        .cloned()
        .unwrap_or_else(|| panic!("{result:?}"))
}

/// The whole story against one store.
async fn crash_and_recover(store: Arc<dyn DurableStore>) {
    // Fail (the default): the call in flight is reported, not run again.
    let (run, calls) = (run_id(), Calls::default());
    start_and_stop(&store, &run, &calls).await;
    // Journaled as it went: read and pay, and ship's intent without a result.
    let entries = store.entries(&run).await.unwrap();
    assert_eq!(entries.iter().map(|e| e.index).collect::<Vec<_>>(), [1, 2]);
    let unresolved = store.unresolved_intents(&run).await.unwrap();
    assert_eq!(unresolved.len(), 1);
    assert_eq!(unresolved[0].intent.call, format!("{run}:code:3"));
    assert_eq!(
        unresolved[0].intent.idempotency_key,
        format!("{run}:code:3")
    );
    // read is read-only: no intent; pay's is completed.
    assert_eq!(store.intents(&run).await.unwrap().len(), 2);
    assert_eq!(
        store
            .unfinished_runs()
            .await
            .unwrap()
            .iter()
            .filter(|r| r.id == run)
            .count(),
        1
    );

    let value = resume(&store, &run, &calls, OutcomeUnknownPolicy::default()).await;
    let message = format!(
        "OUTCOME_UNKNOWN: the outcome of tools.ship ({run}:code:3) is unknown: it was in flight when the run's process stopped; it may or may not have taken effect and was not run again"
    );
    assert_eq!(
        value["result"],
        json!([{"read": {"n": 1}}, {"pay": {"amount": 12}}, message, true])
    );
    assert_eq!(
        (
            count(&calls, "read"),
            count(&calls, "pay"),
            count(&calls, "ship")
        ),
        (1, 1, 1)
    );
    assert!(store.run(&run).await.unwrap().unwrap().finished.is_some());
    let again = resume_run(
        &host(&calls, false, Arc::new(Notify::new())),
        &run,
        Resume::new(Decision::APPROVE),
        &durability(&store),
    )
    .await;
    assert_eq!(again.unwrap_err().code(), "RUN_FINISHED");

    // Retry: the call runs again, with the same idempotency key.
    let (run, calls) = (run_id(), Calls::default());
    start_and_stop(&store, &run, &calls).await;
    let value = resume(&store, &run, &calls, OutcomeUnknownPolicy::Retry).await;
    assert_eq!(value["result"][2], json!({"ship": {"to": "ops"}}));
    let ships: Vec<String> = calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(name, _)| name == "ship")
        .map(|(_, key)| key.clone())
        .collect();
    assert_eq!(ships, [format!("{run}:code:3"), format!("{run}:code:3")]);
    assert_eq!(count(&calls, "pay"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_resumes_by_id_from_a_memory_store() {
    crash_and_recover(Arc::new(MemoryStore::new(StoreKey::generate()))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_resumes_by_id_from_a_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::open(dir.path(), StoreKey::generate()).unwrap();
    crash_and_recover(Arc::new(store)).await;
}

/// The server's URL from `var`; a test without one fails under CI.
fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set: scripts/test starts the servers (scripts/services)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (eval \"$(scripts/services start)\" sets it)");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_resumes_by_id_from_postgres() {
    let Some(url) = server_url("DSH_TEST_POSTGRES_URL") else {
        return;
    };
    let store = PostgresStore::new(&url, StoreKey::generate()).unwrap();
    crash_and_recover(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_resumes_by_id_from_redis() {
    let Some(url) = server_url("DSH_TEST_REDIS_URL") else {
        return;
    };
    let store = RedisStore::with_prefix(&url, StoreKey::generate(), &format!("{}:", run_id()));
    crash_and_recover(Arc::new(store.unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_id_the_store_has_is_refused_and_an_unknown_one_is_not_resumed() {
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    let calls = Calls::default();
    let registry = host(&calls, false, Arc::new(Notify::new()));
    let input = || {
        ToolExecutionInput::new(
            "run-x",
            "run_code",
            json!({"code": "return await tools.pay({})", "description": "pay"}),
        )
    };
    let first = registry
        .run_code_suspendable(input(), &durability(&store))
        .await;
    assert!(
        matches!(first, RunOutcome::Completed(ref r) if !r.is_error()),
        "{first:?}"
    );
    let RunOutcome::Completed(second) = registry
        .run_code_suspendable(input(), &durability(&store))
        .await
    else {
        panic!("no suspension")
    };
    let error = second.error().unwrap();
    assert_eq!(error.info().map(|info| &*info.code), Some("STORE_REFUSED"));
    assert!(
        error
            .message()
            .starts_with("the durable store refused run \"run-x\": "),
        "{}",
        error.message()
    );
    assert_eq!(count(&calls, "pay"), 1);
    let durability = durability(&store);
    let unknown = resume_run(
        &registry,
        "run-y",
        Resume::new(Decision::APPROVE),
        &durability,
    );
    let error = unknown.await.unwrap_err();
    assert_eq!(
        (error.code(), error.to_string().as_str()),
        ("RUN_NOT_FOUND", "the durable store has no run \"run-y\"")
    );
}

/// A host whose `write` asks for a person; with `stall`, its policy never answers (it tells
/// `started` first): the process stops after the resumption recorded its decision, before
/// the call ran.
fn asking_host(calls: &Calls, stall: Option<Arc<Notify>>) -> ToolRegistry {
    let registry = host(calls, false, Arc::new(Notify::new()));
    let write = ToolDefinition::builder("write")
        .description("Writes.")
        .parameters_json(json!({"type": "object"}))
        .execute({
            let calls = Arc::clone(calls);
            move |_, ctx| {
                let calls = Arc::clone(&calls);
                async move {
                    calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(("write".into(), ctx.idempotency_key().to_owned()));
                    Ok(json!("written"))
                }
            }
        })
        .build()
        .unwrap();
    registry.register(write).unwrap().keep();
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            let stall = stall.clone();
            async move {
                if &*exec.name != "write" {
                    return next.run().await;
                }
                if let Some(started) = stall {
                    started.notify_one();
                    std::future::pending::<()>().await;
                }
                PreToolDecision::Ask {
                    reason: Some("writes need a person".into()),
                }
            }
        }))
        .keep();
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_is_recorded_with_its_arguments_digest_and_reused_after_a_crash() {
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    let (run, calls) = (run_id(), Calls::default());
    let program = r#"return await tools.write({path: "a", text: "hi"});"#;
    let input = ToolExecutionInput::new(
        &*run,
        "run_code",
        json!({"code": program, "description": "write"}),
    );
    // Host A suspends at the ask.
    let key = ContinuationKey::generate();
    let durability =
        Durability::new(key, Arc::new(MemorySpentStore::default())).with_store(Arc::clone(&store));
    let a = asking_host(&calls, None);
    let RunOutcome::Suspended { continuation, .. } =
        a.run_code_suspendable(input, &durability).await
    else {
        panic!("write asks")
    };
    // Host B resumes it, approved by alice, and stops before the call runs.
    let started = Arc::new(Notify::new());
    let b = asking_host(&calls, Some(Arc::clone(&started)));
    let resume = Resume::new(Decision::APPROVE).approved_by("alice", Duration::from_secs(600));
    tokio::select! {
        outcome = b.resume_code(&continuation, resume, &durability) => {
            panic!("the resumption ended while its policy stalls: {outcome:?}")
        }
        () = started.notified() => {}
    }
    let call = format!("{run}:code:1");
    let approval = store
        .approval(&call, &ArgsDigest::of(&json!({"text": "hi", "path": "a"})))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (approval.approver.as_str(), approval.approved),
        ("alice", true)
    );
    let other = ArgsDigest::of(&json!({"path": "b", "text": "hi"}));
    let changed = store.approval(&call, &other).await.unwrap_err();
    assert_eq!(changed.code(), "APPROVAL_ARGS_CHANGED");
    // Host C resumes the run by id: the same call, the same arguments: not asked again (a
    // host without a suspension or an approval service would refuse an ask).
    let c = asking_host(&calls, None);
    let outcome = resume_run(&c, &run, Resume::new(Decision::Deny), &durability)
        .await
        .unwrap();
    let RunOutcome::Completed(result) = outcome else {
        panic!("the run suspended again")
    };
    assert_eq!(result.value().unwrap()["result"], json!("written"));
    assert_eq!(count(&calls, "write"), 1);
}
