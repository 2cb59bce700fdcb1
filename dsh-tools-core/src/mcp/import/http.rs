//! Streamable-HTTP imports: static headers (API keys), OAuth, and the start of a connection
//! with an authorization retry.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use reqwest::Url;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationCallback, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};

use super::client::{self, ImportClient};
use super::oauth::{self, McpOAuth, OAuthHttp};
use super::redirects;
use crate::mcp::McpError;

/// How an HTTP import reaches its server: headers sent with every request (e.g. an API key)
/// and OAuth ([`McpOAuth`]). Header values never appear in `Debug` output or errors.
///
/// ```
/// use dsh_tools_runtime::mcp::McpHttpOptions;
///
/// let options = McpHttpOptions::new().header("X-Api-Key", "s3cr3t").unwrap();
/// assert_eq!(format!("{options:?}"), r#"McpHttpOptions { headers: ["x-api-key"], oauth: None }"#);
/// assert!(McpHttpOptions::new().header("Bad Name", "v").is_err());
/// ```
#[derive(Clone, Default)]
pub struct McpHttpOptions {
    headers: HashMap<HeaderName, HeaderValue>,
    oauth: Option<McpOAuth>,
}

impl std::fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        f.debug_struct("McpHttpOptions")
            .field("headers", &names)
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl McpHttpOptions {
    /// No extra headers, no OAuth: what [`McpImport::connect_http`](super::McpImport::connect_http)
    /// uses.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `name: value` with every request (the value is marked sensitive). Fails when the
    /// name or the value is not a valid HTTP header; the error names the header, never the
    /// value.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, McpError> {
        let invalid = |reason: &str| McpError::InvalidHeader {
            name: name.to_owned(),
            reason: reason.to_owned(),
        };
        let name = HeaderName::try_from(name).map_err(|_| invalid("not a valid header name"))?;
        let mut value = HeaderValue::try_from(value)
            .map_err(|_| invalid("the value holds characters a header cannot"))?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Authorizes with OAuth when the server asks for it.
    pub fn oauth(mut self, oauth: McpOAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }
}

/// What an authorized connection keeps to authorize again when a call is refused (a token
/// revoked, a scope missing: step-up).
#[derive(Debug, Clone)]
pub(crate) struct Reauthorize {
    oauth: McpOAuth,
    client: OAuthHttp,
    url: String,
}

impl Reauthorize {
    /// How many authorizations one call may run.
    pub(crate) fn limit(&self) -> u32 {
        self.oauth.limit()
    }

    /// Authorizes anew for the server's `challenge`; later requests carry the new token. A
    /// 403 `insufficient_scope` naming a scope is a step-up: the same client asks for the
    /// union of the scopes it holds and the one required (rmcp's scope upgrade); anything else
    /// (a revoked token, an authorization server that changed) starts from discovery again.
    pub(crate) async fn run(&self, challenge: &str) -> Result<(), AuthError> {
        let mut manager = self.client.auth_manager.lock().await;
        let params = Url::parse(&self.url)
            .map(|base| WWWAuthenticateParams::parse(challenge, &base))
            .unwrap_or_default();
        let step_up = params
            .scope
            .as_deref()
            .filter(|_| params.is_insufficient_scope());
        if let (Some(scope), Some(agent)) = (step_up, self.oauth.agent()) {
            let authorization_url = manager.request_scope_upgrade(scope).await?;
            let redirect = oauth::visit(agent, &authorization_url).await?;
            let callback = AuthorizationCallback::from_redirect_url(&redirect)?;
            manager
                .exchange_code_for_token_with_issuer(
                    &callback.code,
                    &callback.csrf_token,
                    callback.issuer.as_deref(),
                )
                .await?;
            return Ok(());
        }
        let held = manager.get_current_scopes().await;
        *manager = self
            .oauth
            .authorize(&self.url, Some(challenge), &held)
            .await?;
        Ok(())
    }
}

/// Starts a connection to `url`, authorizing (up to the OAuth limit) when the server refuses.
pub(super) async fn start(
    handler: &ImportClient,
    server_name: &str,
    url: &str,
    options: &McpHttpOptions,
) -> Result<
    (
        RunningService<RoleClient, ImportClient>,
        Option<Arc<Reauthorize>>,
    ),
    McpError,
> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(options.headers.clone());
    let (http, refusal) = redirects::client(url).map_err(|message| McpError::Connect {
        server: server_name.to_owned(),
        message,
    })?;
    // A refused redirect says so; the transport's own error does not.
    let connect_error = |message: String| McpError::Connect {
        server: server_name.to_owned(),
        message: refusal.take().unwrap_or(message),
    };
    let Some(oauth) = &options.oauth else {
        let service = serve(handler, http, &config).await;
        return Ok((service.map_err(|e| connect_error(e.to_string()))?, None));
    };
    let auth_error = |e: AuthError| McpError::Authorization {
        server: server_name.to_owned(),
        message: e.to_string(),
    };
    let mut manager = oauth.stored(url).await.map_err(auth_error)?;
    let mut authorizations = 0;
    loop {
        let client = AuthClient::new(http.clone(), manager);
        let error = match serve(handler, client.clone(), &config).await {
            Ok(service) => {
                let oauth = oauth.clone();
                let url = url.to_owned();
                return Ok((service, Some(Arc::new(Reauthorize { oauth, client, url }))));
            }
            Err(error) => error,
        };
        let Some(challenge) = error.auth_challenge() else {
            return Err(connect_error(error.to_string()));
        };
        if authorizations == oauth.limit() {
            return Err(McpError::Authorization {
                server: server_name.to_owned(),
                message: format!(
                    "the server still refuses after {authorizations} authorizations ({challenge})"
                ),
            });
        }
        authorizations += 1;
        manager = oauth
            .authorize(url, Some(challenge), &[])
            .await
            .map_err(auth_error)?;
    }
}

/// `server/discover` first, and a new connection with the `initialize` handshake for a server
/// of an older revision that answers it with a result rather than an error.
async fn serve<C>(
    handler: &ImportClient,
    client: C,
    config: &StreamableHttpClientTransportConfig,
) -> Result<RunningService<RoleClient, ImportClient>, ClientInitializeError>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    let transport = || StreamableHttpClientTransport::with_client(client.clone(), config.clone());
    match handler
        .clone()
        .serve_with_lifecycle(transport(), client::lifecycle())
        .await
    {
        Err(ClientInitializeError::ExpectedInitResult(_)) => {
            handler
                .clone()
                .serve_with_lifecycle(transport(), ClientLifecycleMode::Initialize)
                .await
        }
        started => started,
    }
}
