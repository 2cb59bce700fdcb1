//! Tools that ask their caller (`docs/CONTRACTS.md`, "Tools that ask their caller"), served over
//! MCP and driven by rmcp's own client in process: at 2026-07-28 by input-required results (the
//! tool runs again with the answers), in a 2025-11-25 session by server-to-client requests; a
//! state that is altered or replayed is refused before anything runs; a direct call asks the
//! host's input service.
#![cfg(feature = "mcp")]
#![allow(
    deprecated,
    reason = "sampling and roots: deprecated by SEP-2577 in later revisions, served to older sessions"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::mcp_support;
use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    AskError, CallerInput, Elicited, InputKind, InputRequest, ToolExecutionInput, ToolRunContext,
};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ListRootsResult,
};
use dsh_tools_runtime::mcp::rmcp::service::{RequestContext, RoleClient, ServiceError};
use dsh_tools_runtime::mcp::rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};

/// The client: accepts forms with `name` (or declines with `None`), answers sampling and roots;
/// declares the capabilities it is given.
#[derive(Clone)]
struct Client {
    name: Option<&'static str>,
    capabilities: Value,
}

impl Client {
    fn new(name: Option<&'static str>) -> Self {
        Self {
            name,
            capabilities: json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        }
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            serde_json::from_value::<ClientCapabilities>(self.capabilities.clone()).unwrap(),
            Implementation::new("client", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(match self.name {
            Some(name) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": name}))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&params.messages).unwrap()[0]["content"]["text"].clone();
        Ok(serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": format!("an answer to {asked}")},
            "model": "test-model",
        }))
        .unwrap())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(
            serde_json::from_value(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
                .unwrap(),
        )
    }
}

/// A registry whose `greet` asks a name, then the model, then the roots, and counts the
/// greetings it made (its side effect, after every question).
fn served() -> (ToolRegistry, Arc<AtomicUsize>) {
    let registry = ToolRegistry::new();
    let greeted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&greeted);
    registry
        .register(
            ToolDefinition::builder("greet")
                .description("Greet the user.")
                .execute(move |_, ctx| {
                    let counter = Arc::clone(&counter);
                    async move {
                        let text = greet(&ctx).await?;
                        counter.fetch_add(1, Ordering::SeqCst);
                        Ok(json!(text))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
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

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const GREETING: &str = "Hello, Alice! an answer to \"A greeting line\" (in file:///work)";

#[tokio::test]
async fn a_tool_that_asks_gets_the_answers_at_both_revisions() {
    for legacy in [false, true] {
        let (registry, greeted) = served();
        let client =
            mcp_support::connect_in_process(&registry, Client::new(Some("Alice")), legacy).await;
        let result = client
            .call_tool(CallToolRequestParams::new("greet"))
            .await
            .unwrap();
        assert_eq!(
            (result.is_error, text(&result).as_str()),
            (Some(false), GREETING),
            "{legacy}"
        );
        assert_eq!(
            greeted.load(Ordering::SeqCst),
            1,
            "the side effect happened once"
        );
        // A declined form: the tool sees it.
        let client = mcp_support::connect_in_process(&registry, Client::new(None), legacy).await;
        let result = client
            .call_tool(CallToolRequestParams::new("greet"))
            .await
            .unwrap();
        assert_eq!(text(&result), "no name, no greeting");
    }
}

/// The rounds by hand at 2026-07-28: each round asks one question; a state altered or
/// replayed is a protocol error and nothing runs.
#[tokio::test]
async fn the_rounds_carry_the_answers_and_their_state_opens_once() {
    let (registry, greeted) = served();
    let client =
        mcp_support::connect_in_process(&registry, Client::new(Some("Alice")), false).await;
    let round = |state: Option<String>, key: &str, answer: Value| {
        let mut params = CallToolRequestParams::new("greet");
        params.request_state = state;
        params.input_responses = Some([(key.to_owned(), answer)].into());
        params
    };
    let asked = |response: Result<CallToolResponse, ServiceError>| match response.unwrap() {
        CallToolResponse::InputRequired(asked) => {
            let keys: Vec<_> = asked.input_requests.clone().unwrap().into_keys().collect();
            (keys, asked.request_state.unwrap())
        }
        other => panic!("an input-required result, not {other:?}"),
    };
    let (keys, first) = asked(
        client
            .call_tool_once(CallToolRequestParams::new("greet"))
            .await,
    );
    assert_eq!(keys, ["name"]);
    let name = json!({"action": "accept", "content": {"name": "Alice"}});
    let (keys, second) = asked(
        client
            .call_tool_once(round(Some(first.clone()), "name", name.clone()))
            .await,
    );
    assert_eq!(keys, ["line"]);
    let line =
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
    let (keys, third) = asked(
        client
            .call_tool_once(round(Some(second.clone()), "line", line))
            .await,
    );
    assert_eq!(keys, ["roots"]);
    let refused = |response: Result<CallToolResponse, ServiceError>| match response {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            error.message.to_string()
        }
        other => panic!("a protocol error, not {other:?}"),
    };
    // Replayed: the first state was opened already.
    assert_eq!(
        refused(
            client
                .call_tool_once(round(Some(first), "name", name))
                .await
        ),
        "requestState was already used: ask again by calling without it"
    );
    // Altered.
    let mut altered = third.clone().into_bytes();
    let middle = altered.len() / 2;
    altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
    let roots = json!({"roots": [{"uri": "file:///work"}]});
    let message = refused(
        client
            .call_tool_once(round(
                Some(String::from_utf8(altered).unwrap()),
                "roots",
                roots.clone(),
            ))
            .await,
    );
    assert!(
        message.starts_with("requestState does not verify for this call: "),
        "{message}"
    );
    assert_eq!(greeted.load(Ordering::SeqCst), 0, "nothing ran to its end");
    // The last answer: the tool runs to its end with every answer recorded.
    let CallToolResponse::Complete(done) = client
        .call_tool_once(round(Some(third.clone()), "roots", roots.clone()))
        .await
        .unwrap()
    else {
        panic!("a final result");
    };
    assert_eq!(text(&done), "Hello, Alice! hi (in file:///work)");
    assert_eq!(greeted.load(Ordering::SeqCst), 1);
    refused(
        client
            .call_tool_once(round(Some(third), "roots", roots))
            .await,
    );
    assert_eq!(greeted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_client_without_the_capability_is_told_what_is_missing() {
    let (registry, greeted) = served();
    let mut client = Client::new(Some("Alice"));
    client.capabilities = json!({"sampling": {}});
    // 2026-07-28: -32021 with the capability required.
    let session = mcp_support::connect_in_process(&registry, client.clone(), false).await;
    match session
        .call_tool_once(CallToolRequestParams::new("greet"))
        .await
    {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32021, "{error:?}");
            assert_eq!(
                error.data,
                Some(json!({"requiredCapabilities": {"elicitation": {}}}))
            );
        }
        other => panic!("a -32021 error, not {other:?}"),
    }
    // 2025-11-25: the tool's error names it.
    let session = mcp_support::connect_in_process(&registry, client, true).await;
    let result = session
        .call_tool(CallToolRequestParams::new("greet"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Error: the client did not declare elicitation"
    );
    assert_eq!(greeted.load(Ordering::SeqCst), 0);
}

/// The host's input service: answers forms with a fixed name.
struct Host;

impl CallerInput for Host {
    fn can_answer(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn ask(
        &self,
        _key: &str,
        request: InputRequest,
    ) -> BoxFuture<'static, Result<Value, AskError>> {
        let kind = request.kind;
        Box::pin(async move {
            match kind {
                InputKind::Elicitation => {
                    Ok(json!({"action": "accept", "content": {"name": "Host"}}))
                }
                other => Err(AskError::NotDeclared(other)),
            }
        })
    }
}

#[tokio::test]
async fn a_direct_call_asks_the_host_or_says_nobody_answers() {
    let (registry, _) = served();
    let call = || ToolExecutionInput::new("c1", "greet", json!({}));
    let error =
        |result: dsh_tools::exec::ToolExecutionResult| result.error().map(|e| e.to_string());
    assert_eq!(
        error(registry.execute(call()).await).as_deref(),
        Some("the caller cannot be asked for elicitation: no input service")
    );
    // The host answers the form, and has no model to sample.
    registry.set_input_service(Arc::new(Host));
    assert_eq!(
        error(registry.execute(call()).await).as_deref(),
        Some("the client did not declare sampling")
    );
}
