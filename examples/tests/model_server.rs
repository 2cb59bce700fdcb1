//! A real model server in the loop: llama.cpp's OpenAI-compatible `llama-server` serving
//! SmolLM2-135M-Instruct (`scripts/model-server`, which `scripts/test` starts on loopback and
//! exports as `DSH_TEST_MODEL_URL`).
//!
//! The model is tiny, so the test asserts the protocol, not its cleverness: over at least 20 turns,
//! native and Code Mode, streamed and not, every request we send (our tool messages included) is
//! accepted, every tool call the server returns runs through the registry's pipeline exactly once,
//! a call whose arguments the pipeline refuses goes back to the model as the validation text, and
//! the streamed calls our accumulator builds are the calls the chunks carry. The transcript's shape
//! is printed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::tool;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::dialect::{Dialect, DialectOptions};
use dsh_tools_runtime::provider::{
    CallArguments, ChatStream, Provider, ProviderCall, ProviderTurn, TurnOutcome,
};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};

/// Multiply two integers.
#[tool(concurrency_safe = true, read_only)]
async fn multiply(
    /// The first factor.
    a: i64,
    /// The second factor.
    b: i64,
) -> Result<i64, String> {
    a.checked_mul(b)
        .ok_or_else(|| "the product overflows".to_owned())
}

/// The weather forecast of a city, for one to seven days.
#[tool(concurrency_safe = true, read_only)]
async fn forecast(
    /// The city, e.g. "Paris".
    city: String,
    /// How many days to forecast.
    #[schema(range(1..=7))]
    days: u8,
) -> String {
    format!("{city}: sunny for the next {days} day(s)")
}

/// The server's URL, or `None` (the reason printed) outside CI when it is not running.
fn model_url() -> Option<String> {
    match std::env::var("DSH_TEST_MODEL_URL") {
        Ok(url) => Some(url.trim_end_matches('/').to_owned()),
        Err(_) => {
            let message = "DSH_TEST_MODEL_URL is not set: start the model server with \
                           `eval \"$(scripts/model-server start)\"` (scripts/test does)";
            assert!(std::env::var_os("CI").is_none(), "{message}");
            eprintln!("skipped: {message}");
            None
        }
    }
}

/// Every execution the pipeline finished: the tool's name and whether it failed, with its code.
#[derive(Default)]
struct Executions(Mutex<Vec<(String, Option<String>)>>);

impl Executions {
    fn take(&self) -> Vec<(String, Option<String>)> {
        std::mem::take(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

fn registry(mode: PresentationMode) -> (ToolRegistry, Arc<Executions>) {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    for tool in [multiply::definition(), forecast::definition()] {
        registry
            .register(tool.expect("a valid tool"))
            .expect("the tools register")
            .keep();
    }
    if mode == PresentationMode::Code {
        let runtime = QuickJsRuntime::new(QuickJsConfig::default()).expect("QuickJS starts");
        CodeMode::new(Arc::new(runtime))
            .install(&registry)
            .expect("Code Mode installs");
    }
    let executions = Arc::new(Executions::default());
    let seen = executions.clone();
    registry
        .on_result(move |exec, result| {
            let code = result
                .error()
                .and_then(|e| e.info())
                .map(|info| info.code.to_string());
            seen.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((exec.name.to_string(), code));
        })
        .keep();
    (registry, executions)
}

/// One example exchange the model is shown before the question. Its tool message is ours: the
/// example call runs through the pipeline and [`ProviderTurn`] renders the result, so every
/// request carries a tool message of our rendering for the server to accept.
async fn example_exchange(mode: PresentationMode, turn: &ProviderTurn) -> Vec<Value> {
    let (name, arguments) = match mode {
        PresentationMode::Code => (
            "run_code",
            json!({"code": "return await tools.multiply({ a: 6, b: 7 });",
                   "description": "Multiply 6 by 7"}),
        ),
        _ => ("multiply", json!({"a": 6, "b": 7})),
    };
    let call = ProviderCall {
        id: Some("example_1".into()),
        name: name.into(),
        arguments: CallArguments::Json(arguments.clone()),
    };
    let rendered = turn.run(vec![call]).await;
    assert!(
        !rendered.results[0].is_error(),
        "the example call runs: {:?}",
        rendered.results[0]
    );
    let mut messages = vec![
        json!({"role": "system", "content": "You are a helpful assistant. Use the tools."}),
        json!({"role": "user", "content": "What is 6 times 7?"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "example_1",
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]}),
    ];
    messages.extend(rendered.messages);
    messages.push(json!({"role": "assistant", "content": "6 times 7 is 42."}));
    messages
}

/// What one request to the server produced.
struct Reply {
    /// The assistant message to append to the conversation.
    message: Value,
    outcome: TurnOutcome,
}

struct Conversation<'a> {
    http: &'a reqwest::Client,
    url: &'a str,
    turn: ProviderTurn,
    tools: Vec<Value>,
    messages: Vec<Value>,
    stream: bool,
}

impl Conversation<'_> {
    async fn post(&self) -> String {
        let body = json!({"model": "smollm2", "messages": self.messages, "tools": self.tools,
            "temperature": 0, "seed": 7, "max_tokens": 256, "stream": self.stream});
        let response = self
            .http
            .post(format!("{}/chat/completions", self.url))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("the model server answers");
        let status = response.status();
        let text = response.text().await.expect("the response body is read");
        assert!(
            status.is_success(),
            "the server refused our request ({status}): {text}\nmessages: {:#}",
            Value::Array(self.messages.clone())
        );
        text
    }

    async fn complete(&self) -> Reply {
        let text = self.post().await;
        if !self.stream {
            let response: Value = serde_json::from_str(&text).expect("a JSON completion");
            let outcome = self
                .turn
                .run_response(&response)
                .await
                .expect("a Chat Completions response we can read");
            let message = response["choices"][0]["message"].clone();
            return Reply { message, outcome };
        }
        let (message, calls) = accumulate_stream(&text);
        Reply {
            message,
            outcome: self.turn.run(calls).await,
        }
    }
}

/// Reads a streamed completion: the assistant message built from the chunks' deltas by hand, and
/// the calls our [`ChatStream`] accumulates from the same chunks (asserted to agree).
fn accumulate_stream(body: &str) -> (Value, Vec<ProviderCall>) {
    let mut stream = ChatStream::new();
    let mut content = String::new();
    let mut by_index: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if data.trim() == "[DONE]" {
            break;
        }
        let chunk: Value = serde_json::from_str(data).expect("a JSON chunk");
        stream.push(&chunk).expect("a chunk our accumulator reads");
        let delta = &chunk["choices"][0]["delta"];
        content.push_str(delta["content"].as_str().unwrap_or_default());
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let entry = by_index
                .entry(call["index"].as_u64().expect("a call index"))
                .or_default();
            entry.0.push_str(call["id"].as_str().unwrap_or_default());
            entry
                .1
                .push_str(call["function"]["name"].as_str().unwrap_or_default());
            entry
                .2
                .push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
    }
    let calls = stream.finish().expect("the stream's calls are complete");
    let by_hand: Vec<ProviderCall> = by_index
        .values()
        .map(|(id, name, arguments)| ProviderCall {
            id: Some(id.clone()),
            name: name.clone(),
            arguments: CallArguments::from_text(arguments),
        })
        .collect();
    assert_eq!(calls, by_hand, "ChatStream and the chunks disagree");
    let mut message = json!({"role": "assistant", "content": content});
    if !by_index.is_empty() {
        message["tool_calls"] = by_index
            .values()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": arguments}})
            })
            .collect();
    }
    (message, calls)
}

/// The tallies the transcript's shape is printed from.
#[derive(Default, Debug)]
struct Tally {
    turns: usize,
    calls: usize,
    refused: usize,
}

const QUESTIONS: &[&str] = &[
    "What is 12 times 9?",
    "What is the weather in Paris for the next 3 days?",
    "What is the weather in Oslo for the next 30 days?",
    "Multiply 123 by 4.",
    "What will the weather be in Rome tomorrow?",
    "What is 7 times 8?",
];

/// Runs one question to an answer (or four model turns), checking each turn's calls.
async fn converse(conversation: &mut Conversation<'_>, executions: &Executions, tally: &mut Tally) {
    for _ in 0..4 {
        let Reply { message, outcome } = conversation.complete().await;
        tally.turns += 1;
        conversation.messages.push(message);
        let ran = executions.take();
        assert_eq!(
            ran.len(),
            outcome.calls.len(),
            "every call the server returned ran through the pipeline once: {ran:?}"
        );
        for ((call, result), (name, code)) in outcome.calls.iter().zip(&outcome.results).zip(&ran) {
            tally.calls += 1;
            assert_eq!(&call.name, name, "the pipeline ran the call the model made");
            if code.as_deref() == Some("INVALID_ARGS") {
                tally.refused += 1;
                let text = result.content()[0].as_text().expect("a text block");
                let sent = outcome
                    .messages
                    .iter()
                    .find(|m| m["tool_call_id"].as_str() == call.id.as_deref())
                    .expect("a tool message answers the call");
                assert_eq!(
                    sent["content"].as_str(),
                    Some(text),
                    "the validation text goes back to the model"
                );
            }
        }
        if outcome.calls.is_empty() {
            return;
        }
        conversation.messages.extend(outcome.messages);
    }
}

#[tokio::test]
async fn a_real_model_server_drives_the_pipeline_native_and_code_streamed_and_not() {
    let Some(url) = model_url() else { return };
    // A fresh connection per request: llama-server closes kept-alive connections on its own
    // schedule, and a request sent on one it just closed fails with an incomplete message.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client");
    let mut shape = Vec::new();
    let mut total = Tally::default();
    for mode in [PresentationMode::Native, PresentationMode::Code] {
        let (registry, executions) = registry(mode);
        let tools = registry
            .schemas_in(None, Dialect::OpenAiStrict, &DialectOptions::default())
            .expect("the tools render for OpenAI");
        for stream in [false, true] {
            let mut tally = Tally::default();
            for question in QUESTIONS {
                let turn = ProviderTurn::new(&registry, Provider::OpenAiChat)
                    .strict_tools(Some(DialectOptions::default()));
                let mut messages = example_exchange(mode, &turn).await;
                executions.take();
                messages.push(json!({"role": "user", "content": question}));
                let mut conversation = Conversation {
                    http: &http,
                    url: &url,
                    turn,
                    tools: tools.clone(),
                    messages,
                    stream,
                };
                converse(&mut conversation, &executions, &mut tally).await;
            }
            shape.push(format!(
                "{mode:?} stream={stream}: {} turns, {} tool calls, {} refused as invalid",
                tally.turns, tally.calls, tally.refused
            ));
            total.turns += tally.turns;
            total.calls += tally.calls;
            total.refused += tally.refused;
        }
    }
    println!("transcript shape:\n  {}", shape.join("\n  "));
    // SmolLM2-135M answers these questions in text with this recipe (the template's tool
    // prompt and an example exchange): the calls it returns are checked when it returns any,
    // and every request carries our rendered tool message.
    assert!(total.turns >= 20, "at least 20 turns: {total:?}");
}
