//! Shared helpers of the MCP tests: the npm peers (found through env vars, installed by
//! `npm ci --prefix tests/node`) and a scripted in-process rmcp server.
//!
//! Peers: `DSH_NODE` (default `node`), `DSH_MCP_SERVER_FILESYSTEM`, `DSH_MCP_SERVER_EVERYTHING`
//! and `DSH_MCP_INSPECTOR` (JS entry points; defaults under `tests/node/node_modules`). A missing
//! peer fails the test when `CI` is set, and skips it with a printed reason otherwise.

#![allow(dead_code, reason = "each test file uses a part of the helpers")]

pub(crate) mod scripted;

use std::path::{Path, PathBuf};

use dsh_tools_runtime::mcp::rmcp::ClientHandler;
use dsh_tools_runtime::mcp::rmcp::service::{RoleClient, RunningService};

/// A Node.js entry point of an npm peer.
#[derive(Debug, Clone)]
pub(crate) struct NodePeer {
    pub(crate) node: PathBuf,
    pub(crate) script: PathBuf,
}

impl NodePeer {
    /// `node <script> <args…>` as a tokio command (stderr discarded).
    pub(crate) fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.node);
        command
            .arg(&self.script)
            .args(args)
            .stderr(std::process::Stdio::null());
        command
    }
}

fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/node/node_modules/@modelcontextprotocol")
}

fn peer(var: &str, default: &str) -> Option<NodePeer> {
    let script = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| node_modules().join(default));
    let node = std::env::var_os("DSH_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("node"));
    let node_ok = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if script.exists() && node_ok {
        return Some(NodePeer { node, script });
    }
    let message = format!(
        "the MCP peer {} (or Node.js) is missing — run `npm ci --prefix tests/node` at the \
         workspace root (scripts/test does) or point {var} at it",
        script.display()
    );
    if ["CI", "DSH_REQUIRE_NODE"]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
    {
        panic!("{message}");
    }
    eprintln!("skipped: {message}");
    None
}

/// `@modelcontextprotocol/server-filesystem`.
pub(crate) fn server_filesystem() -> Option<NodePeer> {
    peer(
        "DSH_MCP_SERVER_FILESYSTEM",
        "server-filesystem/dist/index.js",
    )
}

/// `@modelcontextprotocol/server-everything`.
pub(crate) fn server_everything() -> Option<NodePeer> {
    peer(
        "DSH_MCP_SERVER_EVERYTHING",
        "server-everything/dist/index.js",
    )
}

/// `@modelcontextprotocol/inspector` (its launcher; `--cli` selects the CLI).
pub(crate) fn inspector() -> Option<NodePeer> {
    peer(
        "DSH_MCP_INSPECTOR",
        "inspector/clients/launcher/build/index.js",
    )
}

/// The model-facing text of a result (its text blocks joined by `\n`).
pub(crate) fn text_of(result: &dsh_tools::exec::ToolExecutionResult) -> String {
    result
        .content()
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `client` connected to an MCP server of `registry` over an in-process pipe, at 2026-07-28
/// (`server/discover`) or, with `legacy`, through `initialize` at 2025-11-25.
pub(crate) async fn connect_in_process<C>(
    registry: &dsh_tools_runtime::ToolRegistry,
    client: C,
    legacy: bool,
) -> RunningService<RoleClient, C>
where
    C: ClientHandler,
{
    connect_served(
        dsh_tools_runtime::mcp::McpServer::new(registry),
        client,
        legacy,
    )
    .await
}

/// [`connect_in_process`] to `server` (configured by the test).
pub(crate) async fn connect_served<C>(
    server: dsh_tools_runtime::mcp::McpServer,
    client: C,
    legacy: bool,
) -> RunningService<RoleClient, C>
where
    C: ClientHandler,
{
    use dsh_tools_runtime::mcp::rmcp::model::ProtocolVersion;
    use dsh_tools_runtime::mcp::rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_io);
        let _ = server.serve_io(reader, writer).await;
    });
    let lifecycle = if legacy {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    };
    let (reader, writer) = tokio::io::split(client_io);
    client
        .serve_with_lifecycle((reader, writer), lifecycle)
        .await
        .expect("connected")
}
