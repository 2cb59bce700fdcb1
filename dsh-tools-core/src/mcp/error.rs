//! Errors of the MCP bridge, each with a stable code.

use crate::error::RegistryError;

/// Why connecting to, syncing with, or serving over MCP failed.
///
/// The messages of the sync failures are those of `docs/CONTRACTS.md`, "MCP"; [`McpError::code`]
/// gives a stable code for each variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server name does not match `[A-Za-z0-9_-]{1,32}`.
    #[error("mcp-client: server name {0:?} must match [A-Za-z0-9_-]{{1,32}}")]
    InvalidServerName(String),
    /// Another live connection into the same registry uses this server name.
    #[error("mcp-client({0}): another live connection already uses this server name")]
    ServerNameInUse(String),
    /// The server process could not be started.
    #[error("mcp-client({server}): cannot start the server process: {message}")]
    Spawn {
        /// The server name.
        server: String,
        /// The operating system's reason.
        message: String,
    },
    /// The MCP handshake failed (or the transport broke during it).
    #[error("mcp-client({server}): cannot connect: {message}")]
    Connect {
        /// The server name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// A header given for an HTTP import is not a valid HTTP header (the value is never shown).
    #[error("mcp-client: header {name:?}: {reason}")]
    InvalidHeader {
        /// The header name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Authorizing with the server's authorization server failed (OAuth).
    #[error("mcp-client({server}): authorization failed: {message}")]
    Authorization {
        /// The server name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// A `tools/list` request failed; the previous generation stays registered.
    #[error("mcp-client({server}): tools/list failed: {message}")]
    ListFailed {
        /// The server name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// Two listed tools map to the same public name.
    #[error(
        "mcp-client({server}): server listed tool \"{raw}\" more than once — invalid tool list"
    )]
    DuplicateTool {
        /// The server name.
        server: String,
        /// The raw name of the second tool.
        raw: String,
    },
    /// A listed tool could not be turned into a definition.
    #[error("mcp-client({server}): tool \"{raw}\" cannot be imported: {source}")]
    Definition {
        /// The server name.
        server: String,
        /// The raw tool name.
        raw: String,
        /// The definition check that failed.
        source: dsh_tools::DefinitionError,
    },
    /// Registering the new generation failed; none of its tools stay registered.
    #[error("mcp-client({server}): tool registration failed, no tools registered: {source}")]
    Registration {
        /// The server name.
        server: String,
        /// The registry's refusal.
        source: RegistryError,
    },
    /// The connection was closed.
    #[error("mcp-client({0}): the connection is closed")]
    Closed(String),
    /// Serving failed: a listener could not be bound, or the transport broke.
    #[error("mcp-server: {0}")]
    Serve(String),
}

impl McpError {
    /// The stable code of this error, e.g. `MCP_DUPLICATE_TOOL`.
    ///
    /// ```
    /// use dsh_tools_runtime::mcp::McpError;
    /// assert_eq!(McpError::InvalidServerName("a b".into()).code(), "MCP_INVALID_SERVER_NAME");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidServerName(_) => "MCP_INVALID_SERVER_NAME",
            Self::ServerNameInUse(_) => "MCP_SERVER_NAME_IN_USE",
            Self::Spawn { .. } => "MCP_SPAWN_FAILED",
            Self::Connect { .. } => "MCP_CONNECT_FAILED",
            Self::InvalidHeader { .. } => "MCP_INVALID_HEADER",
            Self::Authorization { .. } => "MCP_AUTHORIZATION_FAILED",
            Self::ListFailed { .. } => "MCP_LIST_FAILED",
            Self::DuplicateTool { .. } => "MCP_DUPLICATE_TOOL",
            Self::Definition { .. } => "MCP_INVALID_TOOL",
            Self::Registration { .. } => "MCP_REGISTRATION_FAILED",
            Self::Closed(_) => "MCP_CLOSED",
            Self::Serve(_) => "MCP_SERVE_FAILED",
        }
    }
}
