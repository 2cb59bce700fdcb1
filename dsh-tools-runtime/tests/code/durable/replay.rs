//! Resumption by deterministic replay: journaled calls are answered without dispatch, the
//! pending call gets the decision, and a replay that takes another path diverges.

use dsh_tools::ToolDefinition;
use dsh_tools_runtime::approval::ApprovalScope;
use dsh_tools_runtime::code::durable::Decision;
use serde_json::json;

use super::support::*;

const TWO_WRITES: &str = "const a = await tools.read({ n: 1 });\n\
     const w1 = await tools.write({ path: 'one' });\n\
     let w2: string;\n\
     try { w2 = await tools.write({ path: 'two' }); } catch (e) { w2 = `${e.name}: ${e.message}`; }\n\
     const b = await tools.read({ n: 2 });\n\
     console.log('done');\n\
     return [a, w1, w2, b];";

#[tokio::test]
async fn approve_then_deny_runs_every_call_exactly_once() {
    let first = Host::new();
    let (continuation, pending) = suspended(first.start(TWO_WRITES).await);
    assert_eq!(pending[0].id, "run-1:code:2");

    // Another host (as another process would be) with the same key and spent-id store.
    let second = Host::with(first.durability.clone());
    let (continuation, pending) = suspended(
        second
            .resume(&continuation, Decision::APPROVE, true)
            .await
            .unwrap(),
    );
    assert_eq!(pending[0].id, "run-1:code:3");
    assert_eq!(pending[0].arguments, json!({"path": "two"}));

    let third = Host::with(first.durability.clone());
    let outcome = third
        .resume(&continuation, Decision::Deny, false)
        .await
        .unwrap();
    assert_eq!(
        value(outcome),
        json!({
            "logs": ["done"],
            "result": [
                {"read": 1},
                "wrote one",
                "ToolCallError: the user rejected tool \"write\"",
                {"read": 2}
            ]
        })
    );
    let all = |tool: &str| first.runs_of(tool) + second.runs_of(tool) + third.runs_of(tool);
    assert_eq!((all("read"), all("write")), (2, 1), "each call ran once");
    assert_eq!(
        (
            first.runs_of("read"),
            second.runs_of("write"),
            third.runs_of("read")
        ),
        (1, 1, 1)
    );
    assert_eq!(
        third.events.summary(),
        [
            "tool/code-run-resumed null",
            "tool/code-dispatch-replayed run-1:code:1",
            "tool/code-dispatch-replayed run-1:code:2",
            "tool/code-dispatch-start run-1:code:3",
            "tool/code-dispatch run-1:code:3",
            "tool/code-dispatch-start run-1:code:4",
            "tool/code-dispatch run-1:code:4",
        ]
    );
}

#[tokio::test]
async fn a_denied_call_is_the_programs_tool_call_error() {
    let host = Host::new();
    let program = "try { await tools.write({ path: 'x' }); } catch (e) {\n\
                   return [e instanceof ToolCallError, e.toolName, e.message]; }";
    let (continuation, _) = suspended(host.start(program).await);
    let outcome = host
        .resume(&continuation, Decision::Deny, false)
        .await
        .unwrap();
    assert_eq!(
        value(outcome)["result"],
        json!([true, "write", "the user rejected tool \"write\""])
    );
    assert_eq!(host.runs_of("write"), 0);
}

#[tokio::test]
async fn date_and_random_are_identical_across_the_replay() {
    let host = Host::new();
    let program = "const t = Date.now(); const d = new Date().getTime(); const r = Math.random();\n\
                   await tools.read({ n: 1, t, d, r });\n\
                   await tools.write({ path: 'x' });\n\
                   return { t, d, r, later: Date.now() >= t };";
    let (continuation, _) = suspended(host.start(program).await);
    let seen = host.runs.lock().unwrap()[0].1.clone();
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let result = value(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
    assert_eq!(result["result"]["t"], seen["t"]);
    assert_eq!(result["result"]["d"], seen["d"]);
    assert_eq!(result["result"]["r"], seen["r"]);
    assert_eq!(result["result"]["later"], json!(true));
    assert_eq!(
        host.runs_of("read"),
        1,
        "the journaled call was not repeated"
    );
}

#[tokio::test]
async fn a_replay_that_branches_on_something_unrecorded_diverges() {
    let host = Host::new();
    // The program branches on the tools it can see: not recorded.
    let program = "const n = 'extra' in tools ? 99 : 1;\n\
                   await tools.read({ n });\n\
                   await tools.write({ path: 'x' });";
    let (continuation, _) = suspended(host.start(program).await);
    host.registry
        .register(
            ToolDefinition::builder("extra")
                .description("Appeared later.")
                .execute(|_, _| async { Ok(json!(null)) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let message = failure(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
    assert_eq!(
        message,
        "Error: code run failed (divergence): call run-1:code:1 diverged from its journal: tools.read was called with other arguments than the journal recorded; nothing was dispatched"
    );
    assert_eq!((host.runs_of("read"), host.runs_of("write")), (1, 0));
}

#[tokio::test]
async fn a_replay_that_calls_another_tool_or_stops_early_diverges() {
    let host = Host::new();
    // (`tools.extra` does not exist yet: named statically, the check would refuse the program.)
    let program = "if (!('extra' in tools)) await tools.read({ n: 1 });\n\
                   else await (tools as any)['ex' + 'tra']({});\n\
                   await tools.write({ path: 'x' });";
    let (continuation, _) = suspended(host.start(program).await);
    let extra = ToolDefinition::builder("extra")
        .description("Appeared later.")
        .execute(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap();
    let registration = host.registry.register(extra).unwrap();
    // A copy of the continuation for the second attempt: the first one spends it.
    let other = Host::with(host.durability.clone());
    let message = failure(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
    assert!(
        message.ends_with("call run-1:code:1 diverged from its journal: the program called tools.extra, the journal recorded tools.read; nothing was dispatched"),
        "{message}"
    );
    registration.dispose();
    drop(other);

    let host = Host::new();
    let program = "if ('extra' in tools) return 'early';\n\
                   await tools.read({ n: 1 });\n\
                   await tools.write({ path: 'x' });";
    let (continuation, _) = suspended(host.start(program).await);
    host.registry
        .register(
            ToolDefinition::builder("extra")
                .description("Appeared later.")
                .execute(|_, _| async { Ok(json!(null)) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let message = failure(
        host.resume(&continuation, Decision::APPROVE, false)
            .await
            .unwrap(),
    );
    assert!(
        message.ends_with("the replay diverged from its journal: the program made 0 calls, the journal recorded 1 and 1 awaited a decision; nothing was dispatched"),
        "{message}"
    );
    assert_eq!(host.runs_of("write"), 0);
}

#[test]
fn approval_scopes_order_from_narrow_to_wide() {
    assert!(
        ApprovalScope::Once < ApprovalScope::Run && ApprovalScope::Run < ApprovalScope::Session
    );
}
