//! What the CLI's durable runs need: the key that seals continuations and the store of spent
//! continuation ids (`docs/CONTRACTS.md`, "The command line").
//!
//! The key is `DSH_TOOLS_CONTINUATION_KEY` when it is set (at least 32 bytes, used as they are),
//! otherwise the key file `<data dir>/dsh-tools/continuation.key` (64 hexadecimal digits),
//! created on first use with mode 0600 in a directory of mode 0700; a key file others can read
//! is refused. Spent ids go to `spent-continuations` beside it, one per line, shared by every
//! process (the file is locked while an id is spent). The data directory is the platform's
//! (`$XDG_DATA_HOME` or `~/.local/share` on Linux).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_tools_runtime::code::durable::{ContinuationKey, Durability, FileSpentStore};

use crate::CliError;

/// The environment variable holding the key.
pub(crate) const KEY_VARIABLE: &str = "DSH_TOOLS_CONTINUATION_KEY";

/// The key and the spent-id store of this user, and the key's bytes (what authenticates a
/// `--store`'s records too).
pub(crate) fn durability_and_key() -> Result<(Durability, Vec<u8>), CliError> {
    let dir = dirs::data_dir()
        .map(|dir| dir.join("dsh-tools"))
        .ok_or_else(|| CliError::new("no data directory for continuations (set HOME)"))?;
    let key = match std::env::var_os(KEY_VARIABLE) {
        Some(value) => {
            let bytes = value.into_encoded_bytes();
            ContinuationKey::new(bytes)
                .map_err(|e| CliError::new(format!("{KEY_VARIABLE}: {e}")))?
        }
        None => key_file(&dir)?,
    };
    create_private_dir(&dir)?;
    let spent = FileSpentStore::new(dir.join("spent-continuations"));
    let bytes = key.as_bytes().to_vec();
    Ok((Durability::new(key, Arc::new(spent)), bytes))
}

/// The key in `dir/continuation.key`, created if there is none.
fn key_file(dir: &Path) -> Result<ContinuationKey, CliError> {
    let path = dir.join("continuation.key");
    let failed = |what: &str, e: std::io::Error| {
        CliError::new(format!("{}: cannot {what}: {e}", path.display()))
    };
    if !path.exists() {
        create_private_dir(dir)?;
        let key = ContinuationKey::generate();
        let hex: String = key.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        match create_private_file(&path) {
            Ok(mut file) => {
                file.write_all(hex.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| failed("write", e))?;
                return Ok(key);
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed("create", e)),
        }
    }
    check_private(&path)?;
    let text = fs::read_to_string(&path).map_err(|e| failed("read", e))?;
    let bytes = decode_hex(text.trim()).ok_or_else(|| {
        CliError::new(format!(
            "{}: not a key (64 hexadecimal digits expected)",
            path.display()
        ))
    })?;
    ContinuationKey::new(bytes).map_err(|e| CliError::new(format!("{}: {e}", path.display())))
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::DirBuilderExt as _;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| CliError::new(format!("{}: cannot create: {e}", dir.display())))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> Result<(), CliError> {
    fs::create_dir_all(dir)
        .map_err(|e| CliError::new(format!("{}: cannot create: {e}", dir.display())))
}

#[cfg(unix)]
fn create_private_file(path: &PathBuf) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private_file(path: &PathBuf) -> std::io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Refuses a key file that others may read or write.
#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = fs::metadata(path)
        .map_err(|e| CliError::new(format!("{}: cannot read: {e}", path.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(CliError::new(format!(
            "{}: the key file is open to other users (mode {:o}); run chmod 600 on it",
            path.display(),
            mode & 0o777
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<(), CliError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_keys_round_trip() {
        assert_eq!(decode_hex("00ff10"), Some(vec![0, 255, 16]));
        assert_eq!(decode_hex("0"), None);
        assert_eq!(decode_hex("zz"), None);
    }
}
