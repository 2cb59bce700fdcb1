//! `mcp login URL` and `mcp logout URL`: authorize with a remote MCP server ahead of `--mcp URL`
//! (OAuth, `mcp_remote`), and forget what was kept.
//!
//! `login` connects (authorizing when the server asks, the authorization URL on stderr), lists
//! the tools and prints `{"url":URL,"authorized":BOOL,"tools":N}` — `authorized` is whether
//! tokens are now kept for the server (`false` for a server that asked for none). `logout`
//! prints `{"url":URL,"forgotten":BOOL}`. No token is ever printed.

use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpImport, TokenFile, rmcp::transport::auth::CredentialStore as _};
use serde_json::json;

use crate::{CliError, Report, mcp_remote};

/// Authorizes with `url` (when it asks) and keeps the tokens.
pub(super) fn login(url: &str) -> Result<Report, CliError> {
    if !mcp_remote::is_url(url) {
        return Err(CliError::new(format!(
            "mcp login: {url:?} is not an http:// or https:// URL"
        )));
    }
    let options = mcp_remote::options(url, &[])?;
    let path = mcp_remote::token_path()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let registry = ToolRegistry::new();
        let connection = McpImport::new(&registry)
            .connect_http_with("login", url, &options)
            .await
            .map_err(|e| CliError::new(format!("mcp login {url}: {e}")))?;
        let tools = connection.tools().len();
        connection.close().await;
        let kept = TokenFile::new(&path, url)
            .load()
            .await
            .map_err(|e| CliError::new(format!("mcp login {url}: {e}")))?
            .is_some_and(|c| c.token_response.is_some());
        let document = json!({"url": url, "authorized": kept, "tools": tools});
        Ok(Report::json(&document, true))
    })
}

/// Forgets the tokens kept for `url`.
pub(super) fn logout(url: &str) -> Result<Report, CliError> {
    let path = mcp_remote::token_path()?;
    let forgotten = TokenFile::forget(&path, url)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    Ok(Report::json(
        &json!({"url": url, "forgotten": forgotten}),
        true,
    ))
}
