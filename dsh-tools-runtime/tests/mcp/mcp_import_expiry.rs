//! Our import's token running out, against a real authorization server (the npm
//! `oidc-provider`, whose client `short` gets tokens that live one second) in front of our own
//! HTTP server: a call after the token's `exp` gets a new token first and succeeds.
#![cfg(feature = "mcp")]

use crate::mcp_auth_support::{Issuer, claims_of};

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpAuth, McpHttpOptions, McpImport, McpOAuth, McpServer, TokenFile};
use serde_json::{Value, json};

/// The access token the token file holds for its one server.
fn held_token(file: &Path) -> String {
    let entries: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let servers = entries["servers"].as_object().unwrap();
    assert_eq!(servers.len(), 1, "{entries}");
    servers.values().next().unwrap()["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn an_expired_token_is_replaced_before_the_call_succeeds() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let served = ToolRegistry::new();
    let read_file = ToolDefinition::builder("read_file")
        .description("Read a file.")
        .annotations(ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        })
        .execute(|_, _| async { Ok(json!("contents")) })
        .build()
        .unwrap();
    served.register(read_file).unwrap().keep();
    let server = McpServer::new(&served)
        .with_auth(McpAuth::new(issuer.url.clone()).leeway(Duration::ZERO))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.json");
    let oauth = McpOAuth::client_credentials("short", "short-secret".to_owned())
        .credential_store(TokenFile::new(&file, server.url()));
    let host = ToolRegistry::new();
    let connection = McpImport::new(&host)
        .connect_http_with("srv", &server.url(), &McpHttpOptions::new().oauth(oauth))
        .await
        .unwrap();
    let call = || ToolExecutionInput::new("c1", "mcp__srv__read_file", json!({}));
    let result = host.execute(call()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    let first = held_token(&file);

    // The token lives one second: wait until the clock is past its `exp`.
    let exp = claims_of(&first)["exp"].as_u64().unwrap();
    while now() <= exp {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let result = host.execute(call()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    let second = held_token(&file);
    assert_ne!(first, second, "a new token was obtained");
    assert!(claims_of(&second)["exp"].as_u64().unwrap() > exp);
    connection.close().await;
    server.shutdown().await;
}
