//! The gate in front of rmcp's HTTP service: the session cap, and request bodies read within
//! a deadline and a size limit and checked for JSON, so that a client's mistake gets a 4xx
//! (never a 500) with the JSON-RPC error the streamable HTTP transport asks for.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes};
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::json;
use tower_service::Service;

use super::accept::HyperRequest;
use super::limits::HttpLimits;
use super::sessions::SessionBook;

/// What the gate answers with (rmcp's response type).
pub(super) type GateResponse = Response<BoxBody<Bytes, Infallible>>;

/// The inner service: rmcp's (possibly behind other layers), fed whole bodies.
pub(super) trait GateService:
    Service<HyperRequest, Response = GateResponse, Error = Infallible, Future = GateFuture>
    + Clone
    + Send
    + 'static
{
}

impl<S> GateService for Gate<S> where S: Inner {}

/// What the gate wraps: a service of whole bodies (one name for the bounds its impls share).
pub(super) trait Inner:
    Service<Request<Full<Bytes>>, Response = GateResponse, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static
{
}

impl<S> Inner for S where
    S: Service<Request<Full<Bytes>>, Response = GateResponse, Error = Infallible, Future: Send>
        + Clone
        + Send
        + 'static
{
}

type GateFuture = Pin<Box<dyn Future<Output = Result<GateResponse, Infallible>> + Send>>;

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Wraps the inner service with the limits and the session book.
#[derive(Clone)]
pub(super) struct Gate<S> {
    inner: S,
    limits: Arc<HttpLimits>,
    sessions: Arc<SessionBook>,
}

impl<S> Gate<S> {
    pub(super) fn new(inner: S, limits: Arc<HttpLimits>, sessions: Arc<SessionBook>) -> Self {
        Self {
            inner,
            limits,
            sessions,
        }
    }
}

impl<S> Service<HyperRequest> for Gate<S>
where
    S: Inner,
{
    type Response = GateResponse;
    type Error = Infallible;
    type Future = GateFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HyperRequest) -> Self::Future {
        let gate = self.clone();
        Box::pin(async move { Ok(gate.handle(request).await) })
    }
}

impl<S> Gate<S>
where
    S: Inner,
{
    async fn handle(mut self, request: HyperRequest) -> GateResponse {
        let (parts, body) = request.into_parts();
        if parts.method != Method::POST {
            // GET (a stream) and DELETE carry no body rmcp reads.
            let request = Request::from_parts(parts, Full::new(Bytes::new()));
            return self
                .inner
                .call(request)
                .await
                .unwrap_or_else(|n| match n {});
        }
        // A POST without a session is an `initialize`: it may open one.
        let _reservation = if parts.headers.contains_key(SESSION_HEADER) {
            None
        } else {
            match self.sessions.reserve() {
                Some(reservation) => Some(reservation),
                None => return busy(),
            }
        };
        let bytes = match read_body(body, &parts.headers, &self.limits).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        if is_json(&parts.headers)
            && let Some(response) = refuse_message(&bytes)
        {
            return response;
        }
        let request = Request::from_parts(parts, Full::new(bytes));
        self.inner
            .call(request)
            .await
            .unwrap_or_else(|n| match n {})
    }
}

/// The whole body, within the limits: `413` past the size, `408` past the deadline, `400`
/// for a body that breaks HTTP framing (a bad chunk).
async fn read_body<B>(
    body: B,
    headers: &hyper::HeaderMap,
    limits: &HttpLimits,
) -> Result<Bytes, GateResponse>
where
    B: Body<Data = Bytes> + Send,
    B::Error: std::fmt::Display,
{
    let max = limits.max_body_bytes;
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large(max));
    }
    let collect = async {
        let mut body = std::pin::pin!(body);
        let mut collected = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                tracing::debug!("mcp-server: unreadable request body: {e}");
                closing(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the request body is malformed",
                )
            })?;
            if let Ok(data) = frame.into_data() {
                if data.len() > max - collected.len() {
                    return Err(too_large(max));
                }
                collected.extend_from_slice(&data);
            }
        }
        Ok(Bytes::from(collected))
    };
    match tokio::time::timeout(limits.body_timeout, collect).await {
        Ok(read) => read,
        Err(_) => Err(closing(
            StatusCode::REQUEST_TIMEOUT,
            "Request Timeout: the request body did not arrive in time",
        )),
    }
}

/// Whether the request says its body is JSON (rmcp answers 415 to anything else).
fn is_json(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// A body that is not JSON is a parse error (`-32700`); JSON that is not a JSON-RPC message
/// an invalid request (`-32600`); both `400 Bad Request`, with `id: null` (JSON-RPC 2.0).
/// `None`: the body is a JSON-RPC message.
fn refuse_message(bytes: &[u8]) -> Option<GateResponse> {
    let error = serde_json::from_slice::<ClientJsonRpcMessage>(bytes).err()?;
    let (code, message) = match error.classify() {
        serde_json::error::Category::Data => (-32600, "Invalid Request"),
        _ => (-32700, "Parse error"),
    };
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": format!("{message}: {}", excerpt(&error.to_string()))},
    });
    let mut response = plain(StatusCode::BAD_REQUEST, body.to_string());
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Some(response)
}

/// At most the first 200 characters of a message that may quote the request.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `503` with `Retry-After`: the session cap is reached.
fn busy() -> GateResponse {
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "Service Unavailable: too many sessions".into(),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(HttpLimits::RETRY_AFTER_SECS));
    response
}

fn too_large(max: usize) -> GateResponse {
    closing(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("Payload Too Large: request body exceeds {max} bytes"),
    )
}

/// A response after which the connection is closed (the rest of the body is not read).
fn closing(status: StatusCode, text: &str) -> GateResponse {
    let mut response = plain(status, text.to_owned());
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

fn plain(status: StatusCode, text: String) -> GateResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}
