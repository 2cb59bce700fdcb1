//! `--store URL`: the durable store a run is journaled in as it goes (`docs/CONTRACTS.md`,
//! "Durable runs"): `memory:` (this process only), `file:PATH` or a directory path,
//! `postgres://…` / `postgresql://…`, `redis://…` / `rediss://…`.
//!
//! Records are authenticated with the continuation key (`crate::durability`). A URL's password
//! is never printed: messages name the store by its redacted URL ([`redact`]).

use std::sync::Arc;

use clap::Args;
use dsh_tools_runtime::code::durable::Durability;
use dsh_tools_store::{DurableStore, FileStore, MemoryStore, PostgresStore, RedisStore, StoreKey};

use crate::CliError;

/// The `--store` flag.
#[derive(Debug, Clone, Default, Args)]
pub struct StoreFlag {
    /// Journal the run as it goes in this store: `memory:`, `file:PATH` (or a directory),
    /// `postgres://…`, `redis://…`; a run whose process died is resumed with `runs resume ID`.
    #[arg(long, value_name = "URL", global = true)]
    pub store: Option<String>,
}

impl StoreFlag {
    /// The CLI's durability (`crate::durability`), with the store when one is named.
    pub(crate) fn durability(&self) -> Result<Durability, CliError> {
        let (durability, key) = crate::durability::durability_and_key()?;
        match &self.store {
            None => Ok(durability),
            Some(url) => {
                let key = StoreKey::new(key)
                    .map_err(|e| CliError::new(format!("--store {}: {e}", redact(url))))?;
                Ok(durability.with_store(open(url, key)?))
            }
        }
    }
}

impl StoreFlag {
    /// The named store (`None` without `--store`), its records authenticated with the CLI's
    /// continuation key.
    pub(crate) fn open_store(&self) -> Result<Option<Arc<dyn DurableStore>>, CliError> {
        let Some(url) = &self.store else {
            return Ok(None);
        };
        let (_, key) = crate::durability::durability_and_key()?;
        let key = StoreKey::new(key)
            .map_err(|e| CliError::new(format!("--store {}: {e}", redact(url))))?;
        open(url, key).map(Some)
    }
}

/// Opens the store at `url`, its records authenticated with `key`.
fn open(url: &str, key: StoreKey) -> Result<Arc<dyn DurableStore>, CliError> {
    let failed = |e: dsh_tools_store::StoreError| {
        CliError::new(format!(
            "--store {}: {}",
            redact(url),
            scrub(&e.to_string(), url)
        ))
    };
    let store: Arc<dyn DurableStore> = if url == "memory:" {
        Arc::new(MemoryStore::new(key))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Arc::new(PostgresStore::new(url, key).map_err(failed)?)
    } else if url.starts_with("redis://") || url.starts_with("rediss://") {
        Arc::new(RedisStore::new(url, key).map_err(failed)?)
    } else {
        let path = url.strip_prefix("file:").unwrap_or(url);
        if path.is_empty() || path.contains("://") {
            return Err(CliError::new(format!(
                "--store {}: expected memory:, file:PATH (or a directory), postgres://… or redis://…",
                redact(url)
            )));
        }
        Arc::new(FileStore::open(path, key).map_err(failed)?)
    };
    Ok(store)
}

/// `url` with its password (if any) replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    match password(url) {
        Some(secret) if !secret.is_empty() => url.replacen(secret, "***", 1),
        _ => url.to_owned(),
    }
}

/// `text` with `url`'s password (if any) replaced by `***`.
fn scrub(text: &str, url: &str) -> String {
    match password(url) {
        Some(secret) if !secret.is_empty() => text.replace(secret, "***"),
        _ => text.to_owned(),
    }
}

/// The password of `scheme://user:password@host…`.
fn password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let userinfo = authority.rsplit_once('@')?.0;
    Some(userinfo.split_once(':')?.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://me:s3cret@db:5432/x"),
            "postgres://me:***@db:5432/x"
        );
        assert_eq!(redact("redis://:s3cret@cache/0"), "redis://:***@cache/0");
        assert_eq!(redact("redis://cache/0"), "redis://cache/0");
        assert_eq!(redact("file:/a:b@c"), "file:/a:b@c");
        assert_eq!(
            scrub(
                "cannot log in as me with s3cret",
                "postgres://me:s3cret@db/x"
            ),
            "cannot log in as me with ***"
        );
    }

    #[test]
    fn an_unknown_scheme_is_refused_without_its_password() {
        let error = open("mysql://me:s3cret@db/x", StoreKey::generate()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--store mysql://me:***@db/x: expected memory:, file:PATH (or a directory), postgres://… or redis://…"
        );
    }
}
