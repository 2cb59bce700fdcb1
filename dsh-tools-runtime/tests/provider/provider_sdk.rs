//! Provider turns checked against the providers' own SDK types (`openai`, `anthropic`,
//! `google-genai`, pinned and installed into a venv by `scripts/test`; the interpreter is
//! `DSH_PROVIDER_PYTHON`). The fixture responses and stream events parse with the SDKs'
//! response types (so they are known-true shapes), and every message a turn renders validates
//! with the SDKs' request types and survives that validation unchanged.
//!
//! A missing interpreter fails the test when `CI` is set, and skips it otherwise.

#![cfg(feature = "provider")]

use crate::kit;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use dsh_tools_runtime::provider::{AnthropicStream, ChatStream, Provider, ProviderTurn};
use kit::{Ran, Store, fixture, registry};
use serde_json::{Value, json};

fn python() -> Option<PathBuf> {
    let python = std::env::var_os("DSH_PROVIDER_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/pyenv/provider-sdks/bin/python")
        });
    let ok = Command::new(&python)
        .args(["-c", "import openai, anthropic, google.genai"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let message = format!(
        "the provider SDKs (openai, anthropic, google-genai) are not importable by {} — run \
         scripts/test (which installs them) or point DSH_PROVIDER_PYTHON at a Python that has them",
        python.display()
    );
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{message}");
    }
    eprintln!("skipped: {message}");
    None
}

fn case(name: String, provider: Provider, kind: &str, value: Value) -> Value {
    json!({"name": name, "provider": provider.as_str(), "kind": kind, "value": value})
}

/// Runs the validator; returns the names of the cases it reported invalid.
fn invalid_cases(python: &Path, cases: &[Value]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_vec(cases).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/provider/validate.py");
    let output = Command::new(python)
        .arg(&script)
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains(" valid, "),
        "the validator did not run:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("FAIL "))
        .map(|rest| rest.split(' ').next().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn fixtures_and_rendered_turns_match_the_provider_sdks() {
    let Some(python) = python() else { return };
    let registry = registry(&Ran::default());
    let mut cases = Vec::new();
    for provider in Provider::ALL {
        let response = fixture(provider.as_str());
        cases.push(case(
            format!("{provider}-response"),
            provider,
            "response",
            response.clone(),
        ));
        let outcome = ProviderTurn::new(&registry, provider)
            .images(Arc::new(Store))
            .run_response(&response)
            .await
            .unwrap();
        // Every kind of result is in the fixtures: success, image, malformed, failure, unknown
        // tool, and a deferred context.
        assert!(
            outcome.messages.len() >= 2,
            "{provider}: {:?}",
            outcome.messages
        );
        for (i, message) in outcome.messages.iter().enumerate() {
            cases.push(case(
                format!("{provider}-message-{i}"),
                provider,
                "message",
                message.clone(),
            ));
        }
        // Without an image source the image is a text line, which validates too.
        let textual = ProviderTurn::new(&registry, provider)
            .run_response(&response)
            .await
            .unwrap();
        for (i, message) in textual.messages.iter().enumerate() {
            cases.push(case(
                format!("{provider}-textual-{i}"),
                provider,
                "message",
                message.clone(),
            ));
        }
    }
    let mut chat = ChatStream::new();
    for (i, chunk) in fixture("openai-chat-stream")
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        cases.push(case(
            format!("openai-chat-chunk-{i}"),
            Provider::OpenAiChat,
            "chunk",
            chunk.clone(),
        ));
        chat.push(chunk).unwrap();
    }
    let outcome = ProviderTurn::new(&registry, Provider::OpenAiChat)
        .run(chat.finish().unwrap())
        .await;
    for (i, message) in outcome.messages.iter().enumerate() {
        cases.push(case(
            format!("openai-chat-streamed-{i}"),
            Provider::OpenAiChat,
            "message",
            message.clone(),
        ));
    }
    let mut anthropic = AnthropicStream::new();
    for (i, event) in fixture("anthropic-stream")
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        cases.push(case(
            format!("anthropic-event-{i}"),
            Provider::Anthropic,
            "event",
            event.clone(),
        ));
        anthropic.push(event).unwrap();
    }
    let outcome = ProviderTurn::new(&registry, Provider::Anthropic)
        .run(anthropic.finish().unwrap())
        .await;
    for (i, message) in outcome.messages.iter().enumerate() {
        cases.push(case(
            format!("anthropic-streamed-{i}"),
            Provider::Anthropic,
            "message",
            message.clone(),
        ));
    }
    // Controls: shapes each SDK must refuse, so a validator that accepts anything fails here.
    let controls = [
        case(
            "control-chat".into(),
            Provider::OpenAiChat,
            "message",
            json!({"role": "tool", "content": "x"}),
        ),
        case(
            "control-responses".into(),
            Provider::OpenAiResponses,
            "message",
            json!({"type": "function_call_output", "call_id": "c", "output": "x", "is_error": true}),
        ),
        case(
            "control-anthropic".into(),
            Provider::Anthropic,
            "message",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "error": true}]}),
        ),
        case(
            "control-gemini".into(),
            Provider::Gemini,
            "message",
            json!({"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {}, "callId": "c"}}]}),
        ),
        case(
            "control-response".into(),
            Provider::Anthropic,
            "response",
            json!({"content": []}),
        ),
    ];
    cases.extend(controls.iter().cloned());
    let invalid = invalid_cases(&python, &cases);
    let expected: Vec<String> = controls
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(invalid, expected, "only the controls may be invalid");
}
