//! Durable stores for dsh-tools runs: the state a run needs to survive a crash and to move
//! between machines, in a database the host already runs.
//!
//! A [`DurableStore`] holds
//!
//! - **run journals**: a run begins with the host's metadata, each completed call is appended
//!   once as entry *n*, and the run is finished with its outcome; the unfinished runs are the
//!   ones to recover after a crash;
//! - **write-ahead intents**: a side-effecting call is recorded before it is dispatched and
//!   completed with its result; an intent without a result on recovery is a call whose outcome
//!   is unknown (it may have taken effect), never to be re-run silently;
//! - **spent continuation ids**: a continuation resumes once, across every process;
//! - **approval decisions**, bound to the [`ArgsDigest`] of the exact arguments, the approver
//!   and an expiry: a lookup with other arguments or after the expiry is refused;
//! - **task records**: created once, read, moved between statuses by compare-and-set, and
//!   forgotten after their expiry.
//!
//! Four stores implement it: [`MemoryStore`] (one process), [`FileStore`] (a directory shared
//! by the processes of one machine), `PostgresStore` (feature `postgres`) and `RedisStore`
//! (feature `redis`), shared by a fleet. Every record is authenticated with HMAC-SHA-256 under
//! the host's [`StoreKey`] and bound to its place (run id and entry index, task id …): a row
//! altered in the database, or moved to another run, is refused with
//! [`StoreError::Tampered`] naming what and where. Errors have stable codes
//! ([`StoreError::code`]); a store that is down answers `STORE_UNAVAILABLE` and writes nothing.
//!
//! ```
//! use dsh_tools_store::{ArgsDigest, DurableStore, Intent, MemoryStore, StoreKey};
//! use serde_json::json;
//! use std::sync::Arc;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store: Arc<dyn DurableStore> = Arc::new(MemoryStore::new(StoreKey::generate()));
//! store.begin_run("run-1", &json!({"program": "return await tools.pay({})"})).await.unwrap();
//!
//! // Before dispatching a side-effecting call: its intent.
//! let intent = Intent {
//!     call: "run-1:code:1".into(),
//!     tool: "pay".into(),
//!     args_digest: ArgsDigest::of(&json!({"amount": 12})),
//!     idempotency_key: "run-1:code:1".into(),
//! };
//! assert!(store.record_intent("run-1", &intent).await.unwrap());
//! // A crash here leaves an intent without a result: outcome unknown.
//! assert_eq!(store.unresolved_intents("run-1").await.unwrap().len(), 1);
//!
//! // The call completed: its result, then its journal entry (once).
//! store.complete_intent("run-1", "run-1:code:1", &json!("paid")).await.unwrap();
//! assert!(store.append_entry("run-1", 1, &json!({"ok": "paid"})).await.unwrap());
//! assert!(!store.append_entry("run-1", 1, &json!({"ok": "again"})).await.unwrap());
//! assert_eq!(store.entries("run-1").await.unwrap()[0].entry, json!({"ok": "paid"}));
//! assert_eq!(store.unfinished_runs().await.unwrap()[0].id, "run-1");
//!
//! assert!(store.finish_run("run-1", &json!({"result": "paid"})).await.unwrap());
//! assert!(store.unfinished_runs().await.unwrap().is_empty());
//! let late = store.append_entry("run-1", 2, &json!(null)).await.unwrap_err();
//! assert_eq!(late.code(), "STORE_RUN_FINISHED");
//! # });
//! ```
//!
//! # Features
//!
//! - `postgres`: `PostgresStore` (tokio-postgres, a deadpool pool, embedded versioned
//!   migrations applied on first use).
//! - `redis`: `RedisStore` (redis-rs's reconnecting connection manager, Lua scripts for the
//!   atomic steps, TTLs for expiry). Redis is durable only with `appendonly yes` and
//!   `appendfsync always`: with the defaults a crash of the server loses the last second of
//!   writes — spent ids among them.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backend;
mod core;
mod digest;
mod error;
mod file;
mod forward;
#[cfg(feature = "mcp")]
mod mcp_tasks;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "redis")]
mod redis;
mod seal;
mod store;

pub use crate::core::MAX_ID_BYTES;
pub use digest::{ArgsDigest, canonical_json};
pub use error::StoreError;
pub use file::FileStore;
#[cfg(feature = "mcp")]
pub use mcp_tasks::McpTaskStore;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use record::{
    Approval, Checkpoint, Completion, Finished, Intent, IntentRecord, JournalRecord, RunInfo,
    TaskRecord, TaskStatus,
};
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use seal::{MIN_KEY_BYTES, StoreKey};
pub use store::DurableStore;
