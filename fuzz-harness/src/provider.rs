//! Provider turns: the four response parsers, the two stream accumulators, and the turn that runs
//! what they parse and renders the results (`docs/CONTRACTS.md`, "Provider turns").
//!
//! Input: a selector byte, then JSON text. The selector's low two bits pick the provider
//! ([`Provider::ALL`]); its third bit reads the JSON as a response body (clear) or, for OpenAI
//! Chat Completions and Anthropic, as an array of stream events (set).
//!
//! Properties: parsing and accumulating are total; a refusal is one line that names the
//! provider, with a stable code; accepted calls have ids (all but Gemini's), never two alike;
//! arguments text that does not parse is kept with its call and names a line and column. The
//! turn is total: one result per call, `INVALID_ARGS` for each malformed call, and the rendered
//! messages pair every call's id, in call order.

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionResult;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::provider::{
    AnthropicStream, CallArguments, ChatStream, Provider, ProviderCall, ProviderError,
    ProviderTurn, parse_calls,
};
use serde_json::{Value, json};

/// Calls run per input: a turn with more is only parsed (bounds the time of one input).
const MAX_RUN_CALLS: usize = 32;

/// The provider-turns target. Input: a selector byte, then JSON text (see the module docs).
pub fn provider_turns(data: &[u8]) {
    let _ = turn_of(data);
}

/// What one input came to.
#[derive(Debug, PartialEq, Eq)]
enum Reached {
    /// Not a selector and JSON.
    Nothing,
    /// Refused, with this code.
    Refused(&'static str),
    /// Parsed into this many calls (run when at most [`MAX_RUN_CALLS`]).
    Calls(usize),
}

fn turn_of(data: &[u8]) -> Reached {
    let Some((&selector, payload)) = data.split_first() else {
        return Reached::Nothing;
    };
    let Ok(value) = serde_json::from_slice::<Value>(payload) else {
        return Reached::Nothing;
    };
    let provider = Provider::ALL[usize::from(selector % 4)];
    let streamed = selector & 4 != 0;
    let parsed = match (streamed, provider) {
        (true, Provider::OpenAiChat) => accumulate_chat(&value),
        (true, Provider::Anthropic) => accumulate_anthropic(&value),
        _ => parse_calls(provider, &value),
    };
    let calls = match parsed {
        Ok(calls) => calls,
        Err(error) => {
            check_refusal(provider, &error);
            return Reached::Refused(error.code());
        }
    };
    check_calls(provider, &calls);
    let count = calls.len();
    if count <= MAX_RUN_CALLS {
        run_turn(provider, calls);
    }
    Reached::Calls(count)
}

/// The events of `value` (an array; anything else is not a stream) pushed one by one.
fn accumulate_chat(value: &Value) -> Result<Vec<ProviderCall>, ProviderError> {
    let mut stream = ChatStream::new();
    for event in value.as_array().map(Vec::as_slice).unwrap_or_default() {
        stream.push(event)?;
    }
    stream.finish()
}

fn accumulate_anthropic(value: &Value) -> Result<Vec<ProviderCall>, ProviderError> {
    let mut stream = AnthropicStream::new();
    for event in value.as_array().map(Vec::as_slice).unwrap_or_default() {
        stream.push(event)?;
    }
    stream.finish()
}

/// A refusal is one line naming the provider, with one of the stable codes.
fn check_refusal(provider: Provider, error: &ProviderError) {
    let message = error.to_string();
    assert!(
        !message.is_empty() && !message.contains(['\n', '\r']),
        "not one line: {message:?}"
    );
    assert!(
        message.contains(provider.display_name()),
        "the message does not name {provider}: {message}"
    );
    assert!(
        matches!(
            error.code(),
            "PROVIDER_SHAPE" | "DUPLICATE_CALL_ID" | "PROVIDER_STREAM"
        ),
        "unexpected code {}",
        error.code()
    );
}

/// Accepted calls: ids where the provider requires them, never two alike; malformed arguments
/// name a line and column.
fn check_calls(provider: Provider, calls: &[ProviderCall]) {
    let mut ids = std::collections::HashSet::new();
    for call in calls {
        match &call.id {
            Some(id) => assert!(ids.insert(id.as_str()), "two calls with id {id:?}"),
            None => assert_eq!(provider, Provider::Gemini, "{provider}: a call without id"),
        }
        if let CallArguments::Malformed(error) = &call.arguments {
            assert!(
                error.contains(" line ") && error.contains(" column "),
                "no position in {error:?}"
            );
        }
    }
}

/// `echo` (parallel-safe, an optional integer that strict mode may send as `null`) and `fail`.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let echo = ToolDefinition::builder("echo")
        .description("Echo the text.")
        .parameters_json(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "repeat": {"type": "integer", "minimum": 1, "maximum": 3}},
            "required": ["text"],
            "additionalProperties": false
        }))
        .concurrency_safe(true)
        .execute(|args, _| async move {
            let text = args["text"].as_str().unwrap_or_default();
            let repeat = args.get("repeat").and_then(Value::as_u64).unwrap_or(1);
            Ok(json!(text.repeat(repeat as usize)))
        })
        .build()
        .expect("a valid tool");
    let fail = ToolDefinition::builder("fail")
        .description("Fail.")
        .execute(|_, _| async { Err(dsh_tools::ToolError::msg("always fails")) })
        .build()
        .expect("a valid tool");
    for tool in [echo, fail] {
        registry.register(tool).expect("registered").keep();
    }
    registry
}

/// Runs the calls as one turn and checks the results and their pairing.
fn run_turn(provider: Provider, calls: Vec<ProviderCall>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let registry = registry();
    let outcome = runtime.block_on(ProviderTurn::new(&registry, provider).run(calls));
    assert_eq!(
        outcome.results.len(),
        outcome.calls.len(),
        "one result per call"
    );
    for (call, result) in outcome.calls.iter().zip(&outcome.results) {
        if matches!(call.arguments, CallArguments::Malformed(_)) {
            assert_eq!(code(result).as_deref(), Some("INVALID_ARGS"), "{result:?}");
        }
        if matches!(call.arguments, CallArguments::Json(_))
            && registry.get(&call.name, None).is_none()
        {
            assert_eq!(code(result).as_deref(), Some("UNKNOWN_TOOL"), "{result:?}");
        }
    }
    check_pairing(provider, &outcome.calls, &outcome.messages);
    // The document to send back is JSON that reads back as itself.
    let wire = outcome.to_wire();
    let text = serde_json::to_string(&wire).expect("serializable");
    assert_eq!(serde_json::from_str::<Value>(&text).expect("JSON"), wire);
}

fn code(result: &ToolExecutionResult) -> Option<String> {
    result
        .error()
        .and_then(|e| e.info())
        .map(|i| i.code.to_string())
}

/// Every call's reply carries its id, in call order (Gemini: its name, and its id when it had
/// one).
fn check_pairing(provider: Provider, calls: &[ProviderCall], messages: &[Value]) {
    if calls.is_empty() {
        assert!(messages.is_empty(), "an empty turn renders nothing");
        return;
    }
    for (i, call) in calls.iter().enumerate() {
        let id = call.id.as_deref().map(Value::from);
        let (paired, expected) = match provider {
            Provider::OpenAiChat => (&messages[i]["tool_call_id"], id),
            Provider::OpenAiResponses => (&messages[i]["call_id"], id),
            Provider::Anthropic => (&messages[0]["content"][i]["tool_use_id"], id),
            Provider::Gemini => {
                let response = &messages[0]["parts"][i]["functionResponse"];
                assert_eq!(response["name"], call.name.as_str(), "{provider} reply {i}");
                (&response["id"], id.or(Some(Value::Null)))
            }
        };
        assert_eq!(Some(paired), expected.as_ref(), "{provider} reply {i}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(selector: u8, value: &Value) -> Vec<u8> {
        let mut input = vec![selector];
        input.extend(value.to_string().bytes());
        input
    }

    /// Hand-written inputs reach every branch: refusals of each kind, accepted calls, both
    /// streams, and runs with each kind of result.
    #[test]
    fn the_properties_hold_on_hand_written_inputs() {
        let chat = json!({"choices": [{"message": {"tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"x\",\"repeat\":null}"}},
            {"id": "b", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":"}},
            {"id": "c", "type": "function", "function": {"name": "teleport", "arguments": ""}},
            {"id": "d", "type": "function", "function": {"name": "fail", "arguments": "{}"}}
        ]}}]});
        assert_eq!(turn_of(&input(0, &chat)), Reached::Calls(4));
        let gemini = json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "echo", "args": {"text": "y"}}},
            {"functionCall": {"id": "g", "name": "fail", "args": {}}}
        ]}}]});
        assert_eq!(turn_of(&input(3, &gemini)), Reached::Calls(2));
        assert_eq!(
            turn_of(&input(2, &json!({"content": 5}))),
            Reached::Refused("PROVIDER_SHAPE")
        );
        let twice = json!({"output": [
            {"type": "function_call", "call_id": "s", "name": "echo", "arguments": "{}"},
            {"type": "function_call", "call_id": "s", "name": "echo", "arguments": "{}"}
        ]});
        assert_eq!(
            turn_of(&input(1, &twice)),
            Reached::Refused("DUPLICATE_CALL_ID")
        );
        let events = json!([
            {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "echo", "input": {}}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"text\":\"z\"}"}}
        ]);
        assert_eq!(turn_of(&input(6, &events)), Reached::Calls(1));
        let chunks = json!([{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}]);
        assert_eq!(
            turn_of(&input(4, &chunks)),
            Reached::Refused("PROVIDER_STREAM")
        );
        assert_eq!(turn_of(b"\x00not json"), Reached::Nothing);
    }

    #[test]
    #[should_panic(expected = "a call without id")]
    fn a_call_without_id_outside_gemini_is_a_finding() {
        let calls = [ProviderCall {
            id: None,
            name: "echo".into(),
            arguments: CallArguments::Json(json!({})),
        }];
        check_calls(Provider::Anthropic, &calls);
    }
}
