//! Cards as ACP session updates (`docs/CONTRACTS.md`, "Cards over ACP"), checked against the
//! crate's types and against the JSON schema the ACP types publish (schemars).

#![cfg(feature = "acp")]

use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::present::{FileDiff, Location, ToolCallView, ToolKind, ToolResultView};
use dsh_tools::{ToolDefinition, ToolError};
use dsh_tools_runtime::acp::AcpCards;
use dsh_tools_runtime::acp::schema::v1::SessionNotification;
use serde_json::{Value, json};

fn bash() -> ToolDefinition {
    ToolDefinition::builder("bash")
        .description("Run a command.")
        .present_call(|args| {
            Some(ToolCallView::Terminal {
                title: args["command"].as_str().unwrap_or_default().to_owned(),
                description: Some("List the files".into()),
                cwd: Some("sub".into()),
            })
        })
        .present_result(|_, result| {
            Some(ToolResultView::Terminal {
                title: None,
                output: result
                    .content
                    .first()
                    .and_then(|b| b.as_text())
                    .map(str::to_owned),
                exit_code: Some(0),
                signal: None,
            })
        })
        .execute(|_, _| async { Ok(json!("a.rs\nb.rs\n")) })
        .build()
        .unwrap()
}

fn edit() -> ToolDefinition {
    ToolDefinition::builder("edit_file")
        .description("Edit a file.")
        .present_call(|args| {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            Some(ToolCallView::Diff {
                title: format!("Edit {path}"),
                diffs: vec![FileDiff {
                    path,
                    old_text: Some("a".into()),
                    new_text: "b".into(),
                }],
                locations: None,
            })
        })
        .present_result(|args, _| {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            Some(ToolResultView::Diff {
                title: None,
                diffs: vec![FileDiff {
                    path,
                    old_text: None,
                    new_text: "b".into(),
                }],
            })
        })
        .execute(|_, _| async { Ok(json!("edited")) })
        .build()
        .unwrap()
}

fn read() -> ToolDefinition {
    ToolDefinition::builder("read_file")
        .description("Read a file.")
        .present_call(|args| {
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            Some(ToolCallView::Generic {
                title: format!("Read {path}"),
                kind: Some(ToolKind::Read),
                raw_input: Some(json!(path.clone())),
                content: None,
                locations: Some(vec![Location {
                    path,
                    line: Some(3),
                }]),
            })
        })
        .execute(|_, _| async { Ok(json!("text")) })
        .build()
        .unwrap()
}

/// Validates `update` as a `session/update` notification's params against the ACP schema, and
/// checks the crate's types keep it whole.
fn check(update: Value) -> Value {
    let notification = json!({"sessionId": "sess-1", "update": update});
    let schema = serde_json::to_value(schemars::schema_for!(SessionNotification)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&notification)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{notification}: {errors:?}");
    let typed: SessionNotification = serde_json::from_value(notification.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        notification,
        "the types dropped a part"
    );
    update
}

fn as_call(call: impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(call).unwrap();
    value
        .as_object_mut()
        .unwrap()
        .insert("sessionUpdate".into(), json!("tool_call"));
    check(value)
}

fn as_update(update: impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(update).unwrap();
    value
        .as_object_mut()
        .unwrap()
        .insert("sessionUpdate".into(), json!("tool_call_update"));
    check(value)
}

fn success(text: &str) -> ToolExecutionResult {
    ToolExecutionResult::Success(dsh_tools::exec::ToolSuccess {
        value: json!(text),
        content: vec![dsh_tools::ContentBlock::text(text)],
        meta: None,
        additional_contexts: vec![],
        concludes_turn: false,
    })
}

#[test]
fn a_terminal_card_follows_the_terminal_convention() {
    let cards = AcpCards::new("/work/p");
    let args = json!({"command": "ls"});
    let call = as_call(cards.tool_call("c1", Some(&bash()), &args));
    assert_eq!(
        call,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls", "kind": "execute",
            "rawInput": {"command": "ls"},
            "content": [
                {"type": "content", "content": {"type": "text", "text": "List the files"}},
                {"type": "terminal", "terminalId": "c1"}
            ],
            "_meta": {"terminal_info": {"terminal_id": "c1", "cwd": "/work/p/sub"}}})
    );
    let update = as_update(cards.tool_call_update("c1", Some(&bash()), &args, &success("a.rs\n")));
    assert_eq!(update["status"], "completed");
    assert_eq!(
        update["content"],
        json!([{"type": "terminal", "terminalId": "c1"}])
    );
    assert_eq!(
        update["_meta"],
        json!({"terminal_output": {"terminal_id": "c1", "data": "a.rs\n"},
               "terminal_exit": {"terminal_id": "c1", "exit_code": 0, "signal": null}})
    );
    // A client without terminals gets the fenced fallback.
    let plain = as_update(AcpCards::new("/work/p").terminals(false).tool_call_update(
        "c1",
        Some(&bash()),
        &args,
        &success("a.rs\n"),
    ));
    assert_eq!(
        plain["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "```console\na.rs\n```"}}])
    );
    assert!(plain.get("_meta").is_none());
}

#[test]
fn diff_cards_become_acp_diffs_with_absolute_paths() {
    let cards = AcpCards::new("/work/p");
    let args = json!({"path": "src/lib.rs"});
    let call = as_call(cards.tool_call("c2", Some(&edit()), &args));
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["title"], "Edit src/lib.rs");
    assert_eq!(
        call["content"],
        json!([{"type": "diff", "path": "/work/p/src/lib.rs", "oldText": "a", "newText": "b"}])
    );
    assert_eq!(call["locations"], json!([{"path": "/work/p/src/lib.rs"}]));
    let update = as_update(cards.tool_call_update("c2", Some(&edit()), &args, &success("edited")));
    assert_eq!(
        update["content"],
        // A new file: no old text.
        json!([{"type": "diff", "path": "/work/p/src/lib.rs", "newText": "b"}])
    );
}

#[test]
fn generic_cards_forward_locations_and_relative_titles() {
    let cards = AcpCards::new("/work/p/");
    let args = json!({"path": "/work/p/docs/a.md"});
    let call = as_call(cards.tool_call("c3", Some(&read()), &args));
    assert_eq!(call["title"], "Read docs/a.md");
    assert_eq!(call["kind"], "read");
    // `pending` is ACP's default status (the types leave it out).
    assert!(call.get("status").is_none());
    assert_eq!(call["rawInput"], "/work/p/docs/a.md");
    assert_eq!(
        call["locations"],
        json!([{"path": "/work/p/docs/a.md", "line": 3}])
    );
}

#[test]
fn a_tool_without_cards_gets_the_generic_one_and_failures_fail() {
    let cards = AcpCards::new("/work/p");
    let call = as_call(cards.tool_call("c4", None, &json!({"q": 1})));
    assert_eq!(
        call,
        json!({"sessionUpdate": "tool_call", "toolCallId": "c4", "title": "tool", "rawInput": {"q": 1}})
    );
    let failed = ToolExecutionResult::failure(ToolError::msg("boom"));
    let update = as_update(cards.tool_call_update("c4", None, &json!({}), &failed));
    assert_eq!(update["status"], "failed");
    assert_eq!(
        update["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "Error: boom"}}])
    );
    assert_eq!(update["rawOutput"], json!({"error": "boom"}));
}
