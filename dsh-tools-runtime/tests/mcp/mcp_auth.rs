//! The HTTP MCP server as an OAuth 2.1 resource server (`docs/CONTRACTS.md`, "MCP server
//! authorization"), against a real authorization server: the npm `oidc-provider`, started on
//! loopback, issuing JWT access tokens by client_credentials with resource indicators.
#![cfg(feature = "mcp")]

use crate::mcp_auth_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::rmcp::model::CallToolRequestParams;
use dsh_tools_runtime::mcp::rmcp::service::{RoleClient, RunningService};
use dsh_tools_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
use dsh_tools_runtime::mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use dsh_tools_runtime::mcp::{McpAuth, McpHttpServer, McpServer};
use mcp_auth_support::{Issuer, claims_of};
use serde_json::{Value, json};

/// `read_file` (read-only) and `bash` (destructive, counts its runs).
fn registry(bash_runs: Arc<AtomicUsize>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let read_file = ToolDefinition::builder("read_file")
        .description("Read a file.")
        .annotations(ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        })
        .execute(|_, _| async { Ok(json!("contents")) })
        .build()
        .unwrap();
    let bash = ToolDefinition::builder("bash")
        .description("Run a command.")
        .annotations(ToolAnnotations {
            destructive_hint: Some(true),
            ..ToolAnnotations::default()
        })
        .execute(move |_, _| {
            let runs = bash_runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(json!("ran"))
            }
        })
        .build()
        .unwrap();
    for tool in [read_file, bash] {
        registry.register(tool).unwrap().keep();
    }
    registry
}

async fn serve(issuer: &Issuer, auth: impl FnOnce(McpAuth) -> McpAuth) -> McpHttpServer {
    let registry = registry(Arc::new(AtomicUsize::new(0)));
    serve_registry(&registry, issuer, auth).await
}

async fn serve_registry(
    registry: &ToolRegistry,
    issuer: &Issuer,
    auth: impl FnOnce(McpAuth) -> McpAuth,
) -> McpHttpServer {
    McpServer::new(registry)
        .with_auth(auth(McpAuth::new(issuer.url.clone())))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

fn metadata_url(server: &McpHttpServer) -> String {
    format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.local_addr()
    )
}

/// One JSON-RPC POST to the endpoint: (status, `WWW-Authenticate`, session id, body).
async fn post(
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> (u16, Option<String>, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string());
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (status, challenge, session) = (
        response.status().as_u16(),
        header("www-authenticate"),
        header("mcp-session-id"),
    );
    let body = String::from_utf8(response.bytes().await.unwrap().to_vec()).unwrap();
    (status, challenge, session, body)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "0"}}})
}

fn call(id: u64, tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}}})
}

/// A session of raw requests with `token`: initialize + initialized; the session id.
async fn open_session(url: &str, token: &str) -> String {
    let (status, _, session, body) = post(url, Some(token), None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, ..) = post(url, Some(token), Some(&session), initialized).await;
    assert_eq!(status, 202);
    session
}

#[tokio::test]
async fn metadata_names_the_issuer_and_a_missing_token_is_challenged() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let server = serve(&issuer, |auth| auth).await;
    let resource = server.url();
    let expected = json!({
        "resource": resource,
        "authorization_servers": [issuer.url],
        "scopes_supported": ["tools:read", "tools:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "dsh-tools MCP server",
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = reqwest::get(format!("http://{}{path}", server.local_addr()))
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let document: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(document, expected, "{path}");
    }

    let (status, challenge, _, _) = post(&resource, None, None, initialize()).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge.unwrap(),
        format!("Bearer resource_metadata=\"{}\"", metadata_url(&server))
    );
    // Another scheme is no bearer token either.
    let response = reqwest::Client::new()
        .get(&resource)
        .header("authorization", "Basic Zm9vOmJhcg==")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    server.shutdown().await;
}

/// Asserts a 401 `invalid_token` whose description contains `why`.
async fn assert_refused(server: &McpHttpServer, token: &str, why: &str) {
    let (status, challenge, _, body) = post(&server.url(), Some(token), None, initialize()).await;
    assert_eq!(status, 401, "{why}: {body}");
    let challenge = challenge.unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\", error_description=\"")
            && challenge.ends_with(&format!(
                "\", resource_metadata=\"{}\"",
                metadata_url(server)
            )),
        "{challenge}"
    );
    assert!(challenge.contains(why), "{why} not in {challenge}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"], "invalid_token");
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn tokens_the_resource_must_not_accept_are_401() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let server = serve(&issuer, |auth| auth.leeway(Duration::ZERO)).await;
    let resource = server.url();
    let good = issuer
        .token("full", "tools:read tools:write", &resource)
        .await;
    let (status, ..) = post(&resource, Some(&good), None, initialize()).await;
    assert_eq!(status, 200, "a token for this resource is accepted");

    // RFC 8707: a token minted for another resource is never accepted here.
    let elsewhere = issuer
        .token("full", "tools:read", "http://127.0.0.1:1/mcp")
        .await;
    assert_refused(&server, &elsewhere, "InvalidAudience").await;

    // The claims of a real token, re-signed or altered.
    let claims = claims_of(&good);
    let header = json!({"alg": "RS256", "typ": "at+jwt", "kid": "test-key-1"});
    let mut wrong_iss = claims.clone();
    wrong_iss["iss"] = json!("http://127.0.0.1:1");
    let wrong_iss = issuer.sign(header.clone(), wrong_iss).await;
    assert_refused(&server, &wrong_iss, "InvalidIssuer").await;

    let mut early = claims.clone();
    early["nbf"] = json!(now() + 600);
    let early = issuer.sign(header.clone(), early).await;
    assert_refused(&server, &early, "ImmatureSignature").await;

    let mut stale = claims.clone();
    stale["exp"] = json!(now() - 5);
    let stale = issuer.sign(header.clone(), stale).await;
    assert_refused(&server, &stale, "ExpiredSignature").await;

    // The same claims re-signed the way the issuer does are accepted: the refusals above are
    // the altered claims, not the signing route.
    let resigned = issuer.sign(header.clone(), claims.clone()).await;
    let (status, ..) = post(&resource, Some(&resigned), None, initialize()).await;
    assert_eq!(status, 200);

    let (head, _) = good.rsplit_once('.').unwrap();
    let forged = format!("{head}.{}", "A".repeat(342));
    assert_refused(&server, &forged, "InvalidSignature").await;

    let unsigned = issuer
        .sign(json!({"alg": "none", "typ": "at+jwt"}), claims.clone())
        .await;
    assert_refused(&server, &unsigned, "the token is not a JWS").await;

    // Algorithm confusion: HMAC keyed with the issuer's public key.
    let confused = issuer
        .sign(json!({"alg": "HS256", "kid": "test-key-1"}), claims.clone())
        .await;
    assert_refused(&server, &confused, "algorithm HS256 is not accepted").await;

    assert_refused(&server, "not-a-jwt", "the token is not a JWS").await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_token_from_the_server_is_401() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let server = serve(&issuer, |auth| auth.leeway(Duration::ZERO)).await;
    let token = issuer.token("short", "tools:read", &server.url()).await;
    let (status, ..) = post(&server.url(), Some(&token), None, initialize()).await;
    assert_eq!(status, 200, "valid until its exp");
    // The token lives one second: wait until the clock is past its `exp`.
    let exp = claims_of(&token)["exp"].as_u64().unwrap();
    while now() <= exp {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_refused(&server, &token, "ExpiredSignature").await;
    server.shutdown().await;
}

#[tokio::test]
async fn scopes_gate_tools_calls_with_403_for_step_up() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let bash_runs = Arc::new(AtomicUsize::new(0));
    let registry = registry(bash_runs.clone());
    let server = serve_registry(&registry, &issuer, |auth| auth).await;
    let url = server.url();

    let reader = issuer.token("reader", "tools:read", &url).await;
    let session = open_session(&url, &reader).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, _, body) = post(&url, Some(&reader), Some(&session), list).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("\"name\":\"bash\""),
        "listed, for step-up: {body}"
    );
    let (status, _, _, body) =
        post(&url, Some(&reader), Some(&session), call(3, "read_file")).await;
    assert_eq!(status, 200);
    assert!(body.contains("contents"), "{body}");
    let (status, challenge, _, body) =
        post(&url, Some(&reader), Some(&session), call(4, "bash")).await;
    assert_eq!(status, 403);
    assert_eq!(
        challenge.unwrap(),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"tools:write\", error_description=\"tool \
             bash needs scope tools:write\", resource_metadata=\"{}\"",
            metadata_url(&server)
        )
    );
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"error": "insufficient_scope", "scope": "tools:write",
               "error_description": "tool bash needs scope tools:write"})
    );
    assert_eq!(
        bash_runs.load(Ordering::SeqCst),
        0,
        "a refused call never runs"
    );

    // Stepped up: rmcp's own client with a token carrying tools:write runs bash.
    let writer = issuer.token("full", "tools:read tools:write", &url).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(writer),
    );
    let client: RunningService<RoleClient, ()> =
        dsh_tools_runtime::mcp::rmcp::serve_client((), transport)
            .await
            .unwrap();
    let ran = client
        .peer()
        .call_tool(CallToolRequestParams::new("bash"))
        .await
        .unwrap();
    assert_eq!(ran.is_error, Some(false));
    assert_eq!(bash_runs.load(Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn an_unknown_kid_refetches_the_keys_at_most_once_per_interval() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let unknown =
        |claims: Value| issuer.sign(json!({"alg": "RS256", "kid": "rotated-away"}), claims);
    // Rate-limited (the default 30 s): a burst of unknown kids fetches nothing more.
    let limited = serve(&issuer, |auth| auth).await;
    let good = issuer.token("full", "tools:read", &limited.url()).await;
    let (status, ..) = post(&limited.url(), Some(&good), None, initialize()).await;
    assert_eq!(status, 200);
    assert_eq!(issuer.jwks_fetches().await, 1, "fetched once, then cached");
    let forged = unknown(claims_of(&good)).await;
    for _ in 0..5 {
        assert_refused(&limited, &forged, "no key of the issuer's JWKS matches").await;
    }
    let (status, ..) = post(&limited.url(), Some(&good), None, initialize()).await;
    assert_eq!(status, 200);
    assert_eq!(issuer.jwks_fetches().await, 1, "no fetch per request");

    // Without the limit, an unknown kid refetches once per token (key rotation is seen).
    let eager = serve(&issuer, |auth| auth.jwks_refetch_interval(Duration::ZERO)).await;
    let good = issuer.token("full", "tools:read", &eager.url()).await;
    let (status, ..) = post(&eager.url(), Some(&good), None, initialize()).await;
    assert_eq!(status, 200);
    assert_eq!(issuer.jwks_fetches().await, 2);
    assert_refused(&eager, &unknown(claims_of(&good)).await, "rotated-away").await;
    assert_eq!(issuer.jwks_fetches().await, 3);
    limited.shutdown().await;
    eager.shutdown().await;
}
