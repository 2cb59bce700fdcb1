//! Sessions with a cap: rmcp's in-memory session manager, plus a book of the live sessions
//! that the gate consults before an `initialize` and that ends sessions whose client never
//! sent `notifications/initialized`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use tokio_util::sync::CancellationToken;

use super::limits::HttpLimits;

/// The live sessions (with the creation time of those still pending) and the `initialize`
/// requests under way. `live + reserved` never passes the cap.
#[derive(Debug)]
pub(super) struct SessionBook {
    max: usize,
    state: Mutex<BookState>,
}

#[derive(Debug, Default)]
struct BookState {
    /// `Some(created)` until the client's `notifications/initialized`.
    live: HashMap<SessionId, Option<Instant>>,
    reserved: usize,
}

/// A place for one session, held while an `initialize` is under way.
pub(super) struct Reservation(Arc<SessionBook>);

impl Drop for Reservation {
    fn drop(&mut self) {
        self.0.state().reserved -= 1;
    }
}

impl SessionBook {
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            state: Mutex::default(),
        })
    }

    fn state(&self) -> MutexGuard<'_, BookState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a new session, or `None` at the cap.
    pub(super) fn reserve(self: &Arc<Self>) -> Option<Reservation> {
        let mut state = self.state();
        if state.live.len() + state.reserved >= self.max {
            return None;
        }
        state.reserved += 1;
        Some(Reservation(Arc::clone(self)))
    }

    /// Sessions pending since before `now - timeout`.
    fn stale(&self, timeout: Duration) -> Vec<SessionId> {
        let now = Instant::now();
        self.state()
            .live
            .iter()
            .filter(|(_, created)| created.is_some_and(|at| now.duration_since(at) >= timeout))
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// rmcp's [`LocalSessionManager`] keeping the [`SessionBook`].
#[derive(Debug)]
pub(super) struct BookedSessions {
    inner: LocalSessionManager,
    book: Arc<SessionBook>,
}

impl BookedSessions {
    /// The manager, and a task ending sessions still pending after
    /// [`HttpLimits::pending_session_timeout`] (until `stop`).
    pub(super) fn start(
        limits: &HttpLimits,
        book: Arc<SessionBook>,
        stop: CancellationToken,
    ) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.session_idle_timeout);
        let sessions = Arc::new(Self { inner, book });
        let timeout = limits.pending_session_timeout;
        let tick = (timeout / 4).max(Duration::from_millis(10));
        let reaper = Arc::clone(&sessions);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(tick) => {}
                }
                for id in reaper.book.stale(timeout) {
                    tracing::debug!(session_id = %id, "mcp-server: session never initialized: ended");
                    let _ = reaper.close_session(&id).await;
                }
            }
        });
        sessions
    }
}

impl SessionManager for BookedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.book
            .state()
            .live
            .insert(id.clone(), Some(Instant::now()));
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.book.state().live.remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if let ClientJsonRpcMessage::Notification(notification) = &message
            && matches!(
                notification.notification,
                ClientNotification::InitializedNotification(_)
            )
            && let Some(pending) = self.book.state().live.get_mut(id)
        {
            *pending = None;
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}
