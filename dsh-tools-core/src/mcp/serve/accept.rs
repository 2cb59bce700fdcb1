//! The accept loop: `TCP_NODELAY`, the connection cap, hyper's timer and header timeout, and
//! a back-off when the process runs out of file descriptors.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::gate::{Gate, GateService};
use super::limits::HttpLimits;

/// The first pause after an accept error that is not about one connection (EMFILE, ENFILE,
/// ENOBUFS, ...); it doubles up to [`MAX_BACKOFF`] while the errors last.
const FIRST_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What a connection past the cap reads before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\n\
connection: close\r\n\r\n";

/// Accepts until `stop`, serving each connection with `service` behind the gate.
pub(super) async fn accept_loop<S>(
    listener: TcpListener,
    service: Gate<S>,
    limits: HttpLimits,
    stop: CancellationToken,
) where
    Gate<S>: GateService,
{
    let mut connections = JoinSet::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut backoff = FIRST_BACKOFF;
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                // Out of descriptors (or memory): accepting again at once would spin; the
                // waiting clients stay in the backlog until a connection closes.
                if backoff == FIRST_BACKOFF {
                    tracing::warn!("mcp-server: accept failed, backing off: {error}");
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        backoff = FIRST_BACKOFF;
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        // Responses are written in small pieces (SSE events): without it each would wait for
        // the client's delayed ACK (~40 ms on Linux).
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        let stop = stop.clone();
        let header_timeout = limits.header_timeout;
        connections.spawn(async move {
            let _slot = slot;
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service);
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

/// Errors about the one connection being accepted (the next accept may well succeed).
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Tells a connection past the cap to come back later, without waiting for it.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(BUSY);
}

/// The request type hyper hands the gate.
pub(super) type HyperRequest = hyper::Request<Incoming>;
