//! The store in Redis: each record a string key (or a hash field, for a run's entries and
//! intents), each multi-key step one Lua script (atomic in Redis), expiry by key TTL.
//!
//! Keys, under the prefix (`dsh-store:` unless set): `run:<id>`, `runs:open` (a set of the
//! unfinished run ids), `entry:<run>`, `intent:<run>` and `checkpoint:<run>` (hashes by index,
//! call id, `latest`),
//! `spent:<id>`, `approval:<key>`, `task:<id>`. The scripts touch several keys: the store
//! needs one Redis server (with replicas if wanted), not Redis Cluster; Redis 6.0 or later
//! (`SET … KEEPTTL`).

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script};
use tokio::sync::OnceCell;

use crate::StoreError;
use crate::backend::{Backend, Child, ChildInsert, Coll, Pair};
use crate::core::Core;
use crate::forward::forward_store;
use crate::seal::StoreKey;

/// How long connecting, or one command, may take before the store is reported unavailable.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The store in Redis, shared by every process that connects to the same server with the
/// same key and prefix.
///
/// Redis keeps writes durable only with `appendonly yes` and `appendfsync always` in its
/// configuration; with its defaults a crash of the server loses up to the last second of
/// writes (spent ids among them: a continuation could then resume twice). Connections are
/// plain TCP (`redis://`; no TLS yet).
///
/// ```no_run
/// use dsh_tools_store::{DurableStore, RedisStore, StoreKey};
/// # async fn demo(key: StoreKey) -> Result<(), dsh_tools_store::StoreError> {
/// let store = RedisStore::new("redis://127.0.0.1:6379/0", key)?;
/// let first = store.spend("continuation-1").await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RedisStore {
    core: Core<RedisBackend>,
}

impl RedisStore {
    /// A store on the server `url` (`redis://[user:password@]host:port/db`), whose records
    /// `key` authenticates, its keys prefixed `dsh-store:`. Nothing connects until the first
    /// operation.
    pub fn new(url: &str, key: StoreKey) -> Result<Self, StoreError> {
        Self::with_prefix(url, key, "dsh-store:")
    }

    /// Like [`RedisStore::new`], with its keys under `prefix` (several stores in one database).
    pub fn with_prefix(url: &str, key: StoreKey, prefix: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError::InvalidInput {
            what: "Redis URL",
            reason: e.to_string(),
        })?;
        Ok(Self {
            core: Core {
                key,
                backend: RedisBackend {
                    client,
                    connection: OnceCell::new(),
                    prefix: prefix.to_owned(),
                    scripts: Scripts::default(),
                },
            },
        })
    }
}

forward_store!(RedisStore, "redis");

/// The atomic steps.
#[derive(Debug)]
struct Scripts {
    /// KEYS: record, open set; ARGV: value, run id.
    begin_run: Script,
    /// KEYS: record, open set; ARGV: old, new, run id.
    finish_run: Script,
    /// KEYS: record; ARGV: old, new.
    swap: Script,
    /// KEYS: run record, open set, hash; ARGV: run id, field, value.
    insert_child: Script,
    /// KEYS: hash; ARGV: field, old, new.
    swap_child: Script,
    /// KEYS: open set; ARGV: run key prefix.
    open_runs: Script,
}

impl Default for Scripts {
    fn default() -> Self {
        Self {
            begin_run: Script::new(
                "if redis.call('SET', KEYS[1], ARGV[1], 'NX') then \
                   redis.call('SADD', KEYS[2], ARGV[2]) return 1 end return 0",
            ),
            finish_run: Script::new(
                "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                   redis.call('SET', KEYS[1], ARGV[2]) redis.call('SREM', KEYS[2], ARGV[3]) \
                   return 1 end return 0",
            ),
            swap: Script::new(
                "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                   redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') return 1 end return 0",
            ),
            insert_child: Script::new(
                "if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end \
                 if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then return -2 end \
                 return redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[3])",
            ),
            swap_child: Script::new(
                "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then \
                   redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) return 1 end return 0",
            ),
            open_runs: Script::new(
                "local out = {} for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do \
                   local value = redis.call('GET', ARGV[1] .. id) \
                   if value then table.insert(out, id) table.insert(out, value) end end \
                 return out",
            ),
        }
    }
}

#[derive(Debug)]
pub(crate) struct RedisBackend {
    client: redis::Client,
    connection: OnceCell<ConnectionManager>,
    prefix: String,
    scripts: Scripts,
}

fn unavailable(error: redis::RedisError) -> StoreError {
    StoreError::unavailable("redis", crate::error::describe(&error))
}

impl RedisBackend {
    /// The shared connection (connected on first use; it reconnects by itself after a drop).
    async fn connection(&self) -> Result<ConnectionManager, StoreError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(1);
        self.connection
            .get_or_try_init(|| ConnectionManager::new_with_config(self.client.clone(), config))
            .await
            .cloned()
            .map_err(unavailable)
    }

    fn key(&self, coll: Coll, id: &str) -> String {
        format!("{}{}:{id}", self.prefix, coll.name())
    }

    fn child_key(&self, child: Child, run: &str) -> String {
        format!("{}{}:{run}", self.prefix, child.name())
    }

    fn open_key(&self) -> String {
        format!("{}runs:open", self.prefix)
    }
}

/// Milliseconds from `now` until `expires` (at least 1: Redis refuses a zero TTL).
fn ttl(expires: i64, now: i64) -> i64 {
    expires.saturating_sub(now).max(1)
}

fn now() -> i64 {
    crate::error::unix_ms(std::time::SystemTime::now())
}

#[async_trait]
impl Backend for RedisBackend {
    fn name(&self) -> &'static str {
        "redis"
    }

    async fn insert(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut command = redis::cmd("SET");
        command.arg(self.key(coll, id)).arg(value).arg("NX");
        if let Some(expires) = expires {
            command.arg("PX").arg(ttl(expires, now));
        }
        let set: Option<String> = command
            .query_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(set.is_some())
    }

    async fn put(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
    ) -> Result<(), StoreError> {
        let mut command = redis::cmd("SET");
        command.arg(self.key(coll, id)).arg(value);
        if let Some(expires) = expires {
            command.arg("PX").arg(ttl(expires, now()));
        }
        command
            .query_async::<()>(&mut self.connection().await?)
            .await
            .map_err(unavailable)
    }

    async fn get(&self, coll: Coll, id: &str, _now: i64) -> Result<Option<String>, StoreError> {
        self.connection()
            .await?
            .get(self.key(coll, id))
            .await
            .map_err(unavailable)
    }

    async fn swap(
        &self,
        coll: Coll,
        id: &str,
        old: &str,
        new: &str,
        _now: i64,
    ) -> Result<bool, StoreError> {
        let swapped: i64 = self
            .scripts
            .swap
            .key(self.key(coll, id))
            .arg(old)
            .arg(new)
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(swapped == 1)
    }

    async fn begin_run(&self, run: &str, value: &str) -> Result<bool, StoreError> {
        let begun: i64 = self
            .scripts
            .begin_run
            .key(self.key(Coll::Run, run))
            .key(self.open_key())
            .arg(value)
            .arg(run)
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(begun == 1)
    }

    async fn finish_run(&self, run: &str, old: &str, new: &str) -> Result<bool, StoreError> {
        let finished: i64 = self
            .scripts
            .finish_run
            .key(self.key(Coll::Run, run))
            .key(self.open_key())
            .arg(old)
            .arg(new)
            .arg(run)
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(finished == 1)
    }

    async fn open_runs(&self) -> Result<Vec<Pair>, StoreError> {
        let flat: Vec<String> = self
            .scripts
            .open_runs
            .key(self.open_key())
            .arg(format!("{}{}:", self.prefix, Coll::Run.name()))
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(flat
            .chunks_exact(2)
            .map(|pair| (pair[0].clone(), pair[1].clone()))
            .collect())
    }

    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        value: &str,
    ) -> Result<ChildInsert, StoreError> {
        let inserted: i64 = self
            .scripts
            .insert_child
            .key(self.key(Coll::Run, run))
            .key(self.open_key())
            .key(self.child_key(child, run))
            .arg(run)
            .arg(id)
            .arg(value)
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(match inserted {
            1 => ChildInsert::Inserted,
            -1 => ChildInsert::NoRun,
            -2 => ChildInsert::Finished,
            _ => ChildInsert::Exists,
        })
    }

    async fn get_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        self.connection()
            .await?
            .hget(self.child_key(child, run), id)
            .await
            .map_err(unavailable)
    }

    async fn swap_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError> {
        let swapped: i64 = self
            .scripts
            .swap_child
            .key(self.child_key(child, run))
            .arg(id)
            .arg(old)
            .arg(new)
            .invoke_async(&mut self.connection().await?)
            .await
            .map_err(unavailable)?;
        Ok(swapped == 1)
    }

    async fn children(&self, child: Child, run: &str) -> Result<Vec<Pair>, StoreError> {
        self.connection()
            .await?
            .hgetall(self.child_key(child, run))
            .await
            .map_err(unavailable)
    }
}
