//! Approval over MCP (`docs/CONTRACTS.md`, "Approval over MCP"): a served call that asks for
//! approval asks the client's user — by an input-required result at 2026-07-28, by
//! `elicitation/create` in an older session — and the host's approval service only when the
//! client cannot elicit. Driven by rmcp's own client in process, as a user's would be.
#![cfg(feature = "mcp")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::mcp_support;
use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::PreToolDecision;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputRequest,
};
use dsh_tools_runtime::mcp::rmcp::service::{RequestContext, RoleClient, ServiceError};
use dsh_tools_runtime::mcp::rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};

/// The client's user: answers every elicitation with `approve` (or declines with `None`), and
/// remembers what it was asked.
#[derive(Clone)]
struct User {
    approve: Option<bool>,
    elicits: bool,
    asked: Arc<Mutex<Vec<String>>>,
}

impl User {
    fn new(approve: Option<bool>) -> Self {
        Self {
            approve,
            elicits: true,
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicits {
            json!({"elicitation": {"form": {}}})
        } else {
            json!({})
        };
        ClientConfig::new(
            serde_json::from_value::<ClientCapabilities>(capabilities).unwrap(),
            Implementation::new("user", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            panic!("a form elicitation");
        };
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
        Ok(match self.approve {
            Some(approve) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"approve": approve})),
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// The host's approval service: says no, and counts how often it was asked.
#[derive(Default)]
struct HostSaysNo(AtomicUsize);

impl ApprovalService for HostSaysNo {
    fn request(&self, _request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { ApprovalOutcome::Rejected })
    }
}

/// A served registry whose `deploy` asks for approval and counts its runs.
struct Served {
    registry: ToolRegistry,
    deploys: Arc<AtomicUsize>,
    host: Arc<HostSaysNo>,
}

fn served() -> Served {
    let registry = ToolRegistry::new();
    let deploys = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&deploys);
    registry
        .register(
            ToolDefinition::builder("deploy")
                .description("Deploy the site.")
                .parameters_json(
                    json!({"type": "object", "properties": {"env": {"type": "string"}}}),
                )
                .execute(move |_, _| {
                    let counter = Arc::clone(&counter);
                    async move {
                        counter.fetch_add(1, Ordering::SeqCst);
                        Ok(json!("deployed"))
                    }
                })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    registry
        .on_pre_execute(pre_execute_fn(|exec, next| async move {
            if &*exec.name == "deploy" {
                PreToolDecision::Ask {
                    reason: Some("deploys need a person".into()),
                }
            } else {
                next.run().await
            }
        }))
        .keep();
    let host = Arc::new(HostSaysNo::default());
    registry.set_approval(Arc::clone(&host) as Arc<dyn ApprovalService>);
    Served {
        registry,
        deploys,
        host,
    }
}

fn deploy(env: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("deploy")
        .with_arguments(json!({"env": env}).as_object().cloned().unwrap_or_default())
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

const QUESTION: &str = "Allow the tool \"deploy\" to run with {\"env\":\"prod\"}? It asks because deploys need a person.";

#[tokio::test]
async fn a_2026_client_is_asked_by_an_input_required_result_and_the_call_runs_once() {
    let served = served();
    let user = User::new(Some(true));
    let client = mcp_support::connect_in_process(&served.registry, user.clone(), false).await;
    let result = client.call_tool(deploy("prod")).await.unwrap();
    assert_eq!(
        (result.is_error, text(&result).as_str()),
        (Some(false), "deployed")
    );
    assert_eq!(served.deploys.load(Ordering::SeqCst), 1);
    assert_eq!(user.asked(), [QUESTION]);
    assert_eq!(
        served.host.0.load(Ordering::SeqCst),
        0,
        "the host was not asked"
    );
}

#[tokio::test]
async fn a_user_who_declines_or_says_no_stops_the_call() {
    for approve in [None, Some(false)] {
        let served = served();
        let user = User::new(approve);
        let client = mcp_support::connect_in_process(&served.registry, user.clone(), false).await;
        let result = client.call_tool(deploy("prod")).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(text(&result), "Error: the user rejected tool \"deploy\"");
        assert_eq!(served.deploys.load(Ordering::SeqCst), 0, "{approve:?}");
        assert_eq!(user.asked().len(), 1);
    }
}

/// The first round by hand: the input-required result, and what its state opens for.
#[tokio::test]
async fn the_state_opens_once_for_the_same_call_and_nothing_else() {
    let served = served();
    let client =
        mcp_support::connect_in_process(&served.registry, User::new(Some(true)), false).await;
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(deploy("prod")).await.unwrap()
    else {
        panic!("an input-required result");
    };
    assert_eq!(served.deploys.load(Ordering::SeqCst), 0, "nothing ran yet");
    let requests = asked.input_requests.expect("input requests");
    let Some(InputRequest::Elicitation(elicit)) = requests.get("approval") else {
        panic!("an elicitation under \"approval\": {requests:?}");
    };
    let elicit = serde_json::to_value(elicit).unwrap();
    assert_eq!(elicit["method"], "elicitation/create");
    assert_eq!(elicit["params"]["message"], QUESTION);
    assert_eq!(
        elicit["params"]["requestedSchema"]["required"],
        json!(["approve"])
    );
    let state = asked.request_state.expect("a request state");

    let answer = json!({"action": "accept", "content": {"approve": true}});
    let retry = |params: CallToolRequestParams, state: &str| {
        let mut params = params;
        params.request_state = Some(state.to_owned());
        params.input_responses = Some([("approval".to_owned(), answer.clone())].into());
        params
    };
    let refused = |outcome: Result<CallToolResponse, ServiceError>| match outcome {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            error.message.to_string()
        }
        other => panic!("a protocol error, not {other:?}"),
    };
    // An altered state, or the state with other arguments: refused, nothing runs.
    let mut altered = state.clone().into_bytes();
    let middle = altered.len() / 2;
    altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let message = refused(client.call_tool_once(retry(deploy("prod"), &altered)).await);
    assert!(
        message.starts_with("requestState does not verify for this call: "),
        "{message}"
    );
    let message = refused(
        client
            .call_tool_once(retry(deploy("staging"), &state))
            .await,
    );
    assert!(
        message.starts_with("requestState does not verify for this call: "),
        "{message}"
    );
    assert_eq!(served.deploys.load(Ordering::SeqCst), 0);
    // The answer: the call runs, once.
    let CallToolResponse::Complete(done) = client
        .call_tool_once(retry(deploy("prod"), &state))
        .await
        .unwrap()
    else {
        panic!("a final result");
    };
    assert_eq!(text(&done), "deployed");
    assert_eq!(served.deploys.load(Ordering::SeqCst), 1);
    // A replay of the same answer: refused.
    let message = refused(client.call_tool_once(retry(deploy("prod"), &state)).await);
    assert_eq!(
        message,
        "requestState was already used: ask again by calling without it"
    );
    assert_eq!(served.deploys.load(Ordering::SeqCst), 1);
}

/// A state answered after the server's state TTL: refused as a protocol error naming the
/// expiry, and the call does not run; asking again (no state) works.
#[tokio::test]
async fn an_expired_state_is_refused_and_nothing_runs() {
    let served = served();
    let ttl = std::time::Duration::from_millis(20);
    let server = dsh_tools_runtime::mcp::McpServer::new(&served.registry).with_state_ttl(ttl);
    let client = mcp_support::connect_served(server, User::new(Some(true)), false).await;
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(deploy("prod")).await.unwrap()
    else {
        panic!("an input-required result");
    };
    let state = asked.request_state.expect("a request state");
    // The user takes longer than the TTL to answer (the wall clock must pass it: this waits
    // for time, not for another task).
    tokio::time::sleep(ttl * 3).await;
    let mut retry = deploy("prod");
    retry.request_state = Some(state);
    retry.input_responses = Some(
        [(
            "approval".to_owned(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]
        .into(),
    );
    match client.call_tool_once(retry).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            assert_eq!(
                error.message,
                "requestState does not verify for this call: request state has expired"
            );
        }
        other => panic!("a protocol error, not {other:?}"),
    }
    assert_eq!(served.deploys.load(Ordering::SeqCst), 0, "nothing ran");
    assert_eq!(
        served.host.0.load(Ordering::SeqCst),
        0,
        "the host was not asked"
    );
}

#[tokio::test]
async fn an_older_session_is_asked_by_elicitation_create() {
    let served = served();
    let user = User::new(Some(true));
    let client = mcp_support::connect_in_process(&served.registry, user.clone(), true).await;
    assert_eq!(
        client
            .peer_info()
            .map(|info| info.protocol_version.to_string()),
        Some("2025-11-25".to_owned())
    );
    let result = client.call_tool(deploy("prod")).await.unwrap();
    assert_eq!(text(&result), "deployed");
    assert_eq!(served.deploys.load(Ordering::SeqCst), 1);
    assert_eq!(user.asked(), [QUESTION]);
    assert_eq!(served.host.0.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_client_that_cannot_elicit_leaves_it_to_the_host() {
    for legacy in [false, true] {
        let served = served();
        let user = User {
            elicits: false,
            ..User::new(Some(true))
        };
        let client = mcp_support::connect_in_process(&served.registry, user.clone(), legacy).await;
        let result = client.call_tool(deploy("prod")).await.unwrap();
        assert_eq!(text(&result), "Error: the user rejected tool \"deploy\"");
        assert_eq!(served.host.0.load(Ordering::SeqCst), 1, "legacy: {legacy}");
        assert!(user.asked().is_empty());
        assert_eq!(served.deploys.load(Ordering::SeqCst), 0);
    }
}

/// Values the tests compare against never leak: the served registry's other tools are not
/// asked about.
#[tokio::test]
async fn calls_that_do_not_ask_are_not_touched() {
    let served = served();
    served
        .registry
        .register(
            ToolDefinition::builder("ping")
                .description("Pong.")
                .execute(|_, _| async { Ok(Value::from("pong")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let user = User::new(Some(true));
    let client = mcp_support::connect_in_process(&served.registry, user.clone(), false).await;
    let result = client
        .call_tool(CallToolRequestParams::new("ping"))
        .await
        .unwrap();
    assert_eq!(text(&result), "pong");
    assert!(user.asked().is_empty());
}
