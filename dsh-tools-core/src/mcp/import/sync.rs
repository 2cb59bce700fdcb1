//! Generations of imported tools: fetch every page first, then swap all-or-nothing
//! (`docs/CONTRACTS.md`, "MCP").

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::Loading;
use dsh_tools::exec::ScopeId;
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::watch;

use super::ImportedTool;
use super::call::CallLink;
use super::tap::TaskSupport;
use super::tool::RemoteTool;
use crate::mcp::McpError;
use crate::registry::{Registration, ToolRegistry};

/// Pages beyond this many are taken as a server looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// The registered tools of one generation.
#[derive(Default)]
struct Generation {
    registrations: Vec<Registration>,
    tools: Vec<ImportedTool>,
}

impl Generation {
    fn dispose(&mut self) {
        for registration in self.registrations.drain(..).rev() {
            registration.dispose();
        }
        self.tools.clear();
    }
}

/// Everything a sync needs, shared by the connection handle and the re-sync worker.
pub(crate) struct Syncer {
    pub(crate) server: String,
    registry: ToolRegistry,
    target: Option<ScopeId>,
    peer: Peer<RoleClient>,
    link: Arc<CallLink>,
    task_support: TaskSupport,
    /// How the imported tools are loaded (`McpImport::loading`).
    loading: Loading,
    /// Serialises syncs (a sync awaits the server while holding it).
    lock: tokio::sync::Mutex<()>,
    current: Mutex<Generation>,
    closed: AtomicBool,
    synced: watch::Sender<u64>,
}

impl Syncer {
    pub(crate) fn new(
        server: String,
        registry: ToolRegistry,
        target: Option<ScopeId>,
        link: CallLink,
        task_support: TaskSupport,
        loading: Loading,
    ) -> Self {
        Self {
            peer: link.peer.clone(),
            link: Arc::new(link),
            server,
            registry,
            target,
            task_support,
            loading,
            lock: tokio::sync::Mutex::new(()),
            current: Mutex::new(Generation::default()),
            closed: AtomicBool::new(false),
            synced: watch::channel(0).0,
        }
    }

    /// The tools of the live generation.
    pub(crate) fn tools(&self) -> Vec<ImportedTool> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tools
            .clone()
    }

    /// Counts finished syncs (successful or not) for waiters.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.synced.subscribe()
    }

    /// Fetches the server's tool list and swaps it in. A fetch failure keeps the previous
    /// generation; a registry conflict leaves no tool of this server registered.
    pub(crate) async fn sync(&self) -> Result<Vec<ImportedTool>, McpError> {
        let _serial = self.lock.lock().await;
        let outcome = self.sync_locked().await;
        self.synced.send_modify(|n| *n += 1);
        outcome
    }

    async fn sync_locked(&self) -> Result<Vec<ImportedTool>, McpError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(McpError::Closed(self.server.clone()));
        }
        // Phase 1: every page, every definition, without touching the registry.
        let listed = self.fetch_all().await?;
        let mut seen = HashSet::new();
        let mut definitions = Vec::with_capacity(listed.len());
        let mut tools = Vec::with_capacity(listed.len());
        for tool in &listed {
            let task_required = self.task_support.requires_task(&tool.name);
            let remote = RemoteTool::from_listing(&self.server, tool, task_required);
            if !seen.insert(remote.public_name.clone()) {
                return Err(McpError::DuplicateTool {
                    server: self.server.clone(),
                    raw: remote.raw_name,
                });
            }
            let definition = remote
                .definition(Arc::clone(&self.link))
                .map_err(|source| McpError::Definition {
                    server: self.server.clone(),
                    raw: remote.raw_name.clone(),
                    source,
                })?;
            definitions.push(definition);
            tools.push(ImportedTool {
                public_name: remote.public_name,
                raw_name: remote.raw_name,
            });
        }

        // Phase 2: dispose the previous generation, register the new one all-or-nothing.
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        current.dispose();
        if self.closed.load(Ordering::SeqCst) {
            return Err(McpError::Closed(self.server.clone()));
        }
        let mut registrations = Vec::with_capacity(definitions.len());
        for definition in definitions {
            let definition = match self.loading {
                Loading::Auto => definition,
                loading => definition.with_loading(loading),
            };
            match self.registry.register_in(self.target, definition) {
                Ok(registration) => registrations.push(registration),
                Err(source) => {
                    registrations.iter().rev().for_each(Registration::dispose);
                    let error = McpError::Registration {
                        server: self.server.clone(),
                        source,
                    };
                    tracing::error!("{error}");
                    return Err(error);
                }
            }
        }
        current.registrations = registrations;
        current.tools = tools.clone();
        Ok(tools)
    }

    async fn fetch_all(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let failed = |message: String| McpError::ListFailed {
            server: self.server.clone(),
            message,
        };
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut authorizations = 0;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            // A refusal on an OAuth connection (the token revoked, the authorization server
            // changed) is authorized again and the page fetched again.
            let page = loop {
                let error = match self.peer.list_tools(params.clone()).await {
                    Ok(page) => break page,
                    Err(error) => error,
                };
                let retry = match error.auth_challenge() {
                    Some(challenge) => self
                        .link
                        .reauthorize(challenge, &mut authorizations)
                        .await
                        .map_err(|e| failed(e.to_string()))?,
                    None => false,
                };
                if !retry {
                    return Err(failed(error.to_string()));
                }
            };
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        Err(failed(format!("more than {MAX_PAGES} pages")))
    }

    /// Disposes the live generation and refuses later syncs. Safe to call from `Drop`: a sync
    /// that is registering right now sees the flag and leaves nothing behind.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .dispose();
    }
}
