//! Streamable HTTP: rmcp's tower service on a hyper HTTP/1 accept loop.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::accept::accept_loop;
use super::auth::{AuthService, Authorizer, McpAuth};
use super::gate::Gate;
use super::handler::RegistryHandler;
use super::limits::HttpLimits;
use super::sessions::{BookedSessions, SessionBook};
use crate::mcp::McpError;

/// A running streamable-HTTP MCP server. Dropping it stops the server (as
/// [`McpHttpServer::shutdown`] does, without waiting).
#[derive(Debug)]
pub struct McpHttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl McpHttpServer {
    /// The bound address (with the actual port when `:0` was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, `http://<addr>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// Stops accepting, ends every session and connection, and waits for that.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Serves until the server is shut down from elsewhere (or forever).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The browser origins of the server itself: `http://` + each loopback name + the bound port
/// (and the bound address itself when it is not a wildcard).
fn own_origins(local: SocketAddr) -> Vec<String> {
    let port = local.port();
    let mut origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    if !local.ip().is_unspecified() && !local.ip().is_loopback() {
        origins.push(format!("http://{local}"));
    }
    origins
}

pub(super) async fn serve(
    handler: RegistryHandler,
    addr: SocketAddr,
    allowed_hosts: Option<Vec<String>>,
    allowed_origins: Vec<String>,
    limits: HttpLimits,
    auth: Option<&McpAuth>,
) -> Result<McpHttpServer, McpError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::Serve(format!("cannot listen on {addr}: {e}")))?;
    let local_addr = listener
        .local_addr()
        .map_err(|e| McpError::Serve(e.to_string()))?;
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(limits.max_body_bytes);
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    // A request whose `Origin` is neither the server's own nor an allowed one gets 403 (the
    // streamable HTTP transport's DNS-rebinding rule, `docs/CONTRACTS.md`, "MCP"); requests
    // without `Origin` (non-browser clients) pass.
    let mut origins = own_origins(local_addr);
    origins.extend(allowed_origins);
    config = config
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let authorizer = auth.map(|auth| {
        let tools = handler.clone();
        Authorizer::new(auth, local_addr, move |name| tools.is_read_only(name))
    });
    let book = SessionBook::new(limits.max_sessions);
    let sessions = BookedSessions::start(&limits, Arc::clone(&book), stop.child_token());
    let service = StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
    // The gate first (limits, whole bodies), then authorization, then rmcp.
    let service = AuthService::new(service, authorizer);
    let service = Gate::new(service, Arc::new(limits.clone()), book);
    let task = tokio::spawn(accept_loop(listener, service, limits, stop.clone()));
    Ok(McpHttpServer {
        local_addr,
        stop,
        task: Some(task),
    })
}
