//! The MCP bridge, both ways, on the official `rmcp` SDK (feature `mcp`, on by default).
//!
//! - **Import** ([`McpImport`]): connect to an MCP server over stdio (a child process) or
//!   streamable HTTP, and register each of its tools as a raw tool named
//!   `mcp__<server>__<tool>` (`docs/CONTRACTS.md`, "MCP"). Calls go through the ordinary
//!   pipeline, so policies, guards and timeouts apply to them like to any tool.
//! - **Serve** ([`McpServer`]): expose a registry (or one scope's view of it) as an MCP server
//!   over stdio or streamable HTTP; every `tools/call` runs through [`ToolRegistry::execute`].
//!
//! [`ToolRegistry::execute`]: crate::ToolRegistry::execute

mod error;
mod import;
mod name;
mod progress;
mod render;
mod serve;
#[cfg(feature = "otel")]
mod trace;

pub use error::McpError;
pub use import::{
    AgentFuture, AuthorizationAgent, ImportedTool, McpConnection, McpHttpOptions, McpImport,
    McpOAuth, TokenFile,
};
pub use name::{is_valid_server_name, public_tool_name};
pub use render::{
    IMAGE_NOT_ADMITTED, McpOutcome, interpret_call_result, mcp_output_schema, render_mcp_content,
};
pub use serve::{
    HttpLimits, McpAuth, McpHttpServer, McpServer, McpTasks, MemoryTaskStore, ScopeMap, TaskEntry,
    TaskState, TaskStore, TaskStoreError, TaskSupport, mcp_input_schema,
};

/// The `rmcp` crate this bridge is built on (for custom transports and peers).
pub use rmcp;
