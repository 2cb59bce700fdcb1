//! Durable Python runs: the Monty interpreter pauses at the call awaiting a decision, its
//! state travels in the continuation, and a resumption continues it — nothing replays.

use std::sync::Arc;

use dsh_tools_runtime::code::durable::{
    ContinuationKey, Decision, Durability, MemorySpentStore, RunOutcome,
};
use dsh_tools_runtime::code::monty::{Isolation, MontyConfig, MontyRuntime, WorkerConfig};
use serde_json::json;

use super::support::*;

fn python_host(durability: Durability) -> Host {
    let runtime = MontyRuntime::new(MontyConfig::default()).unwrap();
    Host::with_runtime(durability, Arc::new(runtime))
}

/// A host running programs in a worker process (the paused state crosses the protocol).
fn worker_host(durability: Durability) -> Host {
    let config = MontyConfig {
        isolation: Isolation::Workers(WorkerConfig {
            workers: 1,
            ..WorkerConfig::new(env!("CARGO_BIN_EXE_dsh-monty-worker"), Vec::<String>::new())
        }),
        ..MontyConfig::default()
    };
    Host::with_runtime(durability, Arc::new(MontyRuntime::new(config).unwrap()))
}

fn fresh() -> Host {
    python_host(Durability::new(
        ContinuationKey::generate(),
        Arc::new(MemorySpentStore::default()),
    ))
}

const TWO_WRITES: &str = "\
a = await tools.read({'n': 1})
print('read', a['read'])
w = await tools.write({'path': 'a'})
print('first', w)
try:
    second = await tools.write({'path': 'b'})
except ToolCallError as e:
    second = 'refused: ' + str(e)
return [a, w, second]";

#[tokio::test]
async fn a_python_run_suspends_twice_and_every_call_runs_once() {
    let first = fresh();
    let (continuation, pending) = suspended(first.start(TWO_WRITES).await);
    assert!(continuation.starts_with("dshc1."), "{continuation}");
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].id.as_str(), pending[0].tool.as_str()),
        ("run-1:code:2", "write")
    );
    assert_eq!(pending[0].arguments, json!({"path": "a"}));
    assert_eq!((first.runs_of("read"), first.runs_of("write")), (1, 0));

    // Another process: approve, suspend again at the second write.
    let second = python_host(first.durability.clone());
    let outcome = second
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    let (again, pending) = suspended(outcome);
    assert_eq!(
        (pending[0].id.as_str(), pending[0].arguments.clone()),
        ("run-1:code:3", json!({"path": "b"}))
    );
    assert_eq!(
        (second.runs_of("read"), second.runs_of("write")),
        (0, 1),
        "nothing replays: the read is not run again, the approved write runs once"
    );
    let events = second.events.summary();
    assert!(
        events.iter().all(|e| !e.contains("replayed")),
        "a snapshot resumes without replaying: {events:?}"
    );

    // A third: deny. The program sees a ToolCallError, and its output before each suspension
    // is in the final logs, once.
    let third = python_host(first.durability.clone());
    let outcome = third.resume(&again, Decision::Deny, false).await.unwrap();
    assert_eq!(
        value(outcome),
        json!({
            "logs": ["read 1", "first wrote a"],
            "result": [{"read": 1}, "wrote a", "refused: write: the user rejected tool \"write\""],
        })
    );
    assert_eq!((third.runs_of("read"), third.runs_of("write")), (0, 0));

    // Each continuation resumes once.
    let spent = third.resume(&continuation, Decision::APPROVE, false).await;
    assert_eq!(spent.unwrap_err().code(), "CONTINUATION_SPENT");
    let spent = third.resume(&again, Decision::APPROVE, false).await;
    assert_eq!(spent.unwrap_err().code(), "CONTINUATION_SPENT");
    assert_eq!((third.runs_of("read"), third.runs_of("write")), (0, 0));
}

#[tokio::test]
async fn a_call_in_flight_at_the_suspension_is_answered_from_the_journal() {
    let first = fresh();
    let program = "\
import asyncio
r, w = await asyncio.gather(tools.read({'n': 1, 'sleep_ms': 200}), tools.write({'path': 'a'}))
return [r, w]";
    let (continuation, pending) = suspended(first.start(program).await);
    assert_eq!(pending[0].id, "run-1:code:2");
    assert_eq!((first.runs_of("read"), first.runs_of("write")), (1, 0));
    let second = python_host(first.durability.clone());
    let outcome = second
        .resume(&continuation, Decision::APPROVE, false)
        .await
        .unwrap();
    assert_eq!(
        value(outcome),
        json!({"logs": [], "result": [{"read": 1}, "wrote a"]})
    );
    assert_eq!(
        (second.runs_of("read"), second.runs_of("write")),
        (0, 1),
        "the read that finished in flight is not run again"
    );
}

#[tokio::test]
async fn altered_truncated_and_foreign_python_continuations_are_refused_before_anything_runs() {
    let first = fresh();
    let (continuation, _) = suspended(first.start(TWO_WRITES).await);
    let second = python_host(first.durability.clone());
    // Flip one character of the sealed body in several places (the snapshot is in there).
    let body = continuation.len() - "dshc1.".len();
    for at in [body / 4, body / 2, body - 3] {
        let index = "dshc1.".len() + at;
        let mut bytes = continuation.clone().into_bytes();
        bytes[index] = if bytes[index] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(bytes).unwrap();
        let error = second
            .resume(&altered, Decision::APPROVE, false)
            .await
            .unwrap_err();
        assert_eq!(error.code(), "CONTINUATION_TAMPERED", "altered at {at}");
    }
    let truncated = &continuation[..continuation.len() - 10];
    let error = second
        .resume(truncated, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert!(
        ["CONTINUATION_TAMPERED", "CONTINUATION_MALFORMED"].contains(&error.code()),
        "{error}"
    );
    let foreign = fresh();
    let error = foreign
        .resume(&continuation, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "CONTINUATION_TAMPERED");
    assert_eq!((second.runs_of("write"), foreign.runs_of("write")), (0, 0));
    // Still unspent: the genuine one resumes (and suspends at the second write).
    let outcome = second
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Suspended { .. }));
}

#[tokio::test]
async fn a_python_continuation_names_its_language_and_a_typescript_host_refuses_it() {
    let first = fresh();
    let (continuation, _) = suspended(first.start(TWO_WRITES).await);
    assert_eq!(
        first.durability.language_of(&continuation).unwrap(),
        "python"
    );
    let typescript = Host::with(first.durability.clone());
    let error = typescript
        .resume(&continuation, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "CONTINUATION_LANGUAGE");
    assert_eq!(
        error.to_string(),
        "continuation is of a python program, but the registry's code runtime runs typescript"
    );
    // Refused before it was spent: a Python host still resumes it.
    let python = python_host(first.durability.clone());
    let outcome = python
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    assert!(matches!(outcome, RunOutcome::Suspended { .. }));
}

#[tokio::test]
async fn a_run_in_a_worker_process_suspends_and_resumes_in_process_and_back() {
    let durability = Durability::new(
        ContinuationKey::generate(),
        Arc::new(MemorySpentStore::default()),
    );
    let first = worker_host(durability.clone());
    let (continuation, pending) = suspended(first.start(TWO_WRITES).await);
    assert_eq!(pending[0].id, "run-1:code:2");
    assert_eq!((first.runs_of("read"), first.runs_of("write")), (1, 0));
    // The state a worker paused resumes in process, and the reverse.
    let second = python_host(durability.clone());
    let outcome = second
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    let (again, pending) = suspended(outcome);
    assert_eq!(pending[0].id, "run-1:code:3");
    assert_eq!((second.runs_of("read"), second.runs_of("write")), (0, 1));
    let third = worker_host(durability);
    let outcome = third
        .resume(&again, Decision::APPROVE, false)
        .await
        .unwrap();
    assert_eq!(
        value(outcome),
        json!({
            "logs": ["read 1", "first wrote a"],
            "result": [{"read": 1}, "wrote a", "wrote b"],
        })
    );
    assert_eq!((third.runs_of("read"), third.runs_of("write")), (0, 1));
}
