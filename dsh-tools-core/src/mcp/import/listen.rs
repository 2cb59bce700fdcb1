//! `tools/list_changed` from a server of the stateless revision (2026-07-28), which sends
//! notifications only on a `subscriptions/listen` stream the client opened (an older server
//! sends them unasked, to [`ImportClient`](super::client::ImportClient)).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, ServiceError, Subscription};
use tokio::sync::Notify;

/// How long after a subscription ended the next one opens: a server that ends each one at
/// once is asked once a second, not in a busy loop.
const RELISTEN_DELAY: Duration = Duration::from_secs(1);

/// Whether the server must be asked for its `tools/list_changed`: it speaks a revision
/// without `initialize` and declared that its tool list changes.
pub(super) fn needed(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        !info.protocol_version.has_initialize()
            && info
                .capabilities
                .tools
                .as_ref()
                .and_then(|tools| tools.list_changed)
                == Some(true)
    })
}

/// Opens the `subscriptions/listen` stream for `tools/list_changed`, before the first
/// listing so no change between the two is missed; `None` (logged) when the server refuses.
pub(super) async fn open(peer: &Peer<RoleClient>, server: &str) -> Option<Subscription> {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    match peer.listen(filter).await {
        Ok(subscription) => Some(subscription),
        Err(ServiceError::TransportClosed) => None,
        Err(error) => {
            tracing::warn!(%server, "subscriptions/listen for tools/list_changed failed: {error}");
            None
        }
    }
}

/// Drains `subscription`, waking the re-sync worker through `changed` on each
/// `tools/list_changed`, for as long as the connection lives. A subscription that ends is
/// opened again (and the list re-synced, as a change may have come while none was open).
pub(super) async fn tool_list_changes(
    peer: Peer<RoleClient>,
    mut subscription: Subscription,
    changed: Arc<Notify>,
    server: String,
) {
    loop {
        loop {
            match subscription.next().await {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                    changed.notify_one();
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(%server, "the tools/list_changed subscription broke: {error}");
                    break;
                }
            }
        }
        if peer.is_transport_closed() {
            return;
        }
        tokio::time::sleep(RELISTEN_DELAY).await;
        let Some(next) = open(&peer, &server).await else {
            return;
        };
        subscription = next;
        changed.notify_one();
    }
}
