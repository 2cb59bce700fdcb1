//! OAuth for HTTP imports, on rmcp's `auth` feature: discovery (Protected Resource Metadata,
//! RFC 8414 / OIDC), registration (pre-registered, Client ID Metadata Document, dynamic),
//! PKCE S256, RFC 8707 `resource`, RFC 9207 `iss`, scope selection and refresh are rmcp's; this
//! module decides when to authorize (a 401 or a 403 `insufficient_scope`) and hands the
//! authorization URL to an [`AuthorizationAgent`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, ClientCredentialsConfig,
    CredentialStore, InMemoryCredentialStore, OAuthState, StoredCredentials, WWWAuthenticateParams,
};

/// The future an [`AuthorizationAgent`] returns: the redirect URL, or why there is none.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Takes the user through an authorization server's login and consent: shows (or follows) the
/// authorization URL and returns the URL the authorization server redirected back to (with
/// `code`, `state` and, per RFC 9207, `iss`).
///
/// A terminal host prints the URL and listens on a loopback `redirect_uri`; a test or a
/// headless host follows the URL itself.
pub trait AuthorizationAgent: Send + Sync {
    /// The redirect URI registered for (and sent with) every authorization request.
    fn redirect_uri(&self) -> String;

    /// Has the user visit `authorization_url`; resolves to the full redirect URL.
    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a>;
}

/// OAuth for [`McpImport::connect_http_with`](super::McpImport::connect_http_with): when the
/// server answers 401 (or 403 `insufficient_scope`), the client discovers the authorization
/// server, registers (or uses a pre-registered client or a Client ID Metadata Document), has the
/// [`AuthorizationAgent`] obtain the code, exchanges it and retries; tokens live in the
/// credential store (in memory unless one is given) and are refreshed by rmcp.
///
/// The client secret and tokens never appear in `Debug` output.
///
/// ```no_run
/// use dsh_tools_runtime::mcp::{AgentFuture, AuthorizationAgent, McpHttpOptions, McpOAuth};
///
/// struct Printer;
/// impl AuthorizationAgent for Printer {
///     fn redirect_uri(&self) -> String { "http://127.0.0.1:8976/callback".into() }
///     fn authorize<'a>(&'a self, url: &'a str) -> AgentFuture<'a> {
///         Box::pin(async move {
///             println!("open {url}");
///             Err("no listener in this example".to_owned())
///         })
///     }
/// }
/// let options = McpHttpOptions::new().oauth(McpOAuth::new(Printer).client_name("my host"));
/// assert!(!format!("{options:?}").contains("secret"));
/// ```
#[derive(Clone)]
pub struct McpOAuth {
    grant: Grant,
    store: Arc<dyn CredentialStore>,
    client_name: String,
    client_metadata_url: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    scopes: Vec<String>,
    max_authorizations: u32,
}

/// How tokens are obtained.
#[derive(Clone)]
enum Grant {
    /// The authorization-code flow, the user taken through it by the agent.
    Code(Arc<dyn AuthorizationAgent>),
    /// The client-credentials grant of a confidential client (no user).
    ClientCredentials,
}

impl std::fmt::Debug for McpOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grant = match self.grant {
            Grant::Code(_) => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
        };
        f.debug_struct("McpOAuth")
            .field("grant", &grant)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("scopes", &self.scopes)
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

impl McpOAuth {
    /// How many authorizations one connection attempt (or one call's step-up) may run before it
    /// gives up: 3.
    pub const DEFAULT_MAX_AUTHORIZATIONS: u32 = 3;

    /// OAuth through `agent`, with tokens in memory, client name `dsh-tools`, dynamic
    /// registration and the scopes rmcp selects (the challenge's, else the resource's).
    pub fn new(agent: impl AuthorizationAgent + 'static) -> Self {
        Self::with_grant(Grant::Code(Arc::new(agent)))
    }

    /// OAuth by the client-credentials grant, for hosts with no user at hand: `client_id` and
    /// `client_secret` are a confidential client's, registered with the authorization server
    /// beforehand; the token is asked for the server's URL as the RFC 8707 `resource`.
    pub fn client_credentials(client_id: impl Into<String>, client_secret: String) -> Self {
        Self::with_grant(Grant::ClientCredentials)
            .preregistered_client(client_id, Some(client_secret))
    }

    fn with_grant(grant: Grant) -> Self {
        Self {
            grant,
            store: Arc::new(InMemoryCredentialStore::new()),
            client_name: "dsh-tools".to_owned(),
            client_metadata_url: None,
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            max_authorizations: Self::DEFAULT_MAX_AUTHORIZATIONS,
        }
    }

    /// Keeps the client registration and tokens in `store` (e.g. a
    /// [`TokenFile`](super::TokenFile) entry), so they outlive the process.
    pub fn credential_store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The client name sent with dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as the client id by
    /// authorization servers that support it.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client registered with the authorization server beforehand (no registration then).
    pub fn preregistered_client(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = client_secret;
        self
    }

    /// The scopes to request instead of those rmcp selects.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How many authorizations in a row one connection attempt (or one call) may run.
    pub fn max_authorizations(mut self, max: u32) -> Self {
        self.max_authorizations = max;
        self
    }

    pub(super) fn limit(&self) -> u32 {
        self.max_authorizations
    }

    /// A manager for `url` holding what the store has (tokens bound to the issuer that issued
    /// them: rmcp discards them when the server's authorization server changed).
    pub(super) async fn stored(&self, url: &str) -> Result<AuthorizationManager, AuthError> {
        let mut manager = AuthorizationManager::new(url).await?;
        manager.set_credential_store(SharedStore(Arc::clone(&self.store)));
        if self
            .store
            .load()
            .await?
            .is_some_and(|c| c.token_response.is_some())
        {
            manager.initialize_from_store().await?;
        }
        Ok(manager)
    }

    /// The agent of the authorization-code flow (none for client credentials).
    pub(super) fn agent(&self) -> Option<&dyn AuthorizationAgent> {
        match &self.grant {
            Grant::Code(agent) => Some(agent.as_ref()),
            Grant::ClientCredentials => None,
        }
    }

    /// Runs one authorization for `url`, seeded by the server's `WWW-Authenticate` challenge.
    /// The client-credentials grant asks for the configured scopes, else for those `held`
    /// (by the token being replaced) and those the challenge names. A token that is not a
    /// bearer token is refused and forgotten.
    pub(super) async fn authorize(
        &self,
        url: &str,
        challenge: Option<&str>,
        held: &[String],
    ) -> Result<AuthorizationManager, AuthError> {
        let manager = self.grant(url, challenge, held).await?;
        let (_, token) = manager.get_credentials().await?;
        let kind = token
            .and_then(|token| serde_json::to_value(token).ok())
            .map(|token| token["token_type"].clone());
        match kind {
            None => Ok(manager),
            Some(serde_json::Value::String(kind)) if kind.eq_ignore_ascii_case("bearer") => {
                Ok(manager)
            }
            Some(kind) => {
                self.store.clear().await?;
                Err(AuthError::InternalError(format!(
                    "the token endpoint issued a token of type {kind}; this client sends bearer \
                     tokens only"
                )))
            }
        }
    }

    async fn grant(
        &self,
        url: &str,
        challenge: Option<&str>,
        held: &[String],
    ) -> Result<AuthorizationManager, AuthError> {
        let mut manager = AuthorizationManager::new(url).await?;
        manager.set_credential_store(SharedStore(Arc::clone(&self.store)));
        let mut state = OAuthState::Unauthorized(manager);
        let Some(agent) = self.agent() else {
            let mut scopes = self.scopes.clone();
            if scopes.is_empty() {
                let challenged = challenge.and_then(|c| {
                    let base = reqwest::Url::parse(url).ok()?;
                    WWWAuthenticateParams::parse(c, &base).scope
                });
                scopes.extend(held.iter().cloned());
                for scope in challenged.iter().flat_map(|s| s.split_whitespace()) {
                    if !scopes.iter().any(|held| held == scope) {
                        scopes.push(scope.to_owned());
                    }
                }
            }
            let config = ClientCredentialsConfig::ClientSecret {
                client_id: self.client_id.clone().unwrap_or_default(),
                client_secret: self.client_secret.clone().unwrap_or_default(),
                scopes,
                resource: Some(url.to_owned()),
            };
            state.authenticate_client_credentials(config).await?;
            return state.into_authorization_manager().ok_or_else(|| {
                AuthError::InternalError("no authorization after the grant".into())
            });
        };
        let mut request = AuthorizationRequest::new(agent.redirect_uri())
            .with_client_name(self.client_name.clone())
            .with_scopes(self.scopes.clone());
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        if let Some(url) = &self.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        if let Some(id) = &self.client_id {
            request = request.with_preregistered_client(id.clone());
        }
        if let Some(secret) = &self.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        state.start_authorization(request).await?;
        let authorization_url = state.get_authorization_url().await?;
        let redirect = visit(agent, &authorization_url).await?;
        state.handle_callback_url(&redirect).await?;
        state
            .into_authorization_manager()
            .ok_or_else(|| AuthError::InternalError("no authorization after the callback".into()))
    }
}

/// Has `agent` take the user through `authorization_url`; the redirect URL. An authorization
/// endpoint reached over plain HTTP on another machine is refused before the user sees it.
pub(super) async fn visit(
    agent: &dyn AuthorizationAgent,
    authorization_url: &str,
) -> Result<String, AuthError> {
    secure(authorization_url)?;
    agent
        .authorize(authorization_url)
        .await
        .map_err(AuthError::InternalError)
}

/// Refuses an authorization URL that is neither `https` nor `http` on a loopback host; the
/// error names the endpoint (scheme, host, path: the query holds the request's state).
fn secure(authorization_url: &str) -> Result<(), AuthError> {
    let url = reqwest::Url::parse(authorization_url).map_err(|e| {
        AuthError::InternalError(format!("the authorization URL is not a URL: {e}"))
    })?;
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = bare
        .parse::<std::net::IpAddr>()
        .map_or(bare == "localhost" || bare.ends_with(".localhost"), |ip| {
            ip.is_loopback()
        });
    if url.scheme() == "https" || (url.scheme() == "http" && loopback) {
        return Ok(());
    }
    Err(AuthError::InternalError(format!(
        "the authorization endpoint {}://{host}{} is neither https nor on this machine",
        url.scheme(),
        url.path()
    )))
}

/// A shared store handed to each manager (rmcp takes stores by value).
struct SharedStore(Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }
}

/// The HTTP client of an authorized connection.
pub(super) type OAuthHttp = AuthClient<reqwest::Client>;
