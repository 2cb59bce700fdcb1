//! Our import's token running out, against a real authorization server (the npm
//! `oidc-provider`, whose clients `short` and `coder` get tokens that live one second) in front
//! of our own HTTP server: a call after the token's `exp` gets a new token first and succeeds —
//! by the client-credentials grant again, or, after the authorization-code flow, by the refresh
//! token (the user is not asked again).
#![cfg(feature = "mcp")]

use crate::mcp_auth_support::{Issuer, claims_of};

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{
    AgentFuture, AuthorizationAgent, McpAuth, McpHttpOptions, McpHttpServer, McpImport, McpOAuth,
    McpServer, TokenFile,
};
use serde_json::{Value, json};

/// The `field` of the token response the token file holds for its one server.
fn held(file: &Path, field: &str) -> String {
    let entries: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let servers = entries["servers"].as_object().unwrap();
    assert_eq!(servers.len(), 1, "{entries}");
    servers.values().next().unwrap()["token_response"][field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {entries}"))
        .to_owned()
}

fn held_token(file: &Path) -> String {
    held(file, "access_token")
}

/// Waits until the clock is past the `exp` of `token` (it lives one second); its `exp`.
async fn outlive(token: &str) -> u64 {
    let exp = claims_of(token)["exp"].as_u64().unwrap();
    while now() <= exp {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    exp
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Our server with authorization by `issuer` (no leeway), serving a read-only `read_file`.
async fn serve(issuer: &Issuer) -> McpHttpServer {
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
    McpServer::new(&served)
        .with_auth(McpAuth::new(issuer.url.clone()).leeway(Duration::ZERO))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// A user who consents at once: follows the authorization server's redirects (carrying its
/// cookies) to the redirect URI, and counts the authorizations it went through.
struct Consenting {
    visits: Arc<AtomicUsize>,
}

const CALLBACK: &str = "http://127.0.0.1:9/callback";

impl AuthorizationAgent for Consenting {
    fn redirect_uri(&self) -> String {
        CALLBACK.to_owned()
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a> {
        self.visits.fetch_add(1, Ordering::SeqCst);
        Box::pin(follow(authorization_url))
    }
}

/// Follows redirects from `url` with a cookie jar until one reaches [`CALLBACK`].
async fn follow(url: &str) -> Result<String, String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| e.to_string())?;
    let mut cookies: HashMap<String, String> = HashMap::new();
    let mut next = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    for _ in 0..10 {
        let jar: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let response = http
            .get(next.clone())
            .header("cookie", jar.join("; "))
            .send()
            .await
            .map_err(|e| format!("{e:?}"))?;
        for set in response.headers().get_all("set-cookie") {
            let text = set.to_str().unwrap_or_default();
            let pair = text.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                match value {
                    "" => cookies.remove(name.trim()),
                    value => cookies.insert(name.trim().to_owned(), value.to_owned()),
                };
            }
        }
        let status = response.status();
        let Some(location) = response.headers().get("location").cloned() else {
            let body = response.text().await.unwrap_or_default();
            return Err(format!("no redirect from {next} ({status}): {body}"));
        };
        let target = next
            .join(location.to_str().unwrap_or_default())
            .map_err(|e| e.to_string())?;
        if target.as_str().starts_with(CALLBACK) {
            return Ok(target.to_string());
        }
        next = target;
    }
    Err("more than 10 redirects".to_owned())
}

#[tokio::test]
async fn an_expired_token_is_replaced_before_the_call_succeeds() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let server = serve(&issuer).await;
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

    let exp = outlive(&first).await;
    let result = host.execute(call()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    let second = held_token(&file);
    assert_ne!(first, second, "a new token was obtained");
    assert!(claims_of(&second)["exp"].as_u64().unwrap() > exp);
    connection.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_token_is_refreshed_without_asking_the_user_again() {
    let Some(issuer) = Issuer::start().await else {
        return;
    };
    let server = serve(&issuer).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.json");
    let visits = Arc::new(AtomicUsize::new(0));
    let agent = Consenting {
        visits: Arc::clone(&visits),
    };
    let oauth = McpOAuth::new(agent)
        .preregistered_client("coder", Some("coder-secret".to_owned()))
        .credential_store(TokenFile::new(&file, server.url()));
    let host = ToolRegistry::new();
    let connection = McpImport::new(&host)
        .connect_http_with("srv", &server.url(), &McpHttpOptions::new().oauth(oauth))
        .await
        .unwrap();
    let call = || ToolExecutionInput::new("c1", "mcp__srv__read_file", json!({}));
    let result = host.execute(call()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    assert_eq!(visits.load(Ordering::SeqCst), 1);
    let first = held_token(&file);
    assert!(!held(&file, "refresh_token").is_empty());

    let exp = outlive(&first).await;
    let result = host.execute(call()).await;
    assert!(!result.is_error(), "{:?}", result.error());
    let second = held_token(&file);
    assert_ne!(first, second, "a new token was obtained");
    assert!(claims_of(&second)["exp"].as_u64().unwrap() > exp);
    assert_eq!(
        visits.load(Ordering::SeqCst),
        1,
        "refreshed, not authorized again"
    );
    connection.close().await;
    server.shutdown().await;
}
