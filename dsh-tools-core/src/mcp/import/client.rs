//! The client side of an import connection: asks for a re-sync when the server's tool list
//! changes.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::ProgressNotificationParam;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RoleClient};

use crate::mcp::progress::ProgressRoutes;
use tokio::sync::Notify;

/// Our `ClientHandler`: no sampling, roots or elicitation; `tools/list_changed` wakes the
/// re-sync worker (several notifications before it runs coalesce into one re-sync).
#[derive(Debug, Clone, Default)]
pub(crate) struct ImportClient {
    pub(crate) list_changed: Arc<Notify>,
    /// Calls waiting for `notifications/progress`.
    pub(crate) progress: ProgressRoutes,
}

impl ClientHandler for ImportClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(&params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(OFFERED_VERSION)
    }
}

/// The version the `initialize` request offers to a server that does not answer
/// `server/discover`: the newest one that has an `initialize` handshake, so a server that
/// speaks it answers with it and an older server answers with its own (`docs/CONTRACTS.md`,
/// "MCP").
pub(crate) const OFFERED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// The newest revision this client speaks: stateless, found by `server/discover`, with the
/// protocol version and capabilities in every request's metadata.
pub(crate) const NEWEST_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// How a connection starts: `server/discover` for [`NEWEST_VERSION`] first; a server that
/// answers it with an error of an older revision (or not at all within rmcp's probe
/// timeout, 10 s) gets the `initialize` handshake with [`OFFERED_VERSION`].
pub(crate) fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![NEWEST_VERSION],
        legacy_version: Some(OFFERED_VERSION),
    }
}

/// Whether the version a server answered is one this client speaks: a known revision no
/// newer than [`NEWEST_VERSION`] (2024-11-05 through 2026-07-28).
pub(crate) fn speaks(version: &ProtocolVersion) -> bool {
    ProtocolVersion::KNOWN_VERSIONS.contains(version) && version.as_str() <= NEWEST_VERSION.as_str()
}
