//! The client side of an import connection: asks for a re-sync when the server's tool list
//! changes.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;

/// Our `ClientHandler`: no sampling, roots or elicitation; `tools/list_changed` wakes the
/// re-sync worker (several notifications before it runs coalesce into one re-sync).
#[derive(Debug, Clone, Default)]
pub(crate) struct ImportClient {
    pub(crate) list_changed: Arc<Notify>,
}

impl ClientHandler for ImportClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
    }
}
