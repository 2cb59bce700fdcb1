//! An MCP server: two `#[tool]` functions in a registry, served over MCP with `McpServer`.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example mcp_server                         # stdio
//! cargo run -p dsh-tools-examples --example mcp_server -- --http 127.0.0.1:8080 # streamable HTTP
//! ```
//!
//! Over stdio it speaks newline-delimited JSON-RPC on stdin/stdout until the client hangs up,
//! so any MCP client can start it, e.g. the inspector:
//! `npx @modelcontextprotocol/inspector --cli cargo run -q -p dsh-tools-examples --example
//! mcp_server --method tools/list`. With `--http ADDR` it prints the endpoint URL and serves
//! until stopped (bind loopback: requests must name a loopback `Host`, against DNS rebinding).
//!
//! What a client sees: `tools/list` carries each tool's input schema (MCP dialect), its output
//! schema and annotations (`read_only` → `readOnlyHint`, `destructive` → `destructiveHint`);
//! `tools/call` runs the full pipeline, so invalid arguments come back as an `isError` result
//! naming every violation, typed results as `structuredContent`, and the guard below refuses a
//! call the way it would refuse a model's.

use dsh_tools::ToolSchema;
use dsh_tools::tool;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::McpServer;
use serde::{Deserialize, Serialize};

/// Counts of a text.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
pub struct TextStats {
    /// Whitespace-separated words.
    pub words: usize,
    /// Lines (a trailing newline does not start a new one).
    pub lines: usize,
    /// Unicode scalar values.
    pub chars: usize,
}

/// Count the words, lines and characters of a text.
#[tool(concurrency_safe = true, read_only)]
async fn text_stats(
    /// The text to count.
    text: String,
) -> Result<TextStats, String> {
    // A stray print, as tools have: over stdio the server owns stdout, so this line goes to
    // stderr instead of corrupting the protocol stream.
    println!("text_stats: counting {} bytes", text.len());
    Ok(TextStats {
        words: text.split_whitespace().count(),
        lines: text.lines().count(),
        chars: text.chars().count(),
    })
}

/// Replace every occurrence of a word in a text.
#[tool(concurrency_safe = true, read_only)]
async fn replace_word(
    /// The text to edit.
    text: String,
    /// The word to replace (not empty).
    from: String,
    /// What to put in its place.
    to: String,
) -> Result<String, String> {
    if from.is_empty() {
        return Err("`from` must not be empty".to_owned());
    }
    Ok(text.replace(&from, &to))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    for definition in [text_stats::definition(), replace_word::definition()] {
        registry
            .register(definition.expect("a valid tool"))
            .expect("registered")
            .keep();
    }
    // Guards apply to MCP callers like to any other: no replacement may write a password.
    registry
        .guard(|exec| {
            let to = exec.arguments.as_deref()?["to"].as_str()?;
            to.contains("password")
                .then(|| "replacements must not contain passwords".to_owned())
        })
        .keep();

    let server =
        McpServer::new(&registry).with_server_info("text-tools", env!("CARGO_PKG_VERSION"));
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => {
            if let Err(e) = server.serve_stdio().await {
                eprintln!("mcp_server: {e}");
                std::process::exit(1);
            }
        }
        (Some("--http"), Some(addr)) => {
            let addr = addr.parse().unwrap_or_else(|e| {
                eprintln!("mcp_server: --http {addr}: {e}");
                std::process::exit(2);
            });
            let http = server.serve_http(addr).await.unwrap_or_else(|e| {
                eprintln!("mcp_server: {e}");
                std::process::exit(1);
            });
            println!("serving MCP on {}", http.url());
            http.wait().await;
        }
        _ => {
            eprintln!("usage: mcp_server [--http ADDR]");
            std::process::exit(2);
        }
    }
}
