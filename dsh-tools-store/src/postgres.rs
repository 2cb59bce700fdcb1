//! The store in PostgreSQL: one table per kind of record, every once-only step a unique key
//! (`INSERT … ON CONFLICT DO NOTHING`) or a conditional `UPDATE` in one statement, appends
//! under a `FOR SHARE` lock of their run's row so that a run cannot finish in between.

use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio::sync::OnceCell;
use tokio_postgres::NoTls;

use crate::StoreError;
use crate::backend::{Backend, Child, ChildInsert, Coll, Pair};
use crate::core::Core;
use crate::error::describe;
use crate::forward::forward_store;
use crate::seal::StoreKey;

/// The migrations, in order: version `i + 1` is `MIGRATIONS[i]`.
const MIGRATIONS: &[&str] = &[include_str!("../migrations/0001_initial.sql")];

/// Connections the pool opens at most.
const POOL_SIZE: usize = 16;

/// How long connecting, or waiting for a pooled connection, may take before the store is
/// reported unavailable.
const TIMEOUT: Duration = Duration::from_secs(5);

/// An arbitrary constant: the advisory lock that serialises migrations across processes.
const MIGRATION_LOCK: i64 = 0x6473_685f_7374_6f72; // "dsh_stor"

/// The store in PostgreSQL, shared by every process that connects to the same database with
/// the same key. Its tables (`dsh_store_*`) are created on first use by embedded, versioned
/// migrations. Connections are plain TCP or Unix sockets (no TLS yet): use a local server, a
/// socket, or a tunnel; `sslmode=require` fails to connect rather than send in clear.
///
/// ```no_run
/// use dsh_tools_store::{DurableStore, PostgresStore, StoreKey};
/// # async fn demo(key: StoreKey) -> Result<(), dsh_tools_store::StoreError> {
/// let store = PostgresStore::new("postgres://app@127.0.0.1:5432/app", key)?;
/// let first = store.spend("continuation-1").await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PostgresStore {
    core: Core<PostgresBackend>,
}

impl PostgresStore {
    /// A store on the database `url` (`postgres://user:password@host:port/db`, or the
    /// `key=value` form), whose records `key` authenticates. Nothing connects until the
    /// first operation.
    pub fn new(url: &str, key: StoreKey) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::InvalidInput {
                what: "PostgreSQL URL",
                reason: format!("{e}"),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(TIMEOUT);
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(TIMEOUT))
            .create_timeout(Some(TIMEOUT))
            .recycle_timeout(Some(TIMEOUT))
            .build()
            .map_err(|e| StoreError::unavailable("postgres", e))?;
        Ok(Self {
            core: Core {
                key,
                backend: PostgresBackend {
                    pool,
                    migrated: OnceCell::new(),
                },
            },
        })
    }

    /// The schema version this build creates and reads.
    pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
}

forward_store!(PostgresStore, "postgres");

#[derive(Debug)]
pub(crate) struct PostgresBackend {
    pool: Pool,
    migrated: OnceCell<()>,
}

fn unavailable(error: impl std::error::Error + 'static) -> StoreError {
    StoreError::unavailable("postgres", describe(&error))
}

/// The driver's error with the server's message when there is one (`db error` alone says
/// nothing), or with its causes (`error connecting to server: Connection refused`).
fn db_error(error: tokio_postgres::Error) -> StoreError {
    match error.as_db_error() {
        Some(db) => StoreError::unavailable(
            "postgres",
            format!("{}: {}", db.code().code(), db.message()),
        ),
        None => unavailable(error),
    }
}

fn table(coll: Coll) -> &'static str {
    match coll {
        Coll::Run => "dsh_store_runs",
        Coll::Spent => "dsh_store_spent",
        Coll::Approval => "dsh_store_approvals",
        Coll::Task => "dsh_store_tasks",
    }
}

fn child_table(child: Child) -> &'static str {
    match child {
        Child::Entry => "dsh_store_entries",
        Child::Intent => "dsh_store_intents",
        Child::Checkpoint => "dsh_store_checkpoints",
    }
}

impl PostgresBackend {
    /// A pooled connection, the schema migrated.
    async fn client(&self) -> Result<Object, StoreError> {
        let mut client = self.pool.get().await.map_err(unavailable)?;
        self.migrated
            .get_or_try_init(|| migrate(&mut client))
            .await?;
        Ok(client)
    }
}

/// Applies the migrations the database lacks, in one transaction under an advisory lock (the
/// first of several processes migrates, the others wait and find it done).
async fn migrate(client: &mut Object) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(db_error)?;
    transaction
        .batch_execute(&format!(
            "SELECT pg_advisory_xact_lock({MIGRATION_LOCK}); \
             CREATE TABLE IF NOT EXISTS dsh_store_migrations \
             (version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());"
        ))
        .await
        .map_err(db_error)?;
    let found: i64 = transaction
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM dsh_store_migrations",
            &[],
        )
        .await
        .map_err(db_error)?
        .get(0);
    if found > PostgresStore::SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            store: "postgres",
            found,
            supported: PostgresStore::SCHEMA_VERSION,
        });
    }
    for (version, sql) in (1_i64..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(found).unwrap_or(0))
    {
        transaction.batch_execute(sql).await.map_err(db_error)?;
        transaction
            .execute(
                "INSERT INTO dsh_store_migrations (version) VALUES ($1)",
                &[&version],
            )
            .await
            .map_err(db_error)?;
    }
    transaction.commit().await.map_err(db_error)
}

#[async_trait]
impl Backend for PostgresBackend {
    fn name(&self) -> &'static str {
        "postgres"
    }

    async fn insert(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let t = table(coll);
        // A row that expired is replaced; a live one stays.
        let sql = format!(
            "INSERT INTO {t} (id, value, expires_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value, expires_ms = EXCLUDED.expires_ms \
             WHERE {t}.expires_ms IS NOT NULL AND {t}.expires_ms <= $4"
        );
        let client = self.client().await?;
        let statement = client.prepare_cached(&sql).await.map_err(db_error)?;
        let rows = client
            .execute(&statement, &[&id, &value, &expires, &now])
            .await
            .map_err(db_error)?;
        Ok(rows == 1)
    }

    async fn put(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO {} (id, value, expires_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value, expires_ms = EXCLUDED.expires_ms",
            table(coll)
        );
        let client = self.client().await?;
        let statement = client.prepare_cached(&sql).await.map_err(db_error)?;
        client
            .execute(&statement, &[&id, &value, &expires])
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn get(&self, coll: Coll, id: &str, now: i64) -> Result<Option<String>, StoreError> {
        let sql = format!(
            "SELECT value FROM {} WHERE id = $1 AND (expires_ms IS NULL OR expires_ms > $2)",
            table(coll)
        );
        let client = self.client().await?;
        let statement = client.prepare_cached(&sql).await.map_err(db_error)?;
        let row = client
            .query_opt(&statement, &[&id, &now])
            .await
            .map_err(db_error)?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn swap(
        &self,
        coll: Coll,
        id: &str,
        old: &str,
        new: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE {} SET value = $3 WHERE id = $1 AND value = $2 \
             AND (expires_ms IS NULL OR expires_ms > $4)",
            table(coll)
        );
        let client = self.client().await?;
        let statement = client.prepare_cached(&sql).await.map_err(db_error)?;
        let rows = client
            .execute(&statement, &[&id, &old, &new, &now])
            .await
            .map_err(db_error)?;
        Ok(rows == 1)
    }

    async fn begin_run(&self, run: &str, value: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "INSERT INTO dsh_store_runs (id, value) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            )
            .await
            .map_err(db_error)?;
        let rows = client
            .execute(&statement, &[&run, &value])
            .await
            .map_err(db_error)?;
        Ok(rows == 1)
    }

    async fn finish_run(&self, run: &str, old: &str, new: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "UPDATE dsh_store_runs SET value = $3, finished = TRUE \
                 WHERE id = $1 AND value = $2 AND NOT finished",
            )
            .await
            .map_err(db_error)?;
        let rows = client
            .execute(&statement, &[&run, &old, &new])
            .await
            .map_err(db_error)?;
        Ok(rows == 1)
    }

    async fn open_runs(&self) -> Result<Vec<Pair>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, value FROM dsh_store_runs WHERE NOT finished",
                &[],
            )
            .await
            .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect())
    }

    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        value: &str,
    ) -> Result<ChildInsert, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(db_error)?;
        let lock = transaction
            .prepare_cached("SELECT finished FROM dsh_store_runs WHERE id = $1 FOR SHARE")
            .await
            .map_err(db_error)?;
        let finished: bool = match transaction
            .query_opt(&lock, &[&run])
            .await
            .map_err(db_error)?
        {
            None => return Ok(ChildInsert::NoRun),
            Some(row) => row.get(0),
        };
        if finished {
            return Ok(ChildInsert::Finished);
        }
        let insert = transaction
            .prepare_cached(&format!(
                "INSERT INTO {} (run_id, id, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                child_table(child)
            ))
            .await
            .map_err(db_error)?;
        let rows = transaction
            .execute(&insert, &[&run, &id, &value])
            .await
            .map_err(db_error)?;
        transaction.commit().await.map_err(db_error)?;
        Ok(if rows == 1 {
            ChildInsert::Inserted
        } else {
            ChildInsert::Exists
        })
    }

    async fn get_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT value FROM {} WHERE run_id = $1 AND id = $2",
                child_table(child)
            ))
            .await
            .map_err(db_error)?;
        let row = client
            .query_opt(&statement, &[&run, &id])
            .await
            .map_err(db_error)?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn swap_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "UPDATE {} SET value = $4 WHERE run_id = $1 AND id = $2 AND value = $3",
                child_table(child)
            ))
            .await
            .map_err(db_error)?;
        let rows = client
            .execute(&statement, &[&run, &id, &old, &new])
            .await
            .map_err(db_error)?;
        Ok(rows == 1)
    }

    async fn children(&self, child: Child, run: &str) -> Result<Vec<Pair>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT id, value FROM {} WHERE run_id = $1",
                child_table(child)
            ))
            .await
            .map_err(db_error)?;
        let rows = client.query(&statement, &[&run]).await.map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect())
    }
}
