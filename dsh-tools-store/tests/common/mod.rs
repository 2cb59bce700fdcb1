//! What the store tests share: the stores under test, on the servers scripts/services starts.
#![allow(dead_code, reason = "each test binary uses part of it")]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use dsh_tools_store::{DurableStore, FileStore, MemoryStore, PostgresStore, RedisStore, StoreKey};

/// A store under test and what keeps it alive (its directory).
pub(crate) struct TestStore {
    pub(crate) store: Arc<dyn DurableStore>,
    pub(crate) dir: Option<tempfile::TempDir>,
    /// The Redis key prefix or the run-id prefix that keeps this test's records apart.
    pub(crate) prefix: String,
}

/// A fresh random id fragment.
pub(crate) fn unique(label: &str) -> String {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    format!("{label}-{}", hex(&bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The URL in `var`. Missing: a failure under `CI`, a skip (with the reason) otherwise.
pub(crate) fn server_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{var} is not set: scripts/test starts the servers (scripts/services)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (eval \"$(scripts/services start)\" sets it)");
            None
        }
    }
}

pub(crate) fn memory() -> TestStore {
    TestStore {
        store: Arc::new(MemoryStore::new(StoreKey::generate())),
        dir: None,
        prefix: unique("mem"),
    }
}

pub(crate) fn file() -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    TestStore {
        store: Arc::new(FileStore::open(dir.path(), StoreKey::generate()).unwrap()),
        dir: Some(dir),
        prefix: unique("file"),
    }
}

pub(crate) async fn postgres() -> Option<TestStore> {
    let url = postgres_schema().await?;
    Some(postgres_at(&url, StoreKey::generate()))
}

/// The test server's URL, with a fresh schema of its own as the search path: each test's
/// tables apart from the others' (records sealed with another test's key would be refused).
pub(crate) async fn postgres_schema() -> Option<String> {
    let url = server_url("DSH_TEST_POSTGRES_URL")?;
    let schema = unique("t").replace('-', "_");
    postgres_client(&url)
        .await
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .unwrap();
    Some(format!("{url}?options=-csearch_path%3D{schema}"))
}

/// A store on `url` (from [`postgres_schema`]).
pub(crate) fn postgres_at(url: &str, key: StoreKey) -> TestStore {
    TestStore {
        store: Arc::new(PostgresStore::new(url, key).unwrap()),
        dir: None,
        prefix: unique("pg"),
    }
}

pub(crate) fn redis() -> Option<TestStore> {
    redis_with(StoreKey::generate(), &unique("redis"))
}

pub(crate) fn redis_with(key: StoreKey, prefix: &str) -> Option<TestStore> {
    let url = server_url("DSH_TEST_REDIS_URL")?;
    Some(TestStore {
        store: Arc::new(RedisStore::with_prefix(&url, key, &format!("{prefix}:")).unwrap()),
        dir: None,
        prefix: prefix.to_owned(),
    })
}

/// Runs `scripts/services <command> $DSH_TEST_SERVICES_DIR` (stop or start one server).
pub(crate) fn services(command: &str) {
    let dir = std::env::var("DSH_TEST_SERVICES_DIR")
        .expect("DSH_TEST_SERVICES_DIR (set by scripts/services start)");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/services");
    let status = Command::new(script).arg(command).arg(dir).status().unwrap();
    assert!(status.success(), "scripts/services {command} failed");
}

/// A plain client on the test PostgreSQL server (to alter rows behind the store's back).
pub(crate) async fn postgres_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// A plain connection to the test Redis server.
pub(crate) async fn redis_connection(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}
