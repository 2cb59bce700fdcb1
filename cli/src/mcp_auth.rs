//! `mcp serve --http ADDR` authorization flags: `--auth-issuer URL [--auth-audience URL]
//! [--scope-map FILE]`, or `--insecure-no-auth` (`docs/CONTRACTS.md`, "MCP server
//! authorization").
//!
//! Serving HTTP on an address that is not loopback without `--auth-issuer` is refused unless
//! `--insecure-no-auth` says so: anyone who reaches the port could run every tool.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use dsh_tools_runtime::mcp::{McpAuth, ScopeMap};

use crate::CliError;

/// The authorization flags of `mcp serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct AuthFlags {
    /// Require OAuth bearer tokens (JWT access tokens) of this authorization server, e.g.
    /// https://auth.example.com (with --http).
    #[arg(long, value_name = "URL", requires = "http")]
    pub auth_issuer: Option<String>,
    /// The resource URL tokens must name as audience (default: http://ADDR/mcp as bound); its
    /// host is accepted in the Host header.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub auth_audience: Option<String>,
    /// A JSON file mapping tools to the scopes they need: {"readOnly": SCOPE, "default": SCOPE,
    /// "tools": {NAME: SCOPE}} (default: tools:read for read-only tools, tools:write for the rest).
    #[arg(long, value_name = "FILE", requires = "auth_issuer")]
    pub scope_map: Option<PathBuf>,
    /// Serve HTTP on an address other than loopback without authorization: anyone who can
    /// reach it can run every tool.
    #[arg(long, conflicts_with = "auth_issuer", requires = "http")]
    pub insecure_no_auth: bool,
}

impl AuthFlags {
    /// The authorization to serve `addr` with, or the refusal of an unprotected public bind.
    pub(super) fn authorization(&self, addr: SocketAddr) -> Result<Option<McpAuth>, CliError> {
        let Some(issuer) = &self.auth_issuer else {
            if !addr.ip().is_loopback() && !self.insecure_no_auth {
                return Err(CliError::new(format!(
                    "mcp serve: refusing to serve {addr} without authorization: anyone who can \
                     reach it could run every tool; pass --auth-issuer URL, or \
                     --insecure-no-auth to serve it unprotected"
                )));
            }
            return Ok(None);
        };
        let mut auth = McpAuth::new(issuer.clone());
        if let Some(audience) = &self.auth_audience {
            auth = auth.resource(audience.clone());
        }
        if let Some(path) = &self.scope_map {
            let failed = |why: String| CliError::new(format!("{}: {why}", path.display()));
            let json = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
            let map = ScopeMap::from_json(&json)
                .map_err(|e| failed(format!("invalid scope map: {e}")))?;
            auth = auth.scope_map(map);
        }
        Ok(Some(auth))
    }

    /// The `Host` names to accept: loopback, plus the audience's host when one is given.
    pub(super) fn allowed_hosts(&self) -> Option<Vec<String>> {
        let audience = self.auth_audience.as_deref()?;
        let authority = audience.split_once("://")?.1.split('/').next()?;
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).into();
        hosts.push(authority.to_owned());
        Some(hosts)
    }
}
