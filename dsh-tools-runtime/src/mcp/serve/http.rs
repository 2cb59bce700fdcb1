//! Streamable HTTP: rmcp's tower service on a hyper HTTP/1 accept loop.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::auth::{AuthService, Authorizer, McpAuth};
use super::handler::RegistryHandler;
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
    auth: Option<&McpAuth>,
) -> Result<McpHttpServer, McpError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::Serve(format!("cannot listen on {addr}: {e}")))?;
    let local_addr = listener
        .local_addr()
        .map_err(|e| McpError::Serve(e.to_string()))?;
    let stop = CancellationToken::new();
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
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
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let service = AuthService::new(service, authorizer);
    let task = tokio::spawn(accept_loop(listener, service, stop.clone()));
    Ok(McpHttpServer {
        local_addr,
        stop,
        task: Some(task),
    })
}

async fn accept_loop(
    listener: TcpListener,
    service: AuthService<StreamableHttpService<RegistryHandler, LocalSessionManager>>,
    stop: CancellationToken,
) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!("mcp-server: accept failed: {error}");
                continue;
            }
        };
        let service = TowerToHyperService::new(service.clone());
        let stop = stop.clone();
        connections.spawn(async move {
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
    // Streams (SSE) end with their sessions; whatever is left is cut.
    connections.shutdown().await;
}
