//! Suspension: an `ask` in a suspendable run ends it as `Suspended`, with the pending call.

use dsh_tools_runtime::code::durable::RunOutcome;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn an_ask_suspends_the_run_before_the_call_runs() {
    let host = Host::new();
    let outcome = host
        .start(
            "const a = await tools.read({ n: 1 });\n\
             console.log('read', JSON.stringify(a));\n\
             const w = await tools.write({ path: 'notes.txt' });\n\
             return [a, w];",
        )
        .await;
    let (continuation, pending) = suspended(outcome);
    assert!(continuation.starts_with("dshc1."), "{continuation}");
    assert_eq!(pending.len(), 1);
    let call = &pending[0];
    assert_eq!(call.id, "run-1:code:2");
    assert_eq!(call.tool, "write");
    assert_eq!(call.arguments, json!({"path": "notes.txt"}));
    assert_eq!(call.reason.as_deref(), Some("writes need a person"));
    assert_eq!(
        serde_json::to_value(&call.card).unwrap(),
        json!({"card": "generic", "title": "card \"notes.txt\""})
    );
    assert_eq!(host.runs_of("read"), 1);
    assert_eq!(host.runs_of("write"), 0, "the pending call did not run");
}

#[tokio::test]
async fn a_run_without_an_ask_completes() {
    let host = Host::new();
    let outcome = host.start("return await tools.read({ n: 4 });").await;
    assert_eq!(value(outcome), json!({"logs": [], "result": {"read": 4}}));
}

#[tokio::test]
async fn calls_in_flight_finish_and_calls_not_started_never_start() {
    let host = Host::new();
    // `slow` is dispatched first and still running when `write` asks; `after` comes later.
    let outcome = host
        .start(
            "const slow = tools.read({ n: 1, sleep_ms: 300 });\n\
             const w = tools.write({ path: 'a' });\n\
             const after = tools.read({ n: 3 });\n\
             return await Promise.all([slow, w, after]);",
        )
        .await;
    let (continuation, pending) = suspended(outcome);
    assert_eq!(pending[0].id, "run-1:code:2");
    let runs = host.runs.lock().unwrap().clone();
    assert_eq!(
        runs,
        vec![("read".to_owned(), json!({"n": 1, "sleep_ms": 300}))],
        "the call in flight finished; the one after the pending call never started"
    );
    assert_eq!(
        host.events.summary(),
        [
            "tool/code-dispatch-start run-1:code:1",
            "tool/code-dispatch-start run-1:code:2",
            "tool/code-dispatch run-1:code:1",
            "tool/code-run-suspended [run-1:code:2]",
        ]
    );

    // The journaled call is not repeated: resumed, only `write` and `after` run.
    let outcome = host
        .resume(
            &continuation,
            dsh_tools_runtime::code::durable::Decision::APPROVE,
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        value(outcome)["result"],
        json!([{"read": 1}, "wrote a", {"read": 3}])
    );
    assert_eq!(host.runs_of("read"), 2);
    assert_eq!(host.runs_of("write"), 1);
}

#[tokio::test]
async fn a_suspension_is_not_a_failure_the_model_sees() {
    let host = Host::new();
    let outcome = host.start("await tools.write({ path: 'x' });").await;
    assert!(matches!(outcome, RunOutcome::Suspended { .. }));
    // Without suspension enabled, the same run asks the approval service (none here).
    let result = host
        .registry
        .execute(host.input("await tools.write({ path: 'x' });"))
        .await;
    let text = result.content()[0].as_text().unwrap().to_owned();
    assert!(text.contains("writes need a person"), "{text}");
    assert_eq!(host.runs_of("write"), 0);
}

#[tokio::test]
async fn the_prompt_tells_the_model_nothing_about_suspension() {
    let host = Host::new();
    let before = host.registry.prompt(Some(host.agent.id())).unwrap();
    let (continuation, _) = suspended(host.start("await tools.write({ path: 'x' });").await);
    let _ = host
        .resume(
            &continuation,
            dsh_tools_runtime::code::durable::Decision::APPROVE,
            false,
        )
        .await
        .unwrap();
    let after = host.registry.prompt(Some(host.agent.id())).unwrap();
    assert_eq!(before, after);
    let text: String = after
        .sections
        .iter()
        .map(|section| section.text.to_lowercase())
        .chain(
            after
                .tools
                .iter()
                .map(|tool| tool.description.to_lowercase()),
        )
        .collect();
    assert!(
        text.contains("run_code") || text.contains("tools."),
        "a Code Mode prompt: {text}"
    );
    for word in ["suspend", "continuation", "resum", "journal", "replay"] {
        assert!(!text.contains(word), "the prompt mentions {word:?}");
    }
}
