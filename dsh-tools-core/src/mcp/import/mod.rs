//! Import: an MCP server's tools as raw tools of a registry (`docs/CONTRACTS.md`, "MCP").

mod call;
mod client;
mod http;
mod listen;
mod names;
mod oauth;
mod redirects;
mod rounds;
mod sync;
mod tap;
mod token_file;
mod tool;

use std::sync::{Arc, Weak};
use std::time::Duration;

use dsh_tools::Loading;
use rmcp::service::{ClientInitializeError, ClientServiceExt as _, RoleClient, RunningService};
use rmcp::transport::IntoTransport;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, watch};

use self::call::CallLink;
use self::client::ImportClient;
pub use self::http::McpHttpOptions;
use self::http::Reauthorize;
use self::names::NameClaim;
pub use self::oauth::{AgentFuture, AuthorizationAgent, McpOAuth};
use self::sync::Syncer;
use self::tap::{TapReader, TaskSupport};
pub use self::token_file::TokenFile;
use crate::mcp::{McpError, is_valid_server_name};
use crate::registry::{Scope, ToolRegistry};

/// One imported tool: its public (model-facing) name and the server's own name for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImportedTool {
    /// `mcp__<server>__<raw>` (normalised, see [`public_tool_name`](crate::mcp::public_tool_name)).
    pub public_name: String,
    /// The name the server listed (what goes on the wire).
    pub raw_name: String,
}

/// Options for importing MCP servers' tools into a registry; `connect_*` opens one connection.
///
/// Each listed tool becomes a raw tool named `mcp__<server>__<tool>` whose parameters are the
/// server's input schema verbatim and whose body calls the server (`docs/CONTRACTS.md`, "MCP"). The
/// connection re-syncs when the server sends `notifications/tools/list_changed`, and its tools
/// are unregistered when the returned [`McpConnection`] is closed or dropped.
///
/// ```no_run
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::mcp::McpImport;
///
/// # async fn demo() -> Result<(), dsh_tools_runtime::mcp::McpError> {
/// let registry = ToolRegistry::new();
/// let mut command = tokio::process::Command::new("npx");
/// command.args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]);
/// let fs = McpImport::new(&registry).connect_stdio("fs", command).await?;
/// assert!(registry.get("mcp__fs__read_text_file", None).is_some());
/// fs.close().await;
/// assert!(registry.get("mcp__fs__read_text_file", None).is_none());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpImport {
    registry: ToolRegistry,
    scope: Option<Scope>,
    call_timeout: Duration,
    loading: Loading,
    declared: Vec<dsh_tools::exec::InputKind>,
}

impl McpImport {
    /// The default per-call timeout: 60 000 ms.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);

    /// Imports into `registry`'s global layer, with the default call timeout.
    pub fn new(registry: &ToolRegistry) -> Self {
        Self {
            registry: registry.clone(),
            scope: None,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            loading: Loading::Auto,
            declared: Vec::new(),
        }
    }

    /// How the server's tools are loaded: [`Loading::Deferred`] leaves the whole server out of
    /// the wire list and the SDK until tool search finds its tools (they stay executable);
    /// [`Loading::Pinned`] keeps them loaded whatever the registry's threshold. Default
    /// [`Loading::Auto`].
    pub fn loading(mut self, loading: Loading) -> Self {
        self.loading = loading;
        self
    }

    /// Registers the tools in `scope` instead (visible to that agent and its descendants).
    pub fn into_scope(mut self, scope: &Scope) -> Self {
        self.registry = scope.registry().clone();
        self.scope = Some(scope.clone());
        self
    }

    /// Declares to the server that this client answers questions of `kinds` (elicitation,
    /// sampling, roots), besides those the host's input service answers
    /// ([`ToolRegistry::set_input_service`]) when the connection starts: for a host whose
    /// calls' own callers answer them (a gateway serving the imported tools over MCP, whose
    /// clients answer through input-required results).
    ///
    /// ```
    /// use dsh_tools::exec::InputKind;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use dsh_tools_runtime::mcp::McpImport;
    ///
    /// let registry = ToolRegistry::new();
    /// let import = McpImport::new(&registry).declare_input(&[InputKind::Elicitation]);
    /// # drop(import);
    /// ```
    pub fn declare_input(mut self, kinds: &[dsh_tools::exec::InputKind]) -> Self {
        self.declared = kinds.to_vec();
        self
    }

    /// How long one `tools/call` may take before it is cancelled and fails.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Starts `command` (stdin and stdout become the MCP channel; stderr is left as the
    /// command has it) and imports the server's tools. The process is killed when the
    /// connection closes.
    pub async fn connect_stdio(
        &self,
        server_name: &str,
        command: impl Into<tokio::process::Command>,
    ) -> Result<McpConnection, McpError> {
        let claim = self.claim(server_name)?;
        let mut command: tokio::process::Command = command.into();
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let spawn_error = |message: String| McpError::Spawn {
            server: server_name.to_owned(),
            message,
        };
        let mut child = command.spawn().map_err(|e| spawn_error(e.to_string()))?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(spawn_error("no stdio pipes".to_owned()));
        };
        let support = TaskSupport::default();
        let reader = TapReader::new(stdout, support.clone());
        self.connect(claim, server_name, (reader, stdin), support, Some(child))
            .await
    }

    /// Connects to a streamable-HTTP MCP endpoint (`http://…`) and imports its tools.
    ///
    /// Over HTTP the `execution.taskSupport` declaration of listed tools is not visible (rmcp
    /// decodes the listing before we see it), so task-required tools are called like others
    /// and fail with the server's own error.
    pub async fn connect_http(
        &self,
        server_name: &str,
        url: &str,
    ) -> Result<McpConnection, McpError> {
        self.connect_http_with(server_name, url, &McpHttpOptions::new())
            .await
    }

    /// Like [`connect_http`](Self::connect_http), with headers sent on every request (an API
    /// key) and OAuth: a server that answers 401 (or 403 `insufficient_scope`) is authorized
    /// for through the [`McpOAuth`] of `options` and the connection retried; a call refused
    /// later (a revoked token, a missing scope) is authorized again and retried once per
    /// authorization, up to the OAuth limit.
    pub async fn connect_http_with(
        &self,
        server_name: &str,
        url: &str,
        options: &McpHttpOptions,
    ) -> Result<McpConnection, McpError> {
        let claim = self.claim(server_name)?;
        let handler = self.client();
        let (service, reauthorize) = http::start(&handler, server_name, url, options).await?;
        self.finish(
            claim,
            server_name,
            handler,
            service,
            (TaskSupport::default(), reauthorize),
            None,
        )
        .await
    }

    /// Speaks MCP over any byte stream pair (newline-delimited JSON-RPC), e.g. an in-process
    /// pipe or a socket, and imports the server's tools.
    pub async fn connect_io<R, W>(
        &self,
        server_name: &str,
        reader: R,
        writer: W,
    ) -> Result<McpConnection, McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let claim = self.claim(server_name)?;
        let support = TaskSupport::default();
        let reader = TapReader::new(reader, support.clone());
        self.connect(claim, server_name, (reader, writer), support, None)
            .await
    }

    /// The client side of a new connection: the host's input service, as mounted now, answers
    /// the server's questions.
    fn client(&self) -> ImportClient {
        let host = self.registry.host_state::<dsh_tools::exec::HostInput>();
        ImportClient::answered_by(host, &self.declared)
    }

    fn claim(&self, server_name: &str) -> Result<NameClaim, McpError> {
        if !is_valid_server_name(server_name) {
            return Err(McpError::InvalidServerName(server_name.to_owned()));
        }
        let registry = Arc::as_ptr(&self.registry.inner) as usize;
        NameClaim::claim(registry, server_name)
            .ok_or_else(|| McpError::ServerNameInUse(server_name.to_owned()))
    }

    async fn connect<T, E, A>(
        &self,
        claim: NameClaim,
        server_name: &str,
        transport: T,
        task_support: TaskSupport,
        child: Option<tokio::process::Child>,
    ) -> Result<McpConnection, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let handler = self.client();
        let service = handler
            .clone()
            .serve_with_lifecycle(transport, client::lifecycle())
            .await
            .map_err(|e| connect_error(server_name, &e))?;
        self.finish(
            claim,
            server_name,
            handler,
            service,
            (task_support, None),
            child,
        )
        .await
    }

    /// Checks the negotiated version and loads the tools of a started connection.
    async fn finish(
        &self,
        claim: NameClaim,
        server_name: &str,
        handler: ImportClient,
        service: RunningService<RoleClient, ImportClient>,
        (task_support, reauthorize): (TaskSupport, Option<Arc<Reauthorize>>),
        child: Option<tokio::process::Child>,
    ) -> Result<McpConnection, McpError> {
        let ImportClient {
            list_changed,
            progress,
            ..
        } = handler;
        // Negotiation: the server answers `server/discover` (2026-07-28) or, when it is older,
        // `initialize` with the offered version or an older one it speaks; a version this
        // client does not speak ends the connection.
        let version = service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.clone());
        if let Some(version) = version.filter(|v| !client::speaks(v)) {
            let _ = service.cancel().await;
            return Err(McpError::Connect {
                server: server_name.to_owned(),
                message: format!(
                    "the server answered protocol version {version}; this client speaks 2024-11-05 through {}",
                    client::NEWEST_VERSION
                ),
            });
        }
        // A re-sync must see the server's list as it is now, never a cached copy.
        service
            .peer()
            .set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
            .await;
        let link = CallLink {
            server: server_name.to_owned(),
            peer: service.peer().clone(),
            timeout: self.call_timeout,
            progress,
            reauthorize,
        };
        let syncer = Arc::new(Syncer::new(
            server_name.to_owned(),
            self.registry.clone(),
            self.scope.as_ref().map(Scope::id),
            link,
            task_support,
            self.loading,
        ));
        let peer = service.peer().clone();
        let subscription = if listen::needed(&peer) {
            listen::open(&peer, server_name).await
        } else {
            None
        };
        if let Err(error) = syncer.sync().await {
            syncer.close();
            let _ = service.cancel().await;
            return Err(error);
        }
        let resync = resync_worker(Arc::downgrade(&syncer), Arc::clone(&list_changed));
        let server = server_name.to_owned();
        let worker = tokio::spawn(async move {
            match subscription {
                Some(subscription) => {
                    let changes =
                        listen::tool_list_changes(peer, subscription, list_changed, server);
                    tokio::join!(resync, changes);
                }
                None => resync.await,
            }
        });
        Ok(McpConnection {
            syncer,
            service: Some(service),
            worker,
            child,
            _claim: claim,
        })
    }
}

/// The error of a failed handshake.
fn connect_error(server_name: &str, error: &ClientInitializeError) -> McpError {
    McpError::Connect {
        server: server_name.to_owned(),
        message: error.to_string(),
    }
}

/// Re-syncs after each (coalesced) `tools/list_changed`; failures are logged and keep (or,
/// for registry conflicts, clear) the generation as [`Syncer::sync`] describes.
async fn resync_worker(syncer: Weak<Syncer>, list_changed: Arc<Notify>) {
    loop {
        list_changed.notified().await;
        let Some(syncer) = syncer.upgrade() else {
            return;
        };
        if let Err(error) = syncer.sync().await {
            tracing::warn!(server = %syncer.server, "re-sync after tools/list_changed failed: {error}");
        }
    }
}

/// A live import: owns the MCP connection (and the server process for stdio) and the
/// registrations of the current generation of tools.
///
/// [`McpConnection::close`] (or dropping the handle) unregisters the tools, ends the session
/// and stops the server process.
pub struct McpConnection {
    syncer: Arc<Syncer>,
    service: Option<RunningService<RoleClient, ImportClient>>,
    worker: tokio::task::JoinHandle<()>,
    child: Option<tokio::process::Child>,
    _claim: NameClaim,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.syncer.server)
            .field("tools", &self.tools())
            .finish_non_exhaustive()
    }
}

impl McpConnection {
    /// The server name (the `<server>` of the public names).
    pub fn server_name(&self) -> &str {
        &self.syncer.server
    }

    /// The tools of the live generation, in listing order.
    pub fn tools(&self) -> Vec<ImportedTool> {
        self.syncer.tools()
    }

    /// Fetches the tool list again and swaps it in (what a `tools/list_changed` triggers).
    ///
    /// A fetch failure (or a duplicate name) keeps the previous generation and returns the
    /// error; a registry conflict leaves none of this server's tools registered.
    pub async fn resync(&self) -> Result<Vec<ImportedTool>, McpError> {
        self.syncer.sync().await
    }

    /// The number of finished syncs (the initial one included), updated after each — wait on
    /// it to observe a re-sync triggered by the server.
    pub fn syncs(&self) -> watch::Receiver<u64> {
        self.syncer.watch()
    }

    /// Unregisters the tools, ends the MCP session and stops the server process.
    pub async fn close(mut self) {
        self.syncer.close();
        self.worker.abort();
        if let Some(service) = self.service.take() {
            let _ = service.cancel().await;
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

impl Drop for McpConnection {
    fn drop(&mut self) {
        self.syncer.close();
        self.worker.abort();
        // The service cancels itself when dropped; the child is killed on drop.
    }
}
