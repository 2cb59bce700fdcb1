//! Runs journaled as they go in a `DurableStore` (memory, file, PostgreSQL, Redis): a run whose
//! process stopped mid-call is resumed by id from the store, journaled calls are not run again,
//! the call in flight is `OUTCOME_UNKNOWN` (or retried with the same idempotency key).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecution, ToolExecutionInput};
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::approval::{
    ApprovalOutcome, ApprovalRequest, ApprovalScope, ApprovalService,
};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::durable::{
    ContinuationKey, Decision, Durability, MemorySpentStore, OutcomeUnknownPolicy, Resume,
    RunOutcome, resume_run,
};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{CodeModeExt, CodeRuntime};
use dsh_tools_runtime::hooks::{ExecuteWrapper, pre_execute_fn};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use dsh_tools_store::{
    ArgsDigest, DurableStore, FileStore, Intent, MemoryStore, PostgresStore, RedisStore, StoreKey,
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
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
    host_on(Arc::new(runtime), calls, ship_hangs, started)
}

/// [`host`] with Code Mode on `runtime`.
fn host_on(
    runtime: Arc<dyn CodeRuntime>,
    calls: &Calls,
    ship_hangs: bool,
    started: Arc<Notify>,
) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(runtime).install(&registry).unwrap();
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

/// The idempotency keys `tool` ran with, in order.
fn keys(calls: &Calls, tool: &str) -> Vec<String> {
    calls
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(name, _)| name == tool)
        .map(|(_, key)| key.clone())
        .collect()
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
    stop_in_ship(&registry, started, store, run, PROGRAM).await;
}

/// Runs `program` on `registry` (whose `ship` hangs after telling `started`) until `ship` is
/// in flight, then stops it.
async fn stop_in_ship(
    registry: &ToolRegistry,
    started: Arc<Notify>,
    store: &Arc<dyn DurableStore>,
    run: &str,
    program: &str,
) {
    let durability = durability(store);
    let input = ToolExecutionInput::new(
        run,
        "run_code",
        json!({"code": program, "description": "pay and ship"}),
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
    resume_on(&registry, store, run, policy).await
}

/// Resumes run `run` on `registry` and returns the program's value.
async fn resume_on(
    registry: &ToolRegistry,
    store: &Arc<dyn DurableStore>,
    run: &str,
    policy: OutcomeUnknownPolicy,
) -> Value {
    let resume = Resume::new(Decision::APPROVE).on_outcome_unknown(policy);
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        resume_run(registry, run, resume, &durability(store)),
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
    // Ask (the default) with no approval service mounted: the call in flight is reported, not
    // run again.
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
    let ships = keys(&calls, "ship");
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

/// An approval service that records what it is asked and answers `outcome`.
struct Person {
    outcome: ApprovalOutcome,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ApprovalService for Person {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        let outcome = self.outcome;
        Box::pin(async move { outcome })
    }
}

/// Mounts a [`Person`] answering `outcome` on a resuming host.
fn ask_person(registry: &ToolRegistry, outcome: ApprovalOutcome) -> Arc<Person> {
    let person = Arc::new(Person {
        outcome,
        asked: Mutex::default(),
    });
    registry.set_approval(Arc::clone(&person) as Arc<dyn ApprovalService>);
    person
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_outcome_is_asked_about_and_runs_again_only_when_allowed() {
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    for (outcome, runs_again) in [
        (ApprovalOutcome::AllowedOnce, true),
        (ApprovalOutcome::Rejected, false),
        (ApprovalOutcome::Cancelled, false),
    ] {
        let (run, calls) = (run_id(), Calls::default());
        start_and_stop(&store, &run, &calls).await;
        let registry = host(&calls, false, Arc::new(Notify::new()));
        let person = ask_person(&registry, outcome);
        let value = resume_on(&registry, &store, &run, OutcomeUnknownPolicy::Ask).await;
        let asked = person.asked.lock().unwrap_or_else(PoisonError::into_inner);
        let [request] = asked.as_slice() else {
            panic!("asked once: {asked:?}")
        };
        let call = format!("{run}:code:3");
        assert_eq!(
            (request.tool_name.as_str(), request.call_id.as_str()),
            ("ship", call.as_str())
        );
        assert_eq!(
            request.reason.as_deref(),
            Some(&*format!(
                "the outcome of tools.ship ({call}) is unknown: it was in flight when run \"{run}\"'s process stopped and may or may not have taken effect; allowing it runs it again with the same idempotency key ({call})"
            ))
        );
        assert_eq!(request.widest_scope, ApprovalScope::Once);
        assert!(request.arguments.is_none());
        let ships = count(&calls, "ship");
        if runs_again {
            assert_eq!(value["result"][2], json!({"ship": {"to": "ops"}}));
            assert_eq!(ships, 2, "{outcome:?}");
        } else {
            let message = value["result"][2].as_str().unwrap();
            assert!(message.starts_with("OUTCOME_UNKNOWN: "), "{message}");
            assert_eq!(ships, 1, "{outcome:?}");
        }
        assert_eq!(count(&calls, "pay"), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_journaled_before_its_intent_completed_is_replayed_and_not_asked_about() {
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    // Run A ends; run B is A's record up to the moment its process died between journaling
    // ship's result and completing ship's intent.
    let (a, calls) = (run_id(), Calls::default());
    let registry = host(&calls, false, Arc::new(Notify::new()));
    let input = ToolExecutionInput::new(
        &*a,
        "run_code",
        json!({"code": PROGRAM, "description": "pay and ship"}),
    );
    let first = registry
        .run_code_suspendable(input, &durability(&store))
        .await;
    assert!(
        matches!(first, RunOutcome::Completed(ref r) if !r.is_error()),
        "{first:?}"
    );
    let b = run_id();
    let meta = store.run(&a).await.unwrap().unwrap().meta;
    store.begin_run(&b, &meta).await.unwrap();
    for entry in store.entries(&a).await.unwrap() {
        assert!(
            store
                .append_entry(&b, entry.index, &entry.entry)
                .await
                .unwrap()
        );
    }
    let call = format!("{b}:code:3");
    let intent = Intent {
        call: call.clone(),
        tool: "ship".into(),
        args_digest: ArgsDigest::of(&json!({"to": "ops"})),
        idempotency_key: call.clone(),
    };
    assert!(store.record_intent(&b, &intent).await.unwrap());

    let resumed = Calls::default();
    let registry = host(&resumed, false, Arc::new(Notify::new()));
    let person = ask_person(&registry, ApprovalOutcome::AllowedOnce);
    let value = resume_on(&registry, &store, &b, OutcomeUnknownPolicy::Ask).await;
    assert_eq!(
        value["result"],
        json!([{"read": {"n": 1}}, {"pay": {"amount": 12}}, {"ship": {"to": "ops"}}, true])
    );
    assert!(
        resumed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    );
    assert!(
        person
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    );
    let intents = store.intents(&b).await.unwrap();
    assert_eq!(intents.len(), 1);
    let completed = intents[0].completed.as_ref().map(|c| &c.result);
    assert_eq!(completed, Some(&json!({"journaled": 3})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_keeps_its_unwrapped_dispatch_once_its_stored_runs_end() {
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    let calls = Calls::default();
    let registry = host(&calls, false, Arc::new(Notify::new()));
    let wrappers = || {
        registry
            .applicable_hooks::<ExecuteWrapper>(&ToolExecution::detached("c", "pay", json!({})))
            .len()
    };
    let before = wrappers();
    // While a stored run is live, its side-effecting calls go through the intent wrapper.
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let gate = ToolDefinition::builder("gate")
        .description("Waits until released.")
        .parameters_json(json!({"type": "object"}))
        .execute({
            let (started, release) = (Arc::clone(&started), Arc::clone(&release));
            move |_, _| {
                let (started, release) = (Arc::clone(&started), Arc::clone(&release));
                async move {
                    started.notify_one();
                    release.notified().await;
                    Ok(json!("released"))
                }
            }
        })
        .build()
        .unwrap();
    registry.register(gate).unwrap().keep();
    let run = run_id();
    let input = ToolExecutionInput::new(
        &*run,
        "run_code",
        json!({"code": "await tools.pay({}); return await tools.gate({})", "description": "gate"}),
    );
    let stored = durability(&store);
    let live = registry.run_code_suspendable(input, &stored);
    tokio::pin!(live);
    tokio::select! {
        outcome = &mut live => panic!("the run ended before the gate opened: {outcome:?}"),
        () = started.notified() => {}
    }
    assert_eq!(wrappers(), before + 1);
    release.notify_one();
    let outcome = live.await;
    assert!(
        matches!(outcome, RunOutcome::Completed(ref r) if !r.is_error()),
        "{outcome:?}"
    );
    assert_eq!(wrappers(), before, "the wrapper left with the run");
    // A run that ends, and a resumption that ends, leave nothing behind either.
    for n in 0..2 {
        let input = ToolExecutionInput::new(
            format!("{run}-{n}"),
            "run_code",
            json!({"code": "return await tools.pay({})", "description": "pay"}),
        );
        let outcome = registry
            .run_code_suspendable(input, &durability(&store))
            .await;
        assert!(matches!(outcome, RunOutcome::Completed(ref r) if !r.is_error()));
        assert_eq!(wrappers(), before);
    }
    let (stopped, stopped_calls) = (run_id(), Calls::default());
    start_and_stop(&store, &stopped, &stopped_calls).await;
    resume_on(&registry, &store, &stopped, OutcomeUnknownPolicy::Fail).await;
    assert_eq!(wrappers(), before);
}

/// [`PROGRAM`] in Python.
#[cfg(feature = "python")]
const PYTHON_PROGRAM: &str = "\
a = await tools.read({'n': 1})
b = await tools.pay({'amount': 12})
try:
    c = await tools.ship({'to': 'ops'})
except ToolCallError as e:
    c = str(e)
return [a, b, c]";

#[cfg(feature = "python")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_python_run_resumes_by_id_and_retries_with_the_same_key() {
    use dsh_tools_runtime::code::monty::{MontyConfig, MontyRuntime};
    let python =
        || -> Arc<dyn CodeRuntime> { Arc::new(MontyRuntime::new(MontyConfig::default()).unwrap()) };
    let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
    for policy in [OutcomeUnknownPolicy::Fail, OutcomeUnknownPolicy::Retry] {
        let (run, calls, started) = (run_id(), Calls::default(), Arc::new(Notify::new()));
        let stopping = host_on(python(), &calls, true, Arc::clone(&started));
        stop_in_ship(&stopping, started, &store, &run, PYTHON_PROGRAM).await;
        assert_eq!(
            store
                .entries(&run)
                .await
                .unwrap()
                .iter()
                .map(|e| e.index)
                .collect::<Vec<_>>(),
            [1, 2]
        );
        // A TypeScript host refuses the Python run before anything runs.
        let typescript = host(&calls, false, Arc::new(Notify::new()));
        let stored = durability(&store);
        let refused = resume_run(&typescript, &run, Resume::new(Decision::Deny), &stored).await;
        assert_eq!(refused.unwrap_err().code(), "CONTINUATION_LANGUAGE");
        let resuming = host_on(python(), &calls, false, Arc::new(Notify::new()));
        let value = resume_on(&resuming, &store, &run, policy).await;
        let (read, pay) = (json!({"read": {"n": 1}}), json!({"pay": {"amount": 12}}));
        assert_eq!((&value["result"][0], &value["result"][1]), (&read, &pay));
        assert_eq!(
            (count(&calls, "read"), count(&calls, "pay")),
            (1, 1),
            "{policy:?}"
        );
        let keys = keys(&calls, "ship");
        let call = format!("{run}:code:3");
        if policy == OutcomeUnknownPolicy::Retry {
            assert_eq!(value["result"][2], json!({"ship": {"to": "ops"}}));
            assert_eq!(keys, [call.clone(), call]);
        } else {
            let message = value["result"][2].as_str().unwrap();
            assert!(
                message.contains(&format!(
                    "OUTCOME_UNKNOWN: the outcome of tools.ship ({call}) is unknown"
                )),
                "{message}"
            );
            assert_eq!(keys, [call]);
        }
        assert!(store.run(&run).await.unwrap().unwrap().finished.is_some());
    }
}
