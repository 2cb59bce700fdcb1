//! Remote MCP servers (`--mcp https://host/mcp`, `mcp login URL`, `mcp logout URL`): headers,
//! OAuth, and where the tokens are kept.
//!
//! Tokens live in `mcp-tokens.json` (mode 0600, one entry per server URL, bound to the issuer
//! that issued them) under `$DSH_TOOLS_DATA_DIR`, else the user's data directory
//! (`$XDG_DATA_HOME/dsh-tools`, `~/.local/share/dsh-tools`). A server that asks for
//! authorization gets the authorization-code flow: the authorization URL is printed on stderr
//! and a listener on `127.0.0.1` takes the redirect. With `DSH_TOOLS_MCP_CLIENT_ID` and
//! `DSH_TOOLS_MCP_CLIENT_SECRET` set, the client-credentials grant is used instead (no user).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use dsh_tools_runtime::mcp::{
    AgentFuture, AuthorizationAgent, McpHttpOptions, McpOAuth, TokenFile,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::CliError;

/// How long the loopback listener waits for the browser to come back.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether an `--mcp` value names a remote server rather than a command.
pub(super) fn is_url(value: &str) -> bool {
    value.starts_with("https://") || value.starts_with("http://")
}

/// The token file: `$DSH_TOOLS_DATA_DIR/mcp-tokens.json`, else under the user's data directory.
pub(super) fn token_path() -> Result<PathBuf, CliError> {
    let dir = match std::env::var_os("DSH_TOOLS_DATA_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => dirs::data_dir()
            .ok_or_else(|| {
                CliError::new(
                    "no data directory to keep MCP tokens in: set DSH_TOOLS_DATA_DIR or HOME",
                )
            })?
            .join("dsh-tools"),
    };
    Ok(dir.join("mcp-tokens.json"))
}

/// The options of an HTTP import of `url`: `headers` (`Name: value`), and OAuth with the
/// token file's entry for `url`.
pub(super) fn options(url: &str, headers: &[String]) -> Result<McpHttpOptions, CliError> {
    let mut options = McpHttpOptions::new();
    for header in headers {
        // The flag's value may be a secret: errors name the header, never echo the value.
        let Some((name, value)) = header.split_once(':') else {
            return Err(CliError::new(
                "--mcp-header: expected \"Name: value\" (no ':' in the value given)",
            ));
        };
        options = options
            .header(name.trim(), value.trim())
            .map_err(|e| CliError::new(format!("--mcp-header: {e}")))?;
    }
    let store = TokenFile::new(token_path()?, url);
    let id = std::env::var("DSH_TOOLS_MCP_CLIENT_ID").ok();
    let secret = std::env::var("DSH_TOOLS_MCP_CLIENT_SECRET").ok();
    let oauth = match (id, secret) {
        (Some(id), Some(secret)) => McpOAuth::client_credentials(id, secret),
        _ => McpOAuth::new(Loopback::default()),
    };
    Ok(options.oauth(oauth.credential_store(store)))
}

/// The authorization-code flow at a terminal: prints the authorization URL and takes the
/// redirect on a listener bound to `127.0.0.1` (an ephemeral port, bound when first needed).
#[derive(Debug, Default)]
pub(super) struct Loopback {
    listener: OnceLock<Result<std::net::TcpListener, String>>,
}

impl Loopback {
    fn listener(&self) -> Result<&std::net::TcpListener, String> {
        self.listener
            .get_or_init(|| {
                let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
                    .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
                listener
                    .set_nonblocking(true)
                    .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
                Ok(listener)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn port(&self) -> u16 {
        self.listener()
            .ok()
            .and_then(|l| l.local_addr().ok())
            .map_or(0, |a| a.port())
    }

    /// Accepts connections until one brings the redirect; its full URL.
    async fn redirect(&self) -> Result<String, String> {
        let listener = self.listener()?.try_clone().map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        loop {
            let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
            let mut head = vec![0; 8192];
            let mut read = 0;
            while read < head.len() && !head[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut head[read..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
            }
            let head = String::from_utf8_lossy(&head[..read]);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .filter(|target| target.starts_with("/callback?"));
            let (status, body) = match target {
                Some(_) => (
                    "200 OK",
                    "dsh-tools: authorized; you may close this page.\n",
                ),
                None => ("404 Not Found", "not the authorization redirect\n"),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            if let Some(target) = target {
                return Ok(format!("http://127.0.0.1:{}{target}", self.port()));
            }
        }
    }
}

impl AuthorizationAgent for Loopback {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port())
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a> {
        Box::pin(async move {
            self.listener()?;
            eprintln!(
                "dsh-tools: the MCP server asks for authorization; open this URL in a browser:\n{authorization_url}"
            );
            tokio::time::timeout(LOGIN_TIMEOUT, self.redirect())
                .await
                .map_err(|_| {
                    format!(
                        "no redirect to {} within {} s",
                        self.redirect_uri(),
                        LOGIN_TIMEOUT.as_secs()
                    )
                })?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GET of `target` on the loopback listener, as a browser would send it; the response.
    async fn browse(port: u16, target: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    #[tokio::test]
    async fn the_loopback_agent_takes_the_redirect_and_ignores_other_requests() {
        let agent = Loopback::default();
        let redirect_uri = agent.redirect_uri();
        let port = agent.port();
        assert_eq!(redirect_uri, format!("http://127.0.0.1:{port}/callback"));
        let waiting = tokio::spawn(async move {
            agent
                .authorize("http://127.0.0.1:1/authorize?client_id=x")
                .await
        });
        let other = browse(port, "/favicon.ico").await;
        assert!(other.starts_with("HTTP/1.1 404 "), "{other}");
        let page = browse(port, "/callback?code=c0de&state=s7&iss=http%3A%2F%2Fas").await;
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        assert!(page.ends_with("dsh-tools: authorized; you may close this page.\n"));
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            format!("http://127.0.0.1:{port}/callback?code=c0de&state=s7&iss=http%3A%2F%2Fas")
        );
    }

    #[test]
    fn a_header_without_a_colon_is_refused_without_its_value() {
        let error = options(
            "http://127.0.0.1:1/mcp",
            &["Authorization Bearer s3cr3t".into()],
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "--mcp-header: expected \"Name: value\" (no ':' in the value given)"
        );
        let error = options("http://127.0.0.1:1/mcp", &["X Key: s3cr3t".into()]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--mcp-header: mcp-client: header \"X Key\": not a valid header name"
        );
    }
}
