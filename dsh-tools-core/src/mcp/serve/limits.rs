//! The limits of the streamable-HTTP server: sessions, connections, timeouts, body size.

use std::time::Duration;

/// What one streamable-HTTP server holds at most, and how long it waits
/// ([`McpServer::with_http_limits`](super::McpServer::with_http_limits)). The defaults bound
/// what a flood of sessions or connections can cost (about 60 MB at the session cap) and close
/// connections that stall.
///
/// ```
/// use std::time::Duration;
/// use dsh_tools_runtime::mcp::HttpLimits;
///
/// let limits = HttpLimits { max_sessions: 64, header_timeout: Duration::from_secs(5), ..HttpLimits::default() };
/// assert_eq!(limits.max_connections, HttpLimits::default().max_connections);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Sessions held at once (default 1,024). An `initialize` past the cap gets
    /// `503 Service Unavailable` with `Retry-After`.
    pub max_sessions: usize,
    /// How long a session that answered `initialize` may go without the client's
    /// `notifications/initialized` before it is ended (default 10 s).
    pub pending_session_timeout: Duration,
    /// How long an initialized session lives without any request (default 300 s).
    pub session_idle_timeout: Duration,
    /// Connections held at once (default 1,024). A connection past the cap gets
    /// `503 Service Unavailable` with `Retry-After` and is closed.
    pub max_connections: usize,
    /// How long the server waits for a request's head, counted from the moment the connection
    /// waits for a request: on a new connection, and on a kept-alive one after its last
    /// response (default 10 s). It closes both slow-header and idle connections.
    pub header_timeout: Duration,
    /// How long the server waits for a whole request body once the head is in (default 30 s).
    /// Past it the request gets `408 Request Timeout` and the connection is closed.
    pub body_timeout: Duration,
    /// The largest request body accepted (default 4 MiB); a larger one gets
    /// `413 Payload Too Large`.
    pub max_body_bytes: usize,
}

impl HttpLimits {
    /// The `Retry-After` of a 503 (seconds).
    pub(crate) const RETRY_AFTER_SECS: u64 = 1;
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_sessions: 1024,
            pending_session_timeout: Duration::from_secs(10),
            session_idle_timeout: Duration::from_secs(300),
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 4 * 1024 * 1024,
        }
    }
}
