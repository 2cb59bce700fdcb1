//! Serve: a registry (or one scope's view of it) as an MCP server.

mod accept;
mod approval;
mod auth;
mod first;
mod gate;
mod handler;
mod headers;
mod http;
mod limits;
mod requests;
mod rounds;
mod sessions;
mod stdio;
mod suspended;
mod tasks;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rmcp::model::Implementation;
use tokio::io::{AsyncRead, AsyncWrite};

use self::approval::ClientApprovals;
pub use self::auth::{McpAuth, ScopeMap};
use self::handler::RegistryHandler;
pub use self::http::McpHttpServer;
pub use self::limits::HttpLimits;
use self::rounds::Rounds;
pub use self::tasks::{
    McpTasks, MemoryTaskStore, TaskEntry, TaskState, TaskStore, TaskStoreError, TaskSupport,
};
pub use self::wire::mcp_input_schema;
use crate::mcp::McpError;
use crate::registry::{Scope, ToolRegistry};

/// An MCP server over a registry: `tools/list` lists the visible tools of the served view and
/// `tools/call` runs the call through [`ToolRegistry::execute`] — policies, guards, approval and
/// timeouts apply, and every outcome of a call (bad arguments, denials and tool failures
/// included) is an `isError` result with the model-readable text. A name the served view does
/// not list is the protocol error `-32602` (invalid params), as the MCP specification asks.
///
/// Listings use the MCP dialect ([`mcp_input_schema`]), carry `outputSchema` for tools with an
/// object output schema (whose successes then carry `structuredContent` = the value), and the
/// tools' annotations. Each call gets a fresh call id (`mcp-<n>`); `notifications/cancelled`
/// cancels the execution.
///
/// The listing follows the served view's presentation mode ([`RegistryConfig::mode`],
/// [`Scope::present_as`]): natively its tools; in code or both mode (an extension such as Code
/// Mode installed) the wire tools of its prompt, the tool the presentation adds described with
/// the prompt's sections — the Code Mode gateway (`docs/CONTRACTS.md`, "MCP").
///
/// [`RegistryConfig::mode`]: crate::RegistryConfig::mode
///
/// Calls run as an agent: the served scope, or (serving the global view) a scope of the
/// server's own, so that an `ask` policy can route to the registry's approval service.
///
/// Serve HTTP from a multi-threaded Tokio runtime, and keep CPU-bound tool work (compiling a
/// pattern, walking a large tree) off the async threads with `tokio::task::spawn_blocking`:
/// otherwise one call stalls every session the thread serves. A declared `timeout_ms` still
/// holds — the pipeline answers at the deadline — and the blocking work should watch the
/// call's cancellation token ([`dsh_tools::ToolRunContext::cancellation`]) to stop early.
/// The HTTP server's limits (sessions, connections, timeouts) are [`HttpLimits`].
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::mcp::McpServer;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = ToolRegistry::new();
/// registry.register(ToolDefinition::builder("ping").description("Answer pong.")
///     .execute(|_, _| async { Ok(serde_json::json!("pong")) }).build().unwrap()).unwrap().keep();
/// let server = McpServer::new(&registry).serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// server.shutdown().await;
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct McpServer {
    registry: ToolRegistry,
    scope: Option<Scope>,
    info: Implementation,
    allowed_origins: Vec<String>,
    http_limits: HttpLimits,
    auth: Option<McpAuth>,
    client_approval: bool,
    state_ttl: std::time::Duration,
    suspendable: Option<Arc<dyn crate::extension::SuspendableCalls>>,
    tasks: Option<Arc<McpTasks>>,
}

impl McpServer {
    /// Serves the registry's global view.
    pub fn new(registry: &ToolRegistry) -> Self {
        Self {
            registry: registry.clone(),
            scope: None,
            info: Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
            allowed_origins: Vec::new(),
            http_limits: HttpLimits::default(),
            auth: None,
            client_approval: true,
            state_ttl: rounds::STATE_TTL,
            suspendable: None,
            tasks: None,
        }
    }

    /// Serves what `scope` sees; calls run as that agent.
    pub fn for_scope(scope: &Scope) -> Self {
        Self {
            scope: Some(scope.clone()),
            ..Self::new(scope.registry())
        }
    }

    /// The name and version announced in the handshake (default `dsh-tools` and this crate's
    /// version).
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name.into(), version.into());
        self
    }

    /// Browser origins allowed to call the HTTP server besides its own loopback origins
    /// (`http://127.0.0.1:<port>`, `http://localhost:<port>`, `http://[::1]:<port>`), e.g.
    /// `https://app.example.com` or `http://localhost:*` (any port).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// The limits of the HTTP server: sessions, connections, timeouts, body size (default
    /// [`HttpLimits::default`]).
    pub fn with_http_limits(mut self, limits: HttpLimits) -> Self {
        self.http_limits = limits;
        self
    }

    /// Requires OAuth bearer tokens on the HTTP server ([`McpAuth`]): it serves its Protected
    /// Resource Metadata and answers a request without a valid token 401, a `tools/call` whose
    /// tool's scope the token lacks 403 (`docs/CONTRACTS.md`, "MCP server authorization").
    /// Without it the HTTP server authorizes nobody: bind it to loopback only.
    pub fn with_auth(mut self, auth: McpAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Whether a call that asks for approval asks the client's user when the client can
    /// elicit (default `true`): by an input-required result at 2026-07-28, by
    /// `elicitation/create` in an older session (`docs/CONTRACTS.md`, "Approval over MCP").
    /// With `false`, or a client that cannot elicit, the registry's approval service answers.
    pub fn client_approval(mut self, ask_the_client: bool) -> Self {
        self.client_approval = ask_the_client;
        self
    }

    /// How long the sealed `requestState` of an input-required result can be answered (default
    /// ten minutes): a retry carrying an older state is refused (JSON-RPC invalid params)
    /// before anything runs, and the client asks again by calling without it.
    pub fn with_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Serves the calls of `calls`' tools durably (Code Mode's `DurableRunCode` for
    /// `run_code`): for a 2026-07-28 client that can elicit, a call that reaches an approval
    /// suspends and answers an input-required result whose sealed `requestState` carries its
    /// continuation; the retry with the user's answer resumes it, every tool call running once
    /// (`docs/CONTRACTS.md`, "Approval over MCP").
    pub fn with_suspendable(mut self, calls: Arc<dyn crate::extension::SuspendableCalls>) -> Self {
        self.suspendable = Some(calls);
        self
    }

    /// Serves the tasks extension (`io.modelcontextprotocol/tasks`): a call of a tool
    /// [`McpTasks`] marks long-running, from a client that declared the extension, answers a
    /// task handle; `tasks/get`, `tasks/update` and `tasks/cancel` follow it
    /// (`docs/CONTRACTS.md`, "Tasks over MCP").
    pub fn with_tasks(mut self, tasks: McpTasks) -> Self {
        self.tasks = Some(Arc::new(tasks));
        self
    }

    fn handler(&self) -> RegistryHandler {
        let (view, agent) = match &self.scope {
            Some(scope) => (Some(scope.id()), scope.id()),
            None => (None, self.registry.new_scope().id()),
        };
        RegistryHandler {
            registry: self.registry.clone(),
            view,
            agent,
            info: Arc::new(self.info.clone()),
            calls: Arc::new(AtomicU64::new(0)),
            approvals: self
                .client_approval
                .then(|| ClientApprovals::install(&self.registry, agent)),
            rounds: Rounds::new(agent, self.state_ttl),
            suspendable: self.suspendable.clone(),
            tasks: self
                .tasks
                .as_ref()
                .map(|tasks| (Arc::clone(tasks), tasks.start())),
        }
    }

    /// Serves one session over this process's stdin and stdout, until the client disconnects.
    ///
    /// The protocol owns stdout from then on: on Unix, anything else the process prints to
    /// stdout (a tool's `println!`, say) goes to stderr instead, so it cannot corrupt a frame.
    pub async fn serve_stdio(&self) -> Result<(), McpError> {
        let stdout = stdio::claim_stdout()
            .map_err(|e| McpError::Serve(format!("cannot take stdout for the protocol: {e}")))?;
        self.serve_io(tokio::io::stdin(), stdout).await
    }

    /// Serves one session over a byte stream pair (newline-delimited JSON-RPC), until the
    /// client disconnects.
    ///
    /// A request before the session is open (neither `initialize` nor a stateless request
    /// carrying the protocol version in its `_meta`) is answered with an error saying what to
    /// send first, and the session stays open.
    pub async fn serve_io<R, W>(&self, reader: R, mut writer: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        use tokio::io::AsyncReadExt as _;
        let (opening, rest) = first::until_open(reader, &mut writer)
            .await
            .map_err(|e| McpError::Serve(format!("reading the session's first request: {e}")))?;
        if opening.is_empty() {
            return Ok(());
        }
        let reader = std::io::Cursor::new(opening).chain(rest);
        let running = rmcp::serve_server(self.handler(), (reader, writer))
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP on `addr` (use `127.0.0.1:0` for a free loopback port) until the
    /// returned server is shut down or dropped. Any request path is the MCP endpoint.
    ///
    /// Requests must name a loopback `Host` (`localhost`, `127.0.0.1`, `::1`), which guards
    /// a local server against DNS rebinding; [`McpServer::serve_http_for_hosts`] allows others.
    /// A request with an `Origin` header that is not the server's own loopback origin (nor one
    /// of [`McpServer::allow_origins`]) gets 403 Forbidden.
    pub async fn serve_http(&self, addr: SocketAddr) -> Result<McpHttpServer, McpError> {
        http::serve(
            self.handler(),
            addr,
            None,
            self.allowed_origins.clone(),
            self.http_limits.clone(),
            self.auth.as_ref(),
        )
        .await
    }

    /// [`McpServer::serve_http`] accepting these `Host` names (or `host:port` authorities).
    pub async fn serve_http_for_hosts(
        &self,
        addr: SocketAddr,
        allowed_hosts: Vec<String>,
    ) -> Result<McpHttpServer, McpError> {
        http::serve(
            self.handler(),
            addr,
            Some(allowed_hosts),
            self.allowed_origins.clone(),
            self.http_limits.clone(),
            self.auth.as_ref(),
        )
        .await
    }
}
