//! The tower service in front of rmcp's: metadata, bearer token, scope of each `tools/call`.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};

use super::Authorizer;
use super::scopes::granted;

/// The body this service gets and passes on: read whole by the gate in front of it (within the
/// server's size and time limits), so the scope check can read its JSON.
type AuthBody = Full<Bytes>;
type BoxResponse = Response<BoxBody<Bytes, Infallible>>;

/// `inner` behind the authorization of `auth` (none: every request passes unchanged).
#[derive(Debug, Clone)]
pub(crate) struct AuthService<S> {
    inner: S,
    auth: Option<Arc<Authorizer>>,
}

impl<S> AuthService<S> {
    pub(crate) fn new(inner: S, auth: Option<Authorizer>) -> Self {
        Self {
            inner,
            auth: auth.map(Arc::new),
        }
    }
}

impl<S> tower_service::Service<Request<AuthBody>> for AuthService<S>
where
    S: tower_service::Service<Request<AuthBody>, Response = BoxResponse, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = BoxResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<BoxResponse, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<AuthBody>) -> Self::Future {
        let mut inner = self.inner.clone();
        let Some(auth) = self.auth.clone() else {
            return Box::pin(async move { inner.call(request).await });
        };
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            if auth.metadata.serves(parts.uri.path()) {
                return Ok(auth.metadata_response(&parts.method));
            }
            let scopes = match auth.authenticate(&parts.headers).await {
                Ok(scopes) => scopes,
                Err(refusal) => return Ok(refusal),
            };
            let body = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(never) => match never {},
            };
            if parts.method == Method::POST
                && let Some(refusal) = auth.check_calls(&scopes, &body)
            {
                return Ok(refusal);
            }
            inner
                .call(Request::from_parts(parts, Full::new(body)))
                .await
        })
    }
}

impl Authorizer {
    fn metadata_response(&self, method: &Method) -> BoxResponse {
        if method != Method::GET && method != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "GET only".into());
        }
        let body = self.metadata.document.to_string();
        let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }

    /// The scopes of the request's valid bearer token, or the 401 that refuses it.
    async fn authenticate(&self, headers: &HeaderMap) -> Result<BTreeSet<String>, BoxResponse> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(token) = token else {
            let challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata.url);
            return Err(challenged(StatusCode::UNAUTHORIZED, challenge, None));
        };
        match self.verifier.verify(token).await {
            Ok(claims) => Ok(granted(&claims.0)),
            Err(error) => {
                let description = quotable(&error.to_string());
                tracing::debug!("mcp-server: bearer token refused: {description}");
                let challenge = format!(
                    "Bearer error=\"invalid_token\", error_description=\"{description}\", \
                     resource_metadata=\"{}\"",
                    self.metadata.url
                );
                let body = json!({"error": "invalid_token", "error_description": description});
                Err(challenged(StatusCode::UNAUTHORIZED, challenge, Some(body)))
            }
        }
    }

    /// The refusal (403) of a message of the body that calls a tool whose scope the token
    /// lacks.
    fn check_calls(&self, scopes: &BTreeSet<String>, body: &[u8]) -> Option<BoxResponse> {
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            return None; // rmcp answers malformed JSON itself
        };
        let messages = match &message {
            Value::Array(batch) => batch.iter().collect(),
            single => vec![single],
        };
        for message in messages {
            if message["method"] != "tools/call" {
                continue;
            }
            let Some(tool) = message["params"]["name"].as_str() else {
                continue;
            };
            let needed = self.scopes.scope_for(tool, (self.read_only)(tool));
            if !scopes.contains(needed) {
                let description = quotable(&format!("tool {tool} needs scope {needed}"));
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{needed}\", \
                     error_description=\"{description}\", resource_metadata=\"{}\"",
                    self.metadata.url
                );
                let body = json!({"error": "insufficient_scope", "error_description": description, "scope": needed});
                return Some(challenged(StatusCode::FORBIDDEN, challenge, Some(body)));
            }
        }
        None
    }
}

/// A quoted-string value of a challenge parameter (RFC 6750 §3: no `"` nor `\`).
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}

fn challenged(status: StatusCode, challenge: String, body: Option<Value>) -> BoxResponse {
    let json = body.is_some();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    if json {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
    }
    response
}

fn plain(status: StatusCode, text: String) -> BoxResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}
