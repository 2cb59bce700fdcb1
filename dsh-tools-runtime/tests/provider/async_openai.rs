//! `provider::async_openai`: the provider conversions on async-openai's own Chat Completions
//! types (no mirrors of them): strict tool definitions out, tool calls in, tool messages out,
//! streamed chunks accumulated.
#![cfg(feature = "async-openai")]

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionTools,
    CreateChatCompletionStreamResponse, FunctionCall,
};
use dsh_tools::ToolDefinition;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::dialect::DialectOptions;
use dsh_tools_runtime::provider::async_openai::{chat_calls, chat_messages, chat_tools};
use dsh_tools_runtime::provider::{CallArguments, ChatStream, Provider, ProviderTurn};
use serde_json::json;

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let echo = ToolDefinition::builder("echo")
        .description("Echo the text.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .execute(|args, _| async move { Ok(args["text"].clone()) })
        .build()
        .unwrap();
    registry.register(echo).unwrap().keep();
    registry
}

fn function_call(id: &str, arguments: &str) -> ChatCompletionMessageToolCalls {
    ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
        id: id.into(),
        function: FunctionCall {
            name: "echo".into(),
            arguments: arguments.into(),
        },
    })
}

#[test]
fn tool_definitions_are_strict_chat_completion_tools() {
    let registry = registry();
    let shown = registry.prompt(None).unwrap().tools;
    let tools = chat_tools(&shown, &registry.deferred(None), &DialectOptions::default()).unwrap();
    let [ChatCompletionTools::Function(echo)] = &tools[..] else {
        panic!("one function tool: {tools:?}");
    };
    assert_eq!(echo.function.name, "echo");
    assert_eq!(echo.function.strict, Some(true));
    assert_eq!(
        echo.function.parameters.as_ref().unwrap()["additionalProperties"],
        false
    );
}

#[tokio::test]
async fn tool_calls_run_and_come_back_as_tool_messages() {
    let registry = registry();
    let calls = chat_calls(&[
        function_call("call_1", r#"{"text": "hi"}"#),
        function_call("call_2", r#"{"text": "#),
    ]);
    assert_eq!(
        calls[0].arguments,
        CallArguments::Json(json!({"text": "hi"}))
    );
    let outcome = ProviderTurn::new(&registry, Provider::OpenAiChat)
        .run(calls)
        .await;
    let messages = chat_messages(&outcome.calls, &outcome.results, None).unwrap();
    let texts: Vec<(String, String)> = messages
        .iter()
        .map(|message| match message {
            ChatCompletionRequestMessage::Tool(tool) => match &tool.content {
                ChatCompletionRequestToolMessageContent::Text(text) => {
                    (tool.tool_call_id.clone(), text.clone())
                }
                other => panic!("text content: {other:?}"),
            },
            other => panic!("a tool message: {other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("call_1".to_owned(), "hi".to_owned()),
            (
                "call_2".to_owned(),
                "Error: invalid arguments: arguments are not valid JSON: EOF while parsing a value at line 1 column 9"
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn streamed_chunks_accumulate_into_calls() {
    let chunk = |delta: serde_json::Value| -> CreateChatCompletionStreamResponse {
        serde_json::from_value(json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": null}]
        }))
        .unwrap()
    };
    let mut stream = ChatStream::new();
    let chunks = [
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "echo", "arguments": ""}}]}),
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"text\": "}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"hi\"}"}}]})),
    ];
    for chunk in &chunks {
        stream.push_chunk(chunk).unwrap();
    }
    let calls = stream.finish().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id.as_deref(), Some("call_1"));
    assert_eq!(calls[0].name, "echo");
    assert_eq!(
        calls[0].arguments,
        CallArguments::Json(json!({"text": "hi"}))
    );
}
