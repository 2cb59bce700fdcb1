//! A complete agent loop over OpenAI Chat Completions: the model's tool calls run through the
//! registry as one batch per turn, the results go back as `tool` messages, until the model
//! answers without calling a tool.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example agent_loop            # against a scripted model
//! OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_MODEL=my-model \
//!   cargo run -p dsh-tools-examples --example agent_loop -- "What is 17 * 23 + 4?"
//! ```
//!
//! Without `OPENAI_BASE_URL` the model is a recording: three responses in the exact shape the
//! API returns (two parallel calls, one call, a final answer). With it, the same loop talks to
//! any OpenAI-compatible endpoint (`OPENAI_API_KEY` is sent when set) through `curl`.

use std::io::Write as _;
use std::process::{Command, Stdio};

use dsh_tools::tool;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::dialect::{Dialect, DialectOptions};
use dsh_tools_runtime::provider::{Provider, ProviderTurn};
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

/// Add two integers.
#[tool(concurrency_safe = true, read_only)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> Result<i64, String> {
    a.checked_add(b)
        .ok_or_else(|| "the sum overflows".to_owned())
}

/// The model: a recording, or an OpenAI-compatible endpoint.
enum Model {
    Scripted(std::vec::IntoIter<Value>),
    Endpoint { base_url: String, model: String },
}

impl Model {
    fn complete(&mut self, messages: &[Value], tools: &[Value]) -> Value {
        match self {
            Self::Scripted(responses) => responses.next().expect("the recording has a response"),
            Self::Endpoint { base_url, model } => {
                let body = json!({"model": model, "messages": messages, "tools": tools});
                let mut curl = Command::new("curl");
                curl.args(["-sS", "-X", "POST", &format!("{base_url}/chat/completions")])
                    .args([
                        "-H",
                        "Content-Type: application/json",
                        "--data-binary",
                        "@-",
                    ]);
                if let Ok(key) = std::env::var("OPENAI_API_KEY") {
                    curl.args(["-H", &format!("Authorization: Bearer {key}")]);
                }
                let mut child = curl
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("curl runs");
                let mut stdin = child.stdin.take().expect("a stdin pipe");
                stdin
                    .write_all(body.to_string().as_bytes())
                    .expect("the request is sent");
                drop(stdin);
                let output = child.wait_with_output().expect("curl finishes");
                serde_json::from_slice(&output.stdout).expect("the endpoint answers JSON")
            }
        }
    }
}

/// One recorded Chat Completions response.
fn recorded(id: &str, message: Value) -> Value {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    json!({"id": id, "object": "chat.completion", "created": 1_741_570_283, "model": "scripted",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}]})
}

fn call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn scripted() -> Model {
    Model::Scripted(
        vec![
            recorded(
                "r1",
                json!({"role": "assistant", "content": null, "tool_calls": [
                    call("call_1", "multiply", "{\"a\": 17, \"b\": 23}"),
                    call("call_2", "multiply", "{\"a\": 2, \"b\": 2}"),
                ]}),
            ),
            recorded(
                "r2",
                json!({"role": "assistant", "content": null, "tool_calls": [
                    call("call_3", "add", "{\"a\": 391, \"b\": 4}"),
                ]}),
            ),
            recorded(
                "r3",
                json!({"role": "assistant", "content": "17 * 23 + 4 = 395."}),
            ),
        ]
        .into_iter(),
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    for tool in [multiply::definition(), add::definition()] {
        registry
            .register(tool.expect("a valid tool"))
            .expect("the tools register")
            .keep();
    }
    let tools = registry
        .schemas_in(None, Dialect::OpenAiStrict, &DialectOptions::default())
        .expect("the tools render for OpenAI");
    let mut model = match std::env::var("OPENAI_BASE_URL") {
        Ok(base_url) => Model::Endpoint {
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into()),
        },
        Err(_) => scripted(),
    };
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What is 17 * 23 + 4?".into());
    let mut messages = vec![json!({"role": "user", "content": question})];
    let turn = ProviderTurn::new(&registry, Provider::OpenAiChat);
    for step in 1..=8 {
        let response = model.complete(&messages, &tools);
        let outcome = turn
            .run_response(&response)
            .await
            .expect("a Chat Completions response");
        let assistant = response["choices"][0]["message"].clone();
        messages.push(assistant.clone());
        if outcome.calls.is_empty() {
            println!(
                "answer: {}",
                assistant["content"].as_str().unwrap_or_default()
            );
            return;
        }
        for (call, result) in outcome.calls.iter().zip(&outcome.results) {
            let shown = result
                .content()
                .first()
                .and_then(|b| b.as_text())
                .unwrap_or_default();
            println!(
                "step {step}: {}({}) -> {shown}",
                call.name,
                match &call.arguments {
                    dsh_tools_runtime::provider::CallArguments::Json(args) => args.to_string(),
                    dsh_tools_runtime::provider::CallArguments::Malformed(e) => format!("<{e}>"),
                }
            );
        }
        messages.extend(outcome.messages);
    }
    println!("no answer after 8 steps");
}
