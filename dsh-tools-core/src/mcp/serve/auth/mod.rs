//! Authorization of the HTTP server: an OAuth 2.1 resource server as the MCP authorization
//! specification asks (`docs/CONTRACTS.md`, "MCP server authorization").
//!
//! - `metadata`: the Protected Resource Metadata document (RFC 9728) and its URLs.
//! - `jwt`: bearer tokens verified against the issuer's JWKS (audience bound, RFC 8707).
//! - `scopes`: the scope each tool needs.
//! - `layer`: the tower service in front of rmcp's that applies all of it.

mod jwt;
mod layer;
mod metadata;
mod scopes;

use std::net::SocketAddr;
use std::time::Duration;

use self::jwt::Verifier;
pub(crate) use self::layer::AuthService;
use self::metadata::ResourceMetadata;
pub use self::scopes::ScopeMap;

/// The authorization of a served HTTP endpoint ([`McpServer::with_auth`]): every request needs
/// a bearer token, a JWT access token that `issuer` signed (checked against the keys its
/// metadata's `jwks_uri` serves), whose `aud` is this server's resource URL, unexpired; a
/// `tools/call` also needs the tool's scope ([`ScopeMap`]).
///
/// ```
/// use std::time::Duration;
/// use dsh_tools_runtime::mcp::{McpAuth, ScopeMap};
///
/// let auth = McpAuth::new("https://auth.example.com")
///     .resource("https://tools.example.com/mcp")
///     .scope_map(ScopeMap::default())
///     .leeway(Duration::from_secs(5));
/// assert_eq!(auth.issuer(), "https://auth.example.com");
/// ```
///
/// [`McpServer::with_auth`]: crate::mcp::McpServer::with_auth
#[derive(Debug, Clone)]
pub struct McpAuth {
    issuer: String,
    resource: Option<String>,
    scopes: ScopeMap,
    leeway: Duration,
    refetch_interval: Duration,
}

impl McpAuth {
    /// Tokens of this authorization server (its issuer identifier, e.g.
    /// `https://auth.example.com`; its metadata is fetched on the first token).
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            resource: None,
            scopes: ScopeMap::default(),
            leeway: Duration::from_secs(30),
            refetch_interval: Duration::from_secs(30),
        }
    }

    /// The issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// This server's resource URL, the audience tokens must name (default: the URL the server
    /// is bound at, `http://<addr>/mcp`; set it to the public URL clients use).
    pub fn resource(mut self, url: impl Into<String>) -> Self {
        self.resource = Some(url.into());
        self
    }

    /// The scope each tool needs (default [`ScopeMap::default`]).
    pub fn scope_map(mut self, scopes: ScopeMap) -> Self {
        self.scopes = scopes;
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The shortest time between two fetches of the issuer's keys that a token with an unknown
    /// `kid` can cause (default 30 s).
    pub fn jwks_refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }
}

/// What the service in front of the endpoint checks with, built once the address is bound.
pub(crate) struct Authorizer {
    verifier: Verifier,
    metadata: ResourceMetadata,
    scopes: ScopeMap,
    /// Whether a tool (by name) is read-only.
    read_only: Box<dyn Fn(&str) -> bool + Send + Sync>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("metadata", &self.metadata.url)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    pub(crate) fn new(
        auth: &McpAuth,
        local_addr: SocketAddr,
        read_only: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> Self {
        let resource = auth
            .resource
            .clone()
            .unwrap_or_else(|| format!("http://{local_addr}/mcp"));
        Self {
            metadata: ResourceMetadata::new(&resource, &auth.issuer, auth.scopes.all()),
            verifier: Verifier::new(
                auth.issuer.clone(),
                resource,
                auth.leeway,
                auth.refetch_interval,
            ),
            scopes: auth.scopes.clone(),
            read_only: Box::new(read_only),
        }
    }
}
