//! Progress over MCP (`docs/CONTRACTS.md`, "Progress"): a served call's progress goes to the
//! client that sent a `progressToken`; an imported tool's `notifications/progress` go to the
//! calling tool's run context.

use std::time::Duration;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::exec::{ProgressObserver, ToolRunContext};
use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken, RequestMetaObject};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// At most this many forwarded reports per second per call (first and final always pass).
pub(crate) const FORWARD_INTERVAL: Duration = Duration::from_millis(100);

/// The `progressToken` of a request's `_meta` (a string or an integer).
pub(crate) fn token_of(meta: &RequestMetaObject) -> Option<ProgressToken> {
    let meta = serde_json::to_value(meta).ok()?;
    let token = match meta.get("progressToken")? {
        Value::String(s) => NumberOrString::String(s.as_str().into()),
        Value::Number(n) => NumberOrString::Number(n.as_i64()?),
        _ => return None,
    };
    Some(ProgressToken(token))
}

/// What the forwarding task of one served call receives.
enum Forward {
    Notify(ProgressNotificationParam),
    Flush(oneshot::Sender<()>),
}

/// Sends a served call's progress to the client as `notifications/progress` with the token the
/// request carried: rate-limited ([`FORWARD_INTERVAL`]), in report order, by one task per call.
pub(crate) struct ClientProgress {
    tx: mpsc::UnboundedSender<Forward>,
    observer: ProgressObserver,
}

impl ClientProgress {
    pub(crate) fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Forward>();
        tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                match message {
                    Forward::Notify(param) => {
                        if peer.notify_progress(param).await.is_err() {
                            return;
                        }
                    }
                    Forward::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        let sender = tx.clone();
        let observer = ProgressObserver::new(move |_, progress| {
            let mut param = ProgressNotificationParam::new(token.clone(), progress.done);
            param.total = progress.total;
            param.message = progress.message.clone();
            let _ = sender.send(Forward::Notify(param));
        })
        .throttled(FORWARD_INTERVAL);
        Self { tx, observer }
    }

    /// The observer to put on the call.
    pub(crate) fn observer(&self) -> ProgressObserver {
        self.observer.clone()
    }

    /// Waits until every report made so far has been sent (before the call's result is: a
    /// client may stop listening for a token once its request is answered).
    pub(crate) async fn flush(self) {
        let (done, sent) = oneshot::channel();
        if self.tx.send(Forward::Flush(done)).is_ok() {
            let _ = sent.await;
        }
    }
}

/// The imported calls waiting for progress, by the `progressToken` of their request (rmcp's
/// client gives every request one).
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, ToolRunContext>>>,
}

/// Removes its route when the call ends (however it ends).
pub(crate) struct Route {
    routes: Arc<Mutex<HashMap<ProgressToken, ToolRunContext>>>,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

impl ProgressRoutes {
    /// Routes `token`'s notifications to `ctx` while the returned guard lives, when `ctx` has
    /// somewhere to report progress to.
    pub(crate) fn open(&self, token: &ProgressToken, ctx: &ToolRunContext) -> Option<Route> {
        ctx.progress_observer()?;
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), ctx.clone());
        Some(Route {
            routes: Arc::clone(&self.routes),
            token: token.clone(),
        })
    }

    /// A server's `notifications/progress`: to the call whose request carried the token
    /// (unknown or finished tokens are ignored).
    pub(crate) fn deliver(&self, param: &ProgressNotificationParam) {
        let ctx = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&param.progress_token)
            .cloned();
        if let Some(ctx) = ctx {
            ctx.progress(param.progress, param.total, param.message.as_deref());
        }
    }
}
