//! Provider turns (`docs/CONTRACTS.md`, "Provider turns"): calls parsed from each provider's
//! documented response shape, executed as one batch, results rendered back with ids paired.

#![cfg(feature = "provider")]

use crate::kit;

use std::sync::Arc;

use dsh_tools::exec::PostToolDecision;
use dsh_tools::{ContentBlock, ContextMessage, ToolDefinition};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::hooks::post_execute_fn;
use dsh_tools_runtime::provider::{
    AnthropicStream, CallArguments, ChatStream, Provider, ProviderError, ProviderTurn, parse_calls,
};
use kit::{RED_DOT_PNG, Ran, Store, fixture, registry};
use serde_json::{Value, json};

fn turn(registry: &ToolRegistry, provider: Provider) -> ProviderTurn {
    ProviderTurn::new(registry, provider).images(Arc::new(Store))
}

fn codes(outcome: &dsh_tools_runtime::provider::TurnOutcome) -> Vec<Option<String>> {
    outcome
        .results
        .iter()
        .map(|r| r.error().and_then(|e| e.info()).map(|i| i.code.to_string()))
        .collect()
}

#[tokio::test]
async fn openai_chat_turn_pairs_every_call_in_order() {
    let ran = Ran::default();
    let registry = registry(&ran);
    let outcome = turn(&registry, Provider::OpenAiChat)
        .run_response(&fixture("openai-chat"))
        .await
        .unwrap();
    let messages = &outcome.messages;
    let ids: Vec<&str> = messages[..6]
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "call_echo_a",
            "call_picture",
            "call_broken",
            "call_fail",
            "call_unknown",
            "call_note"
        ]
    );
    // The strict-mode null of `repeat` was removed: otherwise `repeat` would be invalid.
    assert_eq!(messages[0]["content"], "alpha");
    assert_eq!(messages[1]["content"], "a red dot");
    assert_eq!(
        messages[2]["content"],
        "Error: invalid arguments: arguments are not valid JSON: key must be a string at line 2 column 14"
    );
    assert_eq!(messages[3]["content"], "Error: disk full");
    assert_eq!(messages[4]["content"], "Error: unknown tool \"teleport\"");
    assert_eq!(messages[5]["content"], "noted");
    // Images follow all tool messages; the context follows the images.
    assert_eq!(
        messages[6],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Images returned by tool call call_picture (picture):"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{RED_DOT_PNG}")}}
        ]})
    );
    assert_eq!(
        messages[7],
        json!({"role": "user", "content": "note: lint ran"})
    );
    assert_eq!(messages.len(), 8);
    assert_eq!(
        codes(&outcome),
        [
            None,
            None,
            Some("INVALID_ARGS".into()),
            None,
            Some("UNKNOWN_TOOL".into()),
            None
        ]
    );
    // The malformed call's body never ran; the others did.
    assert_eq!(ran.list(), ["echo:alpha", "picture", "fail", "note"]);
    assert_eq!(outcome.to_wire(), Value::Array(messages.clone()));
}

#[tokio::test]
async fn openai_responses_turn_renders_function_call_outputs() {
    let registry = registry(&Ran::default());
    let outcome = turn(&registry, Provider::OpenAiResponses)
        .run_response(&fixture("openai-responses"))
        .await
        .unwrap();
    let m = &outcome.messages;
    assert_eq!(
        m[0],
        json!({"type": "function_call_output", "call_id": "call_echo_a", "output": "alpha"})
    );
    assert_eq!(
        m[1],
        json!({"type": "function_call_output", "call_id": "call_picture", "output": [
            {"type": "input_text", "text": "a red dot"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{RED_DOT_PNG}"), "detail": "auto"}
        ]})
    );
    assert_eq!(m[2]["call_id"], "call_broken");
    assert_eq!(m[4]["output"], "Error: unknown tool \"teleport\"");
    assert_eq!(
        m[6],
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "note: lint ran"}]})
    );
    assert_eq!(m.len(), 7);
}

#[tokio::test]
async fn anthropic_turn_is_one_user_message_then_the_contexts() {
    let registry = registry(&Ran::default());
    let outcome = turn(&registry, Provider::Anthropic)
        .run_response(&fixture("anthropic"))
        .await
        .unwrap();
    let wire = outcome.to_wire();
    assert_eq!(
        wire,
        json!([
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_echo_a", "content": "alpha"},
                {"type": "tool_result", "tool_use_id": "toolu_picture", "content": [
                    {"type": "text", "text": "a red dot"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": RED_DOT_PNG}}
                ]},
                {"type": "tool_result", "tool_use_id": "toolu_fail", "content": "Error: disk full", "is_error": true},
                {"type": "tool_result", "tool_use_id": "toolu_unknown", "content": "Error: unknown tool \"teleport\"", "is_error": true},
                {"type": "tool_result", "tool_use_id": "toolu_note", "content": "noted"}
            ]},
            {"role": "user", "content": [{"type": "text", "text": "note: lint ran"}]}
        ])
    );
}

#[tokio::test]
async fn gemini_turn_echoes_ids_only_when_given() {
    let registry = registry(&Ran::default());
    let outcome = turn(&registry, Provider::Gemini)
        .run_response(&fixture("gemini"))
        .await
        .unwrap();
    let parts = &outcome.messages[0]["parts"];
    assert_eq!(outcome.messages[0]["role"], "user");
    assert_eq!(
        parts[0],
        json!({"functionResponse": {"id": "fc-echo-a", "name": "echo", "response": {"output": "alpha"}}})
    );
    assert_eq!(
        parts[1],
        json!({"functionResponse": {"name": "picture", "response": {"output": "a red dot"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": RED_DOT_PNG}}]}})
    );
    assert_eq!(
        parts[2],
        json!({"functionResponse": {"id": "fc-fail", "name": "fail", "response": {"error": "Error: disk full"}}})
    );
    assert_eq!(
        parts[3],
        json!({"functionResponse": {"name": "teleport", "response": {"error": "Error: unknown tool \"teleport\""}}})
    );
    assert_eq!(
        outcome.messages[1],
        json!({"role": "user", "parts": [{"text": "note: lint ran"}]})
    );
}

#[tokio::test]
async fn a_turn_without_contexts_is_one_message_for_anthropic_and_gemini() {
    let registry = registry(&Ran::default());
    let response = json!({"content": [{"type": "tool_use", "id": "t1", "name": "echo", "input": {"text": "x"}}]});
    let outcome = turn(&registry, Provider::Anthropic)
        .run_response(&response)
        .await
        .unwrap();
    assert_eq!(
        outcome.to_wire(),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]})
    );
    let empty = turn(&registry, Provider::Gemini)
        .run_response(
            &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}}]}),
        )
        .await
        .unwrap();
    assert_eq!(empty.to_wire(), json!([]));
}

#[tokio::test]
async fn streams_accumulate_into_the_same_calls() {
    let mut chat = ChatStream::new();
    for chunk in fixture("openai-chat-stream").as_array().unwrap() {
        chat.push(chunk).unwrap();
    }
    let calls = chat.finish().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].arguments,
        CallArguments::Json(json!({"text": "streamed"}))
    );
    assert_eq!(
        calls[1].arguments,
        CallArguments::Malformed("EOF while parsing a string at line 1 column 14".into())
    );

    let mut anthropic = AnthropicStream::new();
    for event in fixture("anthropic-stream").as_array().unwrap() {
        anthropic.push(event).unwrap();
    }
    let calls = anthropic.finish().unwrap();
    assert_eq!(calls[0].id.as_deref(), Some("toolu_s_echo"));
    assert_eq!(
        calls[0].arguments,
        CallArguments::Json(json!({"text": "streamed"}))
    );
    let registry = registry(&Ran::default());
    let outcome = turn(&registry, Provider::Anthropic).run(calls).await;
    assert_eq!(
        outcome.messages[0]["content"][1],
        json!({"type": "tool_result", "tool_use_id": "toolu_s_fail", "is_error": true,
            "content": "Error: invalid arguments: arguments are not valid JSON: EOF while parsing a string at line 1 column 14"})
    );
}

#[tokio::test]
async fn parallel_safe_calls_of_a_turn_overlap() {
    // Two calls that each wait for the other: they finish only if their bodies overlap.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let registry = ToolRegistry::new();
    let tool = ToolDefinition::builder("meet")
        .description("Wait for the other call.")
        .concurrency_safe(true)
        .execute(move |_, _| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok(json!("met"))
            }
        })
        .build()
        .unwrap();
    registry.register(tool).unwrap().keep();
    let response = json!({"output": [
        {"type": "function_call", "call_id": "a", "name": "meet", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "meet", "arguments": "{}"}
    ]});
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        ProviderTurn::new(&registry, Provider::OpenAiResponses).run_response(&response),
    )
    .await
    .expect("the two parallel-safe calls ran one after the other")
    .unwrap();
    assert_eq!(outcome.messages[1]["output"], "met");
}

#[tokio::test]
async fn strict_restoration_can_be_turned_off() {
    let registry = registry(&Ran::default());
    let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"a\",\"repeat\":null}"}}
    ]}}]});
    let outcome = ProviderTurn::new(&registry, Provider::OpenAiChat)
        .strict_tools(None)
        .run_response(&response)
        .await
        .unwrap();
    assert_eq!(
        outcome.messages[0]["content"],
        "Error: invalid arguments: \"repeat\" must be an integer"
    );
}

#[test]
fn bad_shapes_name_the_field() {
    let cases = [
        (
            Provider::OpenAiChat,
            json!({"object": "chat.completion"}),
            "not an OpenAI Chat Completions response: choices is missing",
        ),
        (
            Provider::OpenAiChat,
            json!({"choices": []}),
            "not an OpenAI Chat Completions response: choices is empty",
        ),
        (
            Provider::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "type": "function", "function": {"name": "x", "arguments": {}}}]}}]}),
            "not an OpenAI Chat Completions response: choices[0].message.tool_calls[0].function.arguments must be a string, got object",
        ),
        (
            Provider::OpenAiResponses,
            json!({"output": [{"type": "function_call", "call_id": "a", "arguments": "{}"}]}),
            "not an OpenAI Responses response: output[0].name is missing",
        ),
        (
            Provider::Anthropic,
            json!({"content": [{"type": "tool_use", "id": "a", "name": "x", "input": "{}"}]}),
            "not an Anthropic Messages response: content[0].input must be an object, got string",
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}),
            "not a Gemini generateContent response: candidates[0].content.parts[0].functionCall.name is missing",
        ),
        (
            Provider::Gemini,
            json!([1]),
            "not a Gemini generateContent response: the body must be an object, got array",
        ),
        // A value quoted from the body stays on the message's one line (found by fuzzing).
        (
            Provider::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "type": "fu\nction"}]}}]}),
            "not an OpenAI Chat Completions response: choices[0].message.tool_calls[0].type is \"fu\\nction\": only \"function\" tool calls can run",
        ),
    ];
    for (provider, body, message) in cases {
        let err = parse_calls(provider, &body).unwrap_err();
        assert_eq!(err.to_string(), message);
        assert_eq!(err.code(), "PROVIDER_SHAPE");
    }
}

#[test]
fn duplicate_call_ids_are_refused() {
    let body = json!({"content": [
        {"type": "tool_use", "id": "t1", "name": "echo", "input": {}},
        {"type": "tool_use", "id": "t1", "name": "echo", "input": {}}
    ]});
    let err = parse_calls(Provider::Anthropic, &body).unwrap_err();
    assert!(matches!(err, ProviderError::DuplicateCallId { ref id, .. } if id == "t1"));
    assert_eq!(
        err.to_string(),
        "Anthropic Messages response has two tool calls with id \"t1\" (content[1]): results could not be paired with their calls"
    );
    let body = json!({"content": [
        {"type": "tool_use", "id": "t\r\n1", "name": "echo", "input": {}},
        {"type": "tool_use", "id": "t\r\n1", "name": "echo", "input": {}}
    ]});
    let err = parse_calls(Provider::Anthropic, &body).unwrap_err();
    assert!(
        err.to_string().contains(r#"with id "t\r\n1" (content[1])"#),
        "{err}"
    );
}

#[test]
fn stream_events_out_of_place_are_errors() {
    let mut stream = AnthropicStream::new();
    let err = stream
        .push(&json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{"}}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad Anthropic Messages stream event: input_json_delta for content block 3, which is not a tool_use block"
    );
    let mut chat = ChatStream::new();
    chat.push(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}))
        .unwrap();
    assert_eq!(
        chat.finish().unwrap_err().to_string(),
        "bad OpenAI Chat Completions stream event: tool call 0 never received its \"id\""
    );
    let mut stream = AnthropicStream::new();
    let err = stream
        .push(&json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded\ntry later"}}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad Anthropic Messages stream event: the stream reported an error: \"Overloaded\\ntry later\""
    );
}

/// Every provider's response with the same two calls: `note` (defers a context) and `echo`.
fn note_then_echo(provider: Provider) -> Value {
    match provider {
        Provider::OpenAiChat => {
            json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "c_note", "type": "function", "function": {"name": "note", "arguments": "{\"text\":\"lint ran\"}"}},
                {"id": "c_echo", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"alpha\"}"}}
            ]}}]})
        }
        Provider::OpenAiResponses => json!({"output": [
            {"type": "function_call", "call_id": "c_note", "name": "note", "arguments": "{\"text\":\"lint ran\"}"},
            {"type": "function_call", "call_id": "c_echo", "name": "echo", "arguments": "{\"text\":\"alpha\"}"}
        ]}),
        Provider::Anthropic => json!({"content": [
            {"type": "tool_use", "id": "c_note", "name": "note", "input": {"text": "lint ran"}},
            {"type": "tool_use", "id": "c_echo", "name": "echo", "input": {"text": "alpha"}}
        ]}),
        Provider::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "c_note", "name": "note", "args": {"text": "lint ran"}}},
            {"functionCall": {"id": "c_echo", "name": "echo", "args": {"text": "alpha"}}}
        ]}}]}),
    }
}

/// The text of a context message in `provider`'s shape.
fn context_text(provider: Provider, message: &Value) -> String {
    let text = match provider {
        Provider::OpenAiChat => &message["content"],
        Provider::OpenAiResponses => &message["content"][0]["text"],
        Provider::Anthropic => &message["content"][0]["text"],
        Provider::Gemini => &message["parts"][0]["text"],
    };
    text.as_str()
        .unwrap_or_else(|| panic!("{provider}: not a context message: {message}"))
        .to_owned()
}

#[tokio::test]
async fn post_execute_contexts_follow_all_results_in_every_shape() {
    let registry = registry(&Ran::default());
    // A post-execute policy that attaches a context to every call.
    registry
        .on_post_execute(post_execute_fn(|exec, _, _| async move {
            PostToolDecision::Accept {
                content: None,
                additional_contexts: vec![ContextMessage {
                    content: vec![ContentBlock::text(format!("policy: checked {}", exec.name))],
                    source: None,
                }],
            }
        }))
        .keep();
    for provider in Provider::ALL {
        let outcome = turn(&registry, provider)
            .run_response(&note_then_echo(provider))
            .await
            .unwrap();
        // The results: one message per call for the OpenAI forms, one message for the others.
        let results = if provider.sends_list() { 2 } else { 1 };
        let contexts: Vec<String> = outcome.messages[results..]
            .iter()
            .map(|m| context_text(provider, m))
            .collect();
        // After all results, in call order: the tool's deferred context, then the policy's.
        assert_eq!(
            contexts,
            [
                "note: lint ran",
                "policy: checked note",
                "policy: checked echo"
            ],
            "{provider}: {:?}",
            outcome.messages
        );
    }
}

#[test]
fn duplicate_call_ids_are_refused_in_every_shape() {
    let bodies = [
        (
            Provider::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [
                {"id": "same", "type": "function", "function": {"name": "echo", "arguments": "{}"}},
                {"id": "same", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
            ]}}]}),
            "choices[0].message.tool_calls[1]",
        ),
        (
            Provider::OpenAiResponses,
            json!({"output": [
                {"type": "function_call", "call_id": "same", "name": "echo", "arguments": "{}"},
                {"type": "function_call", "call_id": "same", "name": "echo", "arguments": "{}"}
            ]}),
            "output[1]",
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"content": {"parts": [
                {"functionCall": {"id": "same", "name": "echo", "args": {}}},
                {"functionCall": {"id": "same", "name": "echo", "args": {}}}
            ]}}]}),
            "candidates[0].content.parts[1]",
        ),
    ];
    for (provider, body, place) in bodies {
        let err = parse_calls(provider, &body).unwrap_err();
        assert!(
            matches!(err, ProviderError::DuplicateCallId { ref id, .. } if id == "same"),
            "{provider}: {err}"
        );
        assert!(err.to_string().contains(place), "{provider}: {err}");
    }
    // Gemini calls without ids are paired by position: two of them are not duplicates.
    let unnamed = json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "echo", "args": {}}},
        {"functionCall": {"name": "echo", "args": {}}}
    ]}}]});
    assert_eq!(parse_calls(Provider::Gemini, &unnamed).unwrap().len(), 2);
}

#[tokio::test]
async fn mcp_shaped_images_travel_as_images() {
    // A tool that relays MCP content: an image block in MCP's own shape.
    let registry = ToolRegistry::new();
    let relay = ToolDefinition::builder("relay")
        .description("Relay an MCP image.")
        .render(|_, _| {
            let block = json!({"type": "image", "data": RED_DOT_PNG, "mimeType": "image/png"});
            vec![ContentBlock::Unknown(block.as_object().unwrap().clone())]
        })
        .execute(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap();
    registry.register(relay).unwrap().keep();
    let response =
        json!({"content": [{"type": "tool_use", "id": "t1", "name": "relay", "input": {}}]});
    let outcome = ProviderTurn::new(&registry, Provider::Anthropic)
        .run_response(&response)
        .await
        .unwrap();
    assert_eq!(
        outcome.to_wire(),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": RED_DOT_PNG}}
        ]}]})
    );
}
