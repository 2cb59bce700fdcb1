//! Our client answering a 2026-07-28 server's questions (multi round-trip requests, SEP-2322):
//! a tool served by our own streamable-HTTP server asks its caller; the importing registry's
//! input service answers each round and the call is retried with the answers and the state,
//! and the tool's side effect happens once. A server that never stops asking is cut off. Served
//! on by a host that imported it, the questions reach that host's own MCP client.
#![cfg(feature = "mcp")]
#![allow(
    deprecated,
    reason = "sampling and roots: deprecated by SEP-2577 in later revisions, still asked here"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::mcp_support;
use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    AskError, CallerInput, Elicited, InputKind, InputRequest, ToolExecutionInput, ToolRunContext,
};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ListRootsResult,
};
use dsh_tools_runtime::mcp::rmcp::service::{RequestContext, RoleClient};
use dsh_tools_runtime::mcp::rmcp::{ClientHandler, ErrorData};
use dsh_tools_runtime::mcp::{McpHttpServer, McpImport, McpServer};
use serde_json::{Value, json};

/// The served registry: `greet` asks a name, the model, the roots, then counts a greeting;
/// `ask_forever` asks one more question every time it runs.
fn served() -> (ToolRegistry, Arc<AtomicUsize>) {
    let registry = ToolRegistry::new();
    let greeted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&greeted);
    let greet = ToolDefinition::builder("greet")
        .description("Greet the user.")
        .execute(move |_, ctx| {
            let counter = Arc::clone(&counter);
            async move {
                let text = greet(&ctx).await?;
                if text.starts_with("Hello") {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                Ok(json!(text))
            }
        })
        .build()
        .unwrap();
    let forever = ToolDefinition::builder("ask_forever")
        .description("Asks without end.")
        .execute(|_, ctx| async move {
            for n in 0.. {
                ctx.ask(&format!("q{n}"), InputRequest::roots()).await?;
            }
            Ok(Value::Null)
        })
        .build()
        .unwrap();
    for tool in [greet, forever] {
        registry.register(tool).unwrap().keep();
    }
    (registry, greeted)
}

async fn greet(ctx: &ToolRunContext) -> Result<String, AskError> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let name = match ctx.elicit("name", "Your name?", schema).await? {
        Elicited::Accept(content) => content["name"].as_str().unwrap_or_default().to_owned(),
        Elicited::Decline | Elicited::Cancel => return Ok("no name, no greeting".to_owned()),
    };
    let sampled = ctx
        .ask("line", InputRequest::sample("A greeting line", 20))
        .await?;
    let roots = ctx.roots("roots").await?;
    Ok(format!(
        "Hello, {name}! {} (in {})",
        sampled["content"]["text"].as_str().unwrap_or_default(),
        roots[0].uri
    ))
}

/// The importing host's input service: a name for forms (or a refusal), a model when `model`,
/// one root; it records the keys it was asked.
struct Host {
    name: Option<&'static str>,
    model: bool,
    asked: Mutex<Vec<String>>,
}

impl Host {
    fn new(name: Option<&'static str>, model: bool) -> Arc<Self> {
        Arc::new(Self {
            name,
            model,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl CallerInput for Host {
    fn can_answer(&self, kind: InputKind) -> bool {
        kind != InputKind::Sampling || self.model
    }

    fn ask(&self, key: &str, request: InputRequest) -> BoxFuture<'static, Result<Value, AskError>> {
        self.asked.lock().unwrap().push(key.to_owned());
        let answer = match request.kind {
            InputKind::Elicitation => Ok(match self.name {
                Some(name) => json!({"action": "accept", "content": {"name": name}}),
                None => json!({"action": "decline"}),
            }),
            InputKind::Sampling if self.model => {
                let asked = &request.params["messages"][0]["content"]["text"];
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": format!("an answer to {asked}")},
                    "model": "test-model",
                }))
            }
            InputKind::Roots => Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})),
            other => Err(AskError::NotDeclared(other)),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Serves `served()` over HTTP and imports it as `srv` into a registry answered by `host`.
async fn imported(
    host: Option<Arc<Host>>,
) -> (
    ToolRegistry,
    Arc<AtomicUsize>,
    McpHttpServer,
    dsh_tools_runtime::mcp::McpConnection,
) {
    let (served, greeted) = served();
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let registry = ToolRegistry::new();
    if let Some(host) = host {
        registry.set_input_service(host);
    }
    let connection = McpImport::new(&registry)
        .connect_http("srv", &server.url())
        .await
        .unwrap();
    (registry, greeted, server, connection)
}

/// Calls `tool`: its text, or its error's message.
async fn call(registry: &ToolRegistry, tool: &str) -> Result<String, String> {
    let result = registry
        .execute(ToolExecutionInput::new("c1", tool, json!({})))
        .await;
    match result.error() {
        Some(error) => Err(error.to_string()),
        None => Ok(result.value().unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()),
    }
}

#[tokio::test]
async fn a_tool_that_asks_over_http_is_answered_round_by_round_and_runs_once() {
    let host = Host::new(Some("Alice"), true);
    let (registry, greeted, server, connection) = imported(Some(Arc::clone(&host))).await;
    assert_eq!(
        call(&registry, "mcp__srv__greet").await,
        Ok("Hello, Alice! an answer to \"A greeting line\" (in file:///work)".to_owned())
    );
    // One question per round, each answered by the host; the greeting happened once.
    assert_eq!(
        host.asked(),
        ["greet#1.name", "greet#2.line", "greet#3.roots"]
    );
    assert_eq!(greeted.load(Ordering::SeqCst), 1);
    connection.close().await;
    server.shutdown().await;

    // A declined form: the tool sees the refusal.
    let (registry, greeted, server, connection) = imported(Some(Host::new(None, true))).await;
    assert_eq!(
        call(&registry, "mcp__srv__greet").await,
        Ok("no name, no greeting".to_owned())
    );
    assert_eq!(greeted.load(Ordering::SeqCst), 0);
    connection.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_question_nobody_here_answers_is_the_servers_capability_error() {
    // No model: the client does not declare sampling, and the server says so.
    let host = Host::new(Some("Alice"), false);
    let (registry, greeted, server, connection) = imported(Some(Arc::clone(&host))).await;
    assert_eq!(
        call(&registry, "mcp__srv__greet").await,
        Err("MCP error -32021: Missing required client capability".to_owned())
    );
    assert_eq!(host.asked(), ["greet#1.name"]);
    assert_eq!(greeted.load(Ordering::SeqCst), 0);
    connection.close().await;
    server.shutdown().await;

    // No input service at all: nothing is declared.
    let (registry, _, server, connection) = imported(None).await;
    assert_eq!(
        call(&registry, "mcp__srv__greet").await,
        Err("MCP error -32021: Missing required client capability".to_owned())
    );
    connection.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_asking_is_cut_off_after_ten_rounds() {
    let host = Host::new(None, false);
    let (registry, _, server, connection) = imported(Some(Arc::clone(&host))).await;
    assert_eq!(
        call(&registry, "mcp__srv__ask_forever").await,
        Err(
            "mcp-client(srv): tools/call \"ask_forever\" still asked for input after 10 rounds"
                .to_owned()
        )
    );
    let expected: Vec<String> = (0..10)
        .map(|n| format!("ask_forever#{}.q{n}", n + 1))
        .collect();
    assert_eq!(host.asked(), expected);
    connection.close().await;
    server.shutdown().await;
}

/// An rmcp client that answers every kind of question: the name Bob, a model's line, one root.
#[derive(Clone)]
struct Answering;

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let capabilities = json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}});
        ClientConfig::new(
            serde_json::from_value::<ClientCapabilities>(capabilities).unwrap(),
            Implementation::new("outer", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Bob"})))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "a line"},
            "model": "m",
        }))
        .unwrap())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///outer"}]})).unwrap())
    }
}

#[tokio::test]
async fn served_on_the_questions_reach_the_outer_client_round_by_round() {
    // B serves `greet`; A imports it (declaring that its callers answer) and serves it on; an
    // rmcp client of 2026-07-28 calls A.
    let (served, greeted) = served();
    let b = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let a = ToolRegistry::new();
    let kinds = [
        InputKind::Elicitation,
        InputKind::Sampling,
        InputKind::Roots,
    ];
    let connection = McpImport::new(&a)
        .declare_input(&kinds)
        .connect_http("b", &b.url())
        .await
        .unwrap();
    let client = mcp_support::connect_in_process(&a, Answering, false).await;
    let result = client
        .call_tool(CallToolRequestParams::new("mcp__b__greet"))
        .await
        .unwrap();
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert_eq!(text, json!("Hello, Bob! a line (in file:///outer)"));
    assert_eq!(
        greeted.load(Ordering::SeqCst),
        1,
        "B's side effect happened once"
    );
    connection.close().await;
    b.shutdown().await;
}
