//! `--mcp "COMMAND ARGS"` or `--mcp URL` (repeatable, on `list`, `call`, `run`, `sdk`, `repl`
//! and `mcp serve`): import a stdio MCP server's tools, or a remote (streamable HTTP) server's,
//! into the command's registry. `--mcp-header "Name: value"` (repeatable) is sent to the remote
//! server (only one may be given with it); OAuth is `mcp_remote`'s.
//!
//! The servers are named `s1`, `s2`, … in the order of the flags, so their tools are
//! `mcp__s1__<tool>`, `mcp__s2__<tool>`, … (predictable whatever the command line holds). The
//! command line is split like a shell would split words: whitespace separates, `'…'` and `"…"`
//! quote, `\` escapes the next character. The server's stderr stays the CLI's stderr.

use clap::Args;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpConnection, McpImport};

use crate::{CliError, mcp_remote};

/// The `--mcp` flags of a command.
#[derive(Debug, Clone, Default, Args)]
pub struct McpFlags {
    /// Import the tools of a stdio MCP server, e.g. `--mcp "node server.js /tmp"` (repeatable;
    /// the servers are named s1, s2, … so their tools are mcp__s1__TOOL, …).
    /// A URL (`https://host/mcp`) imports a remote server over streamable HTTP, authorizing
    /// with OAuth when it asks (see `mcp login`).
    #[arg(long = "mcp", value_name = "COMMAND ARGS | URL")]
    pub servers: Vec<String>,
    /// A header sent with every request to the remote `--mcp URL` server, e.g.
    /// `--mcp-header "Authorization: Bearer …"` (repeatable; needs exactly one remote server).
    #[arg(long = "mcp-header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
}

impl McpFlags {
    /// Whether no server was given.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.headers.is_empty()
    }

    /// Starts every server and imports its tools into `registry`'s global layer. Keep the
    /// connections for as long as the tools are used.
    pub(super) async fn import(
        &self,
        registry: &ToolRegistry,
    ) -> Result<Vec<McpConnection>, CliError> {
        let remote = self
            .servers
            .iter()
            .filter(|s| mcp_remote::is_url(s))
            .count();
        if !self.headers.is_empty() && remote != 1 {
            return Err(CliError::new(format!(
                "--mcp-header: goes to exactly one remote --mcp URL server; {remote} given"
            )));
        }
        let mut connections = Vec::with_capacity(self.servers.len());
        for (index, line) in self.servers.iter().enumerate() {
            let flag = || format!("--mcp {line:?}");
            let name = format!("s{}", index + 1);
            if mcp_remote::is_url(line) {
                let options = mcp_remote::options(line, &self.headers)?;
                let connection = McpImport::new(registry)
                    .connect_http_with(&name, line, &options)
                    .await
                    .map_err(|e| CliError::new(format!("{}: {e}", flag())))?;
                connections.push(connection);
                continue;
            }
            let words =
                split_command(line).map_err(|e| CliError::new(format!("{}: {e}", flag())))?;
            let Some((program, args)) = words.split_first() else {
                return Err(CliError::new(format!("{}: no command", flag())));
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            let connection = McpImport::new(registry)
                .connect_stdio(&name, command)
                .await
                .map_err(|e| CliError::new(format!("{}: {e}", flag())))?;
            connections.push(connection);
        }
        Ok(connections)
    }
}

/// Splits a command line into words (whitespace, `'…'`, `"…"`, `\`).
///
/// ```
/// # use dsh_tools_cli::split_command;
/// assert_eq!(split_command(r#"node "my server.js" --root '/tmp/a b' x\ y"#).unwrap(),
///     ["node", "my server.js", "--root", "/tmp/a b", "x y"]);
/// assert!(split_command("node 'open").is_err());
/// ```
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' | '"' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(close) if close == c => break,
                        Some('\\') if c == '"' => text.extend(chars.next()),
                        Some(other) => text.push(other),
                        None => return Err(format!("unclosed {c} quote")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(next) => word.get_or_insert_with(String::new).push(next),
                None => return Err("a trailing \\ escapes nothing".to_owned()),
            },
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    Ok(words)
}

/// The definitions of the `--mcp` servers' tools, for commands that only read definitions
/// (`list`, `sdk`): imported into a scratch registry, then the servers are stopped.
pub(super) fn with_imported(flags: &McpFlags) -> Result<Vec<dsh_tools::ToolDefinition>, CliError> {
    if flags.is_empty() {
        return Ok(Vec::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let registry = ToolRegistry::new();
        let connections = flags.import(&registry).await?;
        let definitions = registry.visible(None);
        for connection in connections {
            connection.close().await;
        }
        Ok(definitions)
    })
}
