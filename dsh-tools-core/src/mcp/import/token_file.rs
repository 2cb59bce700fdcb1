//! A credential store in a file of mode 0600: the OAuth client registrations and tokens of
//! several servers, one entry per server URL (each bound to the issuer that issued it).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

/// One server's entry in a token file (JSON, `{"servers": {URL: credentials}}`), as an rmcp
/// [`CredentialStore`] for [`McpOAuth::credential_store`](super::McpOAuth::credential_store).
///
/// The file and its directory are created with modes 0600 and 0700 (on Unix) and replaced
/// whole on each save (written beside it, then renamed). Each entry keeps the issuer of its
/// tokens: when the server's authorization server changes, rmcp discards them and registers
/// anew. Concurrent writers are not coordinated (the last save wins).
///
/// ```
/// use dsh_tools_runtime::mcp::TokenFile;
///
/// let dir = std::env::temp_dir().join(format!("dsh-doc-{}", std::process::id()));
/// let file = dir.join("mcp-tokens.json");
/// assert!(!TokenFile::forget(&file, "https://mcp.example.com/mcp").unwrap());
/// let store = TokenFile::new(&file, "https://mcp.example.com/mcp");
/// assert_eq!(store.server(), "https://mcp.example.com/mcp");
/// ```
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
    server: String,
}

/// The file's content.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Entries {
    #[serde(default)]
    servers: BTreeMap<String, StoredCredentials>,
}

impl TokenFile {
    /// The entry of `server` (its MCP endpoint URL) in the file at `path`.
    pub fn new(path: impl Into<PathBuf>, server: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            server: server.into(),
        }
    }

    /// The server URL this entry belongs to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Removes `server`'s entry from the file at `path`; whether there was one.
    pub fn forget(path: &Path, server: &str) -> std::io::Result<bool> {
        let mut entries = read(path)?;
        let removed = entries.servers.remove(server).is_some();
        if removed {
            write(path, &entries)?;
        }
        Ok(removed)
    }

    fn store_error(&self, error: std::io::Error) -> AuthError {
        AuthError::CredentialStoreError(format!("{}: {error}", self.path.display()))
    }
}

/// The entries of the file at `path` (none when it does not exist).
fn read(path: &Path) -> std::io::Result<Entries> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not a token file: {e}"),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Entries::default()),
        Err(e) => Err(e),
    }
}

/// Replaces the file at `path` with `entries`: a file of mode 0600 beside it, renamed over it.
fn write(path: &Path, entries: &Entries) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    let bytes = serde_json::to_vec_pretty(entries).map_err(std::io::Error::other)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut entries = read(&self.path).map_err(|e| self.store_error(e))?;
        Ok(entries.servers.remove(&self.server))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut entries = read(&self.path).map_err(|e| self.store_error(e))?;
        entries.servers.insert(self.server.clone(), credentials);
        write(&self.path, &entries).map_err(|e| self.store_error(e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        Self::forget(&self.path, &self.server)
            .map(|_| ())
            .map_err(|e| self.store_error(e))
    }
}
