//! `mcp serve [--http ADDR] [--yes] [--mcp "COMMAND ARGS"]…`: the example tools as an MCP
//! server.
//!
//! Without `--http` the server speaks MCP on stdin/stdout until the client disconnects (stdout
//! carries nothing else). With `--http ADDR` (e.g. `127.0.0.1:0` for a free port; loopback is
//! the sensible choice) it serves streamable HTTP, prints `{"url":"http://ADDR/mcp"}` on stdout
//! once it listens, and serves until the process is stopped. Calls run through the full
//! pipeline: tools that can change the machine ask for approval — of the client's user when the
//! client can elicit (an input-required result, or `elicitation/create` in an older session);
//! otherwise the call is refused, as a server has no terminal to ask at — unless `--yes`
//! approves every call without asking. `--auth-issuer` makes the
//! HTTP server require OAuth bearer tokens (`mcp_auth`); a bind other than loopback requires it
//! (or `--insecure-no-auth`). `--mode code|both` (`presentation_flag`) serves one `run_code`
//! tool over every tool (the Code Mode gateway); `--state-ttl` bounds how long an approval
//! asked by an input-required result can be answered.

use std::io::Write as _;
use std::net::SocketAddr;

use clap::{Args, Subcommand};
use dsh_tools_runtime::mcp::McpServer;
use serde_json::json;

use crate::call_cmd::host_registry_in;
use crate::http_limits_flag::HttpLimitFlags;
use crate::mcp_auth::AuthFlags;
use crate::mcp_flag::McpFlags;
use crate::presentation_flag::PresentationFlags;
use crate::{CliError, Report};

/// Arguments of `mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// The `mcp` subcommands.
#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "one value per process, parsed from the command line"
)]
pub enum McpCommand {
    /// Serve the example tools (and any `--mcp` server's) as an MCP server.
    Serve(McpServeArgs),
    /// Authorize with a remote MCP server (OAuth) and keep its tokens for `--mcp URL`.
    Login(McpLoginArgs),
    /// Forget the tokens kept for a remote MCP server.
    Logout(McpLoginArgs),
}

/// Arguments of `mcp login` and `mcp logout`.
#[derive(Debug, Args)]
pub struct McpLoginArgs {
    /// The server's MCP endpoint, e.g. https://host/mcp.
    #[arg(value_name = "URL")]
    pub url: String,
}

/// Arguments of `mcp serve`.
#[derive(Debug, Args)]
pub struct McpServeArgs {
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Approve tool calls that ask for approval (writes, shell commands) without asking anyone,
    /// the client's user included.
    #[arg(long)]
    pub yes: bool,
    /// MCP servers whose tools are served too.
    #[command(flatten)]
    pub mcp: McpFlags,
    /// The limits of the HTTP server.
    #[command(flatten)]
    pub limits: HttpLimitFlags,
    /// Authorization of the HTTP server.
    #[command(flatten)]
    pub auth: AuthFlags,
    /// How the tools are presented (`--mode`, `--language`).
    #[command(flatten)]
    pub presentation: PresentationFlags,
    /// How many seconds the client's user has to answer an approval asked by an
    /// input-required result (MCP 2026-07-28) before its retry is refused.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub state_ttl: u64,
    /// Where served tasks live (`bash` and `run_code` calls of a client that declared the
    /// tasks extension): memory by default; a durable store keeps them across restarts.
    #[command(flatten)]
    pub store: crate::store_flag::StoreFlag,
}

/// Serves until the client disconnects (stdio) or the process is stopped (HTTP).
pub(super) fn run(args: McpArgs) -> Result<Report, CliError> {
    let args = match args.command {
        McpCommand::Serve(args) => args,
        McpCommand::Login(args) => return crate::mcp_login::login(&args.url),
        McpCommand::Logout(args) => return crate::mcp_login::logout(&args.url),
    };
    // Several threads: a call's CPU work (or a slow tool) cannot stall the other clients.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    let auth = match args.http {
        Some(addr) => args.auth.authorization(addr)?,
        None => None,
    };
    let registry = host_registry_in(args.presentation.mode(), args.yes)?;
    let suspendable = args.presentation.install(&registry)?;
    runtime.block_on(async {
        let _imports = args.mcp.import(&registry).await?;
        // `--yes` approves without asking anyone, the client's user included.
        let mut server = McpServer::new(&registry)
            .with_http_limits(args.limits.limits())
            .client_approval(!args.yes)
            .with_state_ttl(std::time::Duration::from_secs(args.state_ttl));
        if let Some(auth) = auth {
            server = server.with_auth(auth);
        }
        if let Some(runs) = suspendable {
            server = server.with_suspendable(runs);
        }
        server = server.with_tasks(crate::mcp_tasks::served_tasks(&args.store)?);
        match args.http {
            None => server
                .serve_stdio()
                .await
                .map_err(|e| CliError::new(e.to_string())),
            Some(addr) => {
                let http = match args.auth.allowed_hosts() {
                    Some(hosts) => server.serve_http_for_hosts(addr, hosts).await,
                    None => server.serve_http(addr).await,
                }
                .map_err(|e| CliError::new(e.to_string()))?;
                let mut stdout = std::io::stdout().lock();
                writeln!(stdout, "{}", json!({"url": http.url()}))
                    .and_then(|()| stdout.flush())
                    .map_err(|e| CliError::new(format!("<stdout>: cannot write: {e}")))?;
                drop(stdout);
                http.wait().await;
                Ok(())
            }
        }
    })?;
    Ok(Report {
        output: String::new(),
        passed: true,
        suspended: false,
    })
}
