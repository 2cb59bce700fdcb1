//! The `continuation` target seals its own bodies; these tests check that its sealing is the
//! registry's, so fuzzed bodies reach the payload decoder rather than the tag check.

use dsh_tools_fuzz_harness::continuation::host;
use dsh_tools_fuzz_harness::continuation::{durability, seal, start, unseal};
use dsh_tools_runtime::code::durable::{Decision, Resume, RunOutcome};
use serde_json::Value;

const PROGRAM: &str =
    "const r = await tools.read({ n: 1 }); await tools.write({ path: 'a' }); return r;";

fn suspended_body() -> Vec<u8> {
    match start(PROGRAM) {
        RunOutcome::Suspended { continuation, .. } => unseal(&continuation),
        RunOutcome::Completed(result) => panic!("expected a suspension: {result:?}"),
    }
}

#[test]
fn a_body_the_harness_reseals_resumes_like_the_registrys_own() {
    let body = suspended_body();
    let payload: Value = serde_json::from_slice(&body).expect("a JSON body");
    assert_eq!(payload["v"], 1, "{payload}");
    assert_eq!(payload["pending"][0]["tool"], "write", "{payload}");
    let outcome = host()
        .resume(&seal(&body), Resume::new(Decision::APPROVE), &durability())
        .expect("the resealed continuation opens");
    match outcome {
        RunOutcome::Completed(result) => {
            assert!(!result.is_error(), "{result:?}");
            let value = result.value().expect("a value");
            assert_eq!(value["result"]["got"]["n"], 1, "{value}");
        }
        RunOutcome::Suspended { pending, .. } => panic!("suspended again: {pending:?}"),
    }
}

#[test]
fn a_body_sealed_under_another_key_is_refused_and_a_broken_body_is_named() {
    let body = suspended_body();
    // Alter the second-to-last character: every bit of it is data. (The last one may carry
    // unused bits of the final base64 group, and an altered unused bit is a malformed
    // encoding, not a tampered body: that made this test fail on some runs.)
    let mut sealed: Vec<char> = seal(&body).chars().collect();
    let at = sealed.len() - 2;
    sealed[at] = if sealed[at] == 'A' { 'B' } else { 'A' };
    let sealed: String = sealed.into_iter().collect();
    let error = host()
        .resume(&sealed, Resume::new(Decision::APPROVE), &durability())
        .expect_err("an altered continuation");
    assert_eq!(error.code(), "CONTINUATION_TAMPERED");
    let error = host()
        .resume(
            &seal(b"{\"v\":1}"),
            Resume::new(Decision::APPROVE),
            &durability(),
        )
        .expect_err("a body without its fields");
    assert_eq!(error.code(), "CONTINUATION_BODY", "{error}");
}
