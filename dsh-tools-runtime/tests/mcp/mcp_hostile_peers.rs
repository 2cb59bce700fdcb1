//! Our MCP client against hostile HTTP peers: an MCP endpoint that redirects elsewhere or in a
//! loop, protected-resource and authorization-server metadata of the wrong shape, issuer or
//! size, and token responses that are not tokens. Each is refused with an error naming what
//! was wrong and where; no secret or token appears in it; nothing is registered.
//!
//! The peers are a few lines of HTTP/1.1 on loopback (`Peer`): each path answers a fixed
//! response, and the peer counts the requests it got and keeps their headers.
#![cfg(feature = "mcp")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{
    AgentFuture, AuthorizationAgent, McpHttpOptions, McpImport, McpOAuth,
};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpListener;

/// One fixed answer: status, extra headers, body.
#[derive(Clone)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn json(body: &str) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    fn status(status: u16, headers: &[(&str, &str)]) -> Self {
        Self {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: Vec::new(),
        }
    }
}

/// The requests a peer got: path and lower-cased headers.
type Seen = Mutex<Vec<(String, HashMap<String, String>)>>;

/// A loopback HTTP peer answering each path with its fixed answer (404 otherwise); it records
/// the lower-cased headers of every request, in order, with its path.
struct Peer {
    url: String,
    seen: Arc<Seen>,
}

impl Peer {
    async fn start(routes: impl FnOnce(&str) -> HashMap<String, Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let routes = Arc::new(routes(&url));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let routes = Arc::clone(&routes);
                let log = Arc::clone(&log);
                tokio::spawn(async move {
                    let _ = serve_one(stream, &routes, &log).await;
                });
            }
        });
        Self { url, seen }
    }

    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn headers(&self) -> Vec<HashMap<String, String>> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(_, h)| h.clone())
            .collect()
    }
}

/// Reads requests off one connection and answers each.
async fn serve_one(
    stream: tokio::net::TcpStream,
    routes: &HashMap<String, Answer>,
    log: &Seen,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        let path = path.split('?').next().unwrap_or("/").to_owned();
        let mut headers = HashMap::new();
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).await?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
        }
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await?;
        log.lock().unwrap().push((path.clone(), headers));
        let answer = routes
            .get(&path)
            .cloned()
            .unwrap_or_else(|| Answer::status(404, &[]));
        let mut head = format!(
            "HTTP/1.1 {} X\r\ncontent-length: {}\r\n",
            answer.status,
            answer.body.len()
        );
        for (name, value) in &answer.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        write.write_all(head.as_bytes()).await?;
        write.write_all(&answer.body).await?;
    }
}

/// Connects `srv` at `url` with `options`: the error's message (the connection must fail).
async fn refused(url: &str, options: &McpHttpOptions) -> String {
    let registry = ToolRegistry::new();
    let error = McpImport::new(&registry)
        .connect_http_with("srv", url, options)
        .await
        .expect_err("the hostile peer is refused");
    assert!(registry.visible(None).is_empty(), "nothing is registered");
    error.to_string()
}

const SECRET: &str = "s3cr3t-never-shown";

#[tokio::test]
async fn an_mcp_endpoint_that_redirects_elsewhere_is_refused_and_gets_no_key() {
    let elsewhere = Peer::start(|_| HashMap::new()).await;
    let target = format!("{}/mcp", elsewhere.url);
    let hostile = Peer::start(|_| {
        HashMap::from([(
            "/mcp".to_owned(),
            Answer::status(307, &[("location", target.as_str())]),
        )])
    })
    .await;
    let options = McpHttpOptions::new().header("X-Api-Key", SECRET).unwrap();
    let message = refused(&format!("{}/mcp", hostile.url), &options).await;
    assert!(
        message.contains(&format!(
            "redirected to another origin ({}/mcp), which this client does not follow",
            elsewhere.url
        )),
        "{message}"
    );
    assert!(!message.contains(SECRET), "{message}");
    assert!(
        elsewhere.paths().is_empty(),
        "the other origin got no request"
    );
    assert_eq!(hostile.headers()[0]["x-api-key"], SECRET);
}

#[tokio::test]
async fn a_redirect_loop_is_refused() {
    let hostile = Peer::start(|url| {
        let again = format!("{url}/mcp");
        HashMap::from([(
            "/mcp".to_owned(),
            Answer::status(307, &[("location", again.as_str())]),
        )])
    })
    .await;
    let message = refused(&format!("{}/mcp", hostile.url), &McpHttpOptions::new()).await;
    assert!(message.contains("too many redirects"), "{message}");
    assert!(hostile.paths().len() <= 6, "{:?}", hostile.paths());
}

/// A server that asks for OAuth, whose metadata documents and token endpoint are `prm`, `asm`
/// and `token` (with `{url}` replaced by the peer's URL).
async fn oauth_peer(prm: &str, asm: &str, token: Answer) -> Peer {
    let (prm, asm) = (prm.to_owned(), asm.to_owned());
    Peer::start(move |url| {
        let challenge =
            format!("Bearer resource_metadata=\"{url}/.well-known/oauth-protected-resource/mcp\"");
        HashMap::from([
            (
                "/mcp".to_owned(),
                Answer::status(401, &[("www-authenticate", challenge.as_str())]),
            ),
            (
                "/.well-known/oauth-protected-resource/mcp".to_owned(),
                Answer::json(&prm.replace("{url}", url)),
            ),
            (
                "/.well-known/oauth-authorization-server".to_owned(),
                Answer::json(&asm.replace("{url}", url)),
            ),
            ("/token".to_owned(), token),
        ])
    })
    .await
}

const PRM: &str = r#"{"resource": "{url}/mcp", "authorization_servers": ["{url}"]}"#;
const ASM: &str = r#"{"issuer": "{url}", "authorization_endpoint": "{url}/authorize",
    "token_endpoint": "{url}/token", "response_types_supported": ["code"],
    "grant_types_supported": ["client_credentials"],
    "token_endpoint_auth_methods_supported": ["client_secret_basic"]}"#;

fn client_credentials() -> McpHttpOptions {
    McpHttpOptions::new().oauth(McpOAuth::client_credentials("me", SECRET.to_owned()))
}

/// Connects to an OAuth peer with the client-credentials grant: the error message, checked to
/// name the authorization and to hold no secret.
async fn refused_authorization(peer: &Peer) -> String {
    let message = refused(&format!("{}/mcp", peer.url), &client_credentials()).await;
    assert!(message.contains("srv"), "{message}");
    assert!(!message.contains(SECRET), "{message}");
    message
}

#[tokio::test]
async fn metadata_of_the_wrong_shape_is_refused() {
    // `authorization_servers` is not a list, and the origin's own metadata has a token endpoint
    // that is not a URL: both count as absent, so the client falls back to the origin's default
    // endpoints (MCP 2025-03-26) — never to a URL the documents named.
    let peer = oauth_peer(
        r#"{"resource": "{url}/mcp", "authorization_servers": "{url}"}"#,
        &ASM.replace(
            r#""token_endpoint": "{url}/token""#,
            r#""token_endpoint": 42"#,
        ),
        Answer::status(500, &[]),
    )
    .await;
    let message = refused_authorization(&peer).await;
    assert!(
        message.contains("Token exchange failed: Other error: server returned empty error"),
        "{message}"
    );
    assert_eq!(peer.paths().last().map(String::as_str), Some("/token"));

    // The authorization server names another issuer.
    let peer = oauth_peer(
        PRM,
        &ASM.replace(
            r#""issuer": "{url}""#,
            r#""issuer": "https://evil.example""#,
        ),
        Answer::status(500, &[]),
    )
    .await;
    let message = refused_authorization(&peer).await;
    assert!(message.contains("issuer"), "{message}");
    assert!(
        !peer.paths().contains(&"/token".to_owned()),
        "{:?}",
        peer.paths()
    );
}

#[tokio::test]
async fn a_huge_metadata_document_is_refused() {
    let padding = "x".repeat(8 << 20);
    let prm = format!(
        r#"{{"resource": "{{url}}/mcp", "authorization_servers": ["{{url}}"], "pad": "{padding}"}}"#
    );
    let peer = oauth_peer(&prm, ASM, Answer::status(500, &[])).await;
    let message = refused_authorization(&peer).await;
    assert!(
        message.contains(&format!(
            "OAuth metadata discovery failed for {}/.well-known/oauth-protected-resource/mcp",
            peer.url
        )),
        "{message}"
    );
    assert!(
        !peer.paths().contains(&"/token".to_owned()),
        "{:?}",
        peer.paths()
    );
}

#[tokio::test]
async fn token_responses_that_are_not_tokens_are_refused() {
    for (body, why) in [
        (
            r#"{"token_type": "Bearer", "expires_in": 3600}"#.to_owned(),
            "Token exchange parse error: missing field `access_token`",
        ),
        (
            r#"{"access_token": "AT-x", "token_type": "MAC"}"#.to_owned(),
            "the token endpoint issued a token of type \"mac\"; this client sends bearer tokens only",
        ),
        (
            r#"{"access_token": "AT-x", "token_type": "Bearer", "expires_in": 1e300}"#.to_owned(),
            "Token exchange parse error: invalid type: floating point `1e+300`, expected u64",
        ),
        (
            r#"{"access_token": "AT-x", "token_type": "Bearer", "expires_in": -5}"#.to_owned(),
            "Token exchange parse error: invalid value: integer `-5`, expected u64",
        ),
        ("x".repeat(4 << 20), "Token exchange failed"),
    ] {
        let peer = oauth_peer(PRM, ASM, Answer::json(&body)).await;
        let message = refused_authorization(&peer).await;
        assert!(message.contains(why), "{why}: {message}");
        assert!(!message.contains("AT-x"), "{why}: {message}");
    }
}

/// A user who is never reached: counts the authorization URLs handed over.
struct Unreached(Arc<AtomicUsize>);

impl AuthorizationAgent for Unreached {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".to_owned()
    }

    fn authorize<'a>(&'a self, _authorization_url: &'a str) -> AgentFuture<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err("not reached".to_owned()) })
    }
}

#[tokio::test]
async fn a_plain_http_authorization_endpoint_elsewhere_is_not_shown_to_the_user() {
    let asm = ASM
        .replace(
            r#""authorization_endpoint": "{url}/authorize""#,
            r#""authorization_endpoint": "http://auth.example/authorize""#,
        )
        .replace(r#"["client_credentials"]"#, r#"["authorization_code"]"#);
    let peer = oauth_peer(PRM, &asm, Answer::status(500, &[])).await;
    let visits = Arc::new(AtomicUsize::new(0));
    let oauth = McpOAuth::new(Unreached(Arc::clone(&visits)))
        .preregistered_client("me", Some(SECRET.to_owned()));
    let message = refused(
        &format!("{}/mcp", peer.url),
        &McpHttpOptions::new().oauth(oauth),
    )
    .await;
    assert!(
        message.contains(
            "the authorization endpoint http://auth.example/authorize is neither https nor on \
             this machine"
        ),
        "{message}"
    );
    assert!(!message.contains(SECRET), "{message}");
    assert_eq!(
        visits.load(Ordering::SeqCst),
        0,
        "the user was not sent there"
    );
}
