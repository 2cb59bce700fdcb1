//! The continuation: refused before anything runs when tampered, truncated, sealed with another
//! key, or already resumed.

use std::sync::Arc;

use dsh_tools_runtime::code::durable::{
    ContinuationError, ContinuationKey, Decision, Durability, MemorySpentStore,
};

use super::support::*;

const PROGRAM: &str = "await tools.read({ n: 1 }); return await tools.write({ path: 'x' });";

#[tokio::test]
async fn a_continuation_resumes_once() {
    let host = Host::new();
    let (continuation, _) = suspended(host.start(PROGRAM).await);
    let _ = value(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
    let error = host
        .resume(&continuation, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "CONTINUATION_SPENT");
    assert!(
        error
            .to_string()
            .ends_with("was already resumed (a continuation resumes once)")
    );
    assert_eq!((host.runs_of("read"), host.runs_of("write")), (1, 1));
}

#[tokio::test]
async fn tampered_truncated_and_foreign_continuations_run_nothing() {
    let host = Host::new();
    let (continuation, _) = suspended(host.start(PROGRAM).await);
    let runs_before = host.runs.lock().unwrap().len();

    // One character changed in the middle.
    let mut tampered = continuation.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let error = host
        .resume(&tampered, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error, ContinuationError::Unauthenticated);

    let truncated = &continuation[..continuation.len() - 7];
    let error = host
        .resume(truncated, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ContinuationError::Unauthenticated | ContinuationError::Malformed(_)
        ),
        "{error:?}"
    );

    let foreign = Host::with(Durability::new(
        ContinuationKey::generate(),
        Arc::new(MemorySpentStore::default()),
    ));
    let error = foreign
        .resume(&continuation, Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "CONTINUATION_TAMPERED");
    assert_eq!(
        error.to_string(),
        "continuation refused: it was altered, truncated or sealed with another key (authentication failed)"
    );

    let error = host
        .resume("not a continuation", Decision::APPROVE, false)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "CONTINUATION_MALFORMED");

    assert_eq!(host.runs.lock().unwrap().len(), runs_before, "nothing ran");
    assert_eq!(foreign.runs.lock().unwrap().len(), 0);
    // The refusals spent nothing: the real continuation still resumes.
    let _ = value(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
}
