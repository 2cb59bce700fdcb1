//! `dsh-tools turn`: a provider response's tool calls run against the example tools; the output
//! is what to send back to that provider.

mod support;

use std::path::Path;

use serde_json::{Value, json};

fn turn(dir: &Path, provider: &str, extra: &[&str], body: &Value) -> (i32, Value, String) {
    let mut args = vec!["turn", "--provider", provider];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = support::dsh_tools(dir, &args, &body.to_string());
    (
        code,
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr,
    )
}

#[test]
fn an_openai_chat_turn_prints_one_tool_message_per_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\n").unwrap();
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"notes.txt\",\"offset\":null,\"limit\":null}"}},
        {"id": "c2", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\":\"out.txt\",\"content\":\"x\"}"}},
        {"id": "c3", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":"}},
        {"id": "c4", "type": "function", "function": {"name": "fly", "arguments": "{}"}}
    ]}}]});
    let (code, out, stderr) = turn(dir.path(), "openai-chat", &["-"], &body);
    assert_eq!(code, 0, "{stderr}");
    let messages = out.as_array().unwrap();
    assert_eq!(messages.len(), 4);
    let ids: Vec<&str> = messages
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    assert!(messages.iter().all(|m| m["role"] == "tool"));
    assert!(
        messages[0]["content"].as_str().unwrap().contains("alpha"),
        "{}",
        messages[0]
    );
    assert_eq!(
        messages[1]["content"],
        "Error: tool \"write_file\" requires approval, but no approval channel is available"
    );
    assert_eq!(
        messages[2]["content"],
        "Error: invalid arguments: arguments are not valid JSON: EOF while parsing a value at line 1 column 8"
    );
    assert_eq!(messages[3]["content"], "Error: unknown tool \"fly\"");
    assert!(!dir.path().join("out.txt").exists());
}

#[test]
fn an_anthropic_turn_with_yes_runs_the_calls_and_prints_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {"path": "out.txt", "content": "hello"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let (code, out, stderr) = turn(dir.path(), "anthropic", &["--yes"], &body);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["role"], "user");
    assert_eq!(out["content"][0]["type"], "tool_result");
    assert_eq!(out["content"][0]["tool_use_id"], "toolu_1");
    assert!(out["content"][0].get("is_error").is_none(), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "hello"
    );
}

#[test]
fn a_gemini_turn_echoes_the_call_ids_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "g1", "name": "list_dir", "args": {"path": "."}}},
        {"functionCall": {"name": "glob", "args": {"pattern": "*.txt"}}}
    ]}}]});
    let (code, out, stderr) = turn(dir.path(), "gemini", &[], &body);
    assert_eq!(code, 0, "{stderr}");
    let parts = out["parts"].as_array().unwrap();
    assert_eq!(parts[0]["functionResponse"]["id"], "g1");
    assert_eq!(parts[0]["functionResponse"]["name"], "list_dir");
    assert!(parts[1]["functionResponse"].get("id").is_none());
    assert!(
        parts[1]["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
}

#[test]
fn a_body_of_another_shape_is_exit_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let anthropic_body =
        json!({"content": [{"type": "tool_use", "id": "t", "name": "glob", "input": {}}]});
    let (code, out, stderr) = turn(dir.path(), "openai-chat", &[], &anthropic_body);
    assert_eq!(code, 2);
    assert_eq!(out, Value::Null);
    assert_eq!(
        stderr,
        "dsh-tools: <stdin>: not an OpenAI Chat Completions response: choices is missing\n"
    );
}

#[test]
fn duplicate_call_ids_are_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"output": [
        {"type": "function_call", "call_id": "same", "name": "glob", "arguments": "{}"},
        {"type": "function_call", "call_id": "same", "name": "glob", "arguments": "{}"}
    ]});
    let (code, _, stderr) = turn(dir.path(), "openai-responses", &[], &body);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "dsh-tools: <stdin>: OpenAI Responses response has two tool calls with id \"same\" (output[1]): results could not be paired with their calls\n"
    );
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = turn(dir.path(), "openai", &[], &json!({}));
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown provider \"openai\""), "{stderr}");
}

#[test]
fn the_response_can_be_the_argument_itself() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "glob", "args": {"pattern": "*.txt"}}}
    ]}}]});
    let text = body.to_string();
    let (code, stdout, stderr) =
        support::dsh_tools(dir.path(), &["turn", "--provider", "gemini", &text], "");
    assert_eq!(code, 0, "{stderr}");
    let message: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(message["parts"][0]["functionResponse"]["name"], "glob");
    assert!(
        message["parts"][0]["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap()
            .contains("a.txt"),
        "{message}"
    );
    // A syntax error names the argument, the line and the column.
    let (code, _, stderr) = support::dsh_tools(
        dir.path(),
        &["turn", "--provider", "gemini", "{\"candidates\": [}"],
        "",
    );
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "dsh-tools: <argument>: invalid JSON at line 1, column 17: expected value\n"
    );
}

#[test]
fn mcp_servers_tools_can_be_called_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    // Our own `mcp serve`, imported as server s1.
    let ourselves = format!("{} mcp serve", env!("CARGO_BIN_EXE_dsh-tools"));
    let body = json!({"output": [{"type": "function_call", "call_id": "c1",
        "name": "mcp__s1__read_file", "arguments": "{\"path\": \"notes.txt\"}"}]});
    let (code, out, stderr) = turn(
        dir.path(),
        "openai-responses",
        &["--mcp", &ourselves],
        &body,
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out[0]["type"], "function_call_output");
    assert_eq!(out[0]["call_id"], "c1");
    let output = out[0]["output"].as_str().unwrap();
    assert!(output.contains("alpha") && output.contains("beta"), "{out}");
}
