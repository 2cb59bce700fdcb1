//! The durable stores side by side: journal append and read, spend, and spend throughput
//! with 8 concurrent workers — memory, file, PostgreSQL and Redis in one run.
//!
//! PostgreSQL and Redis are the servers of `scripts/services` (`DSH_TEST_POSTGRES_URL`,
//! `DSH_TEST_REDIS_URL`); a store whose variable is not set is left out, with a note.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_tools_store::{DurableStore, FileStore, MemoryStore, PostgresStore, RedisStore, StoreKey};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// Entries in the run the read benchmark reads.
const READ_ENTRIES: u64 = 20;
/// Workers of the throughput benchmark.
const WORKERS: u64 = 8;

static NEXT: AtomicU64 = AtomicU64::new(0);

/// An id no earlier iteration used (in this process, and, by the nonce, in earlier runs).
fn fresh(label: &str, nonce: &str) -> String {
    format!(
        "bench-{nonce}-{label}-{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A journal entry of a typical size (a tool's small JSON result, ~200 bytes).
fn entry(n: u64) -> Value {
    json!({"ok": {"path": format!("/srv/data/file-{n}.txt"), "bytes": 1834, "sha256":
        "4f2a7c1d9e0b3a5f6c8d2e1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a10"}, "tool": "write_file"})
}

fn stores(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn DurableStore>)> {
    let key = StoreKey::generate();
    let mut stores: Vec<(&'static str, Arc<dyn DurableStore>)> = vec![
        ("memory", Arc::new(MemoryStore::new(key.clone()))),
        (
            "file",
            Arc::new(FileStore::open(dir, key.clone()).expect("a store directory")),
        ),
    ];
    match std::env::var("DSH_TEST_POSTGRES_URL") {
        Ok(url) => stores.push((
            "postgres",
            Arc::new(PostgresStore::new(&url, key.clone()).unwrap()),
        )),
        Err(_) => eprintln!(
            "postgres left out: DSH_TEST_POSTGRES_URL is not set (scripts/services start)"
        ),
    }
    match std::env::var("DSH_TEST_REDIS_URL") {
        Ok(url) => stores.push(("redis", Arc::new(RedisStore::new(&url, key).unwrap()))),
        Err(_) => {
            eprintln!("redis left out: DSH_TEST_REDIS_URL is not set (scripts/services start)")
        }
    }
    stores
}

fn bench(c: &mut Criterion) {
    let rt: Runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let nonce = format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let stores = stores(dir.path());

    let mut group = c.benchmark_group("store");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for (name, store) in &stores {
        group.bench_function(format!("journal_append/{name}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let run = fresh("append", &nonce);
                    store.begin_run(&run, &json!(null)).await.unwrap();
                    let start = Instant::now();
                    for n in 1..=iters {
                        assert!(store.append_entry(&run, n, &entry(n)).await.unwrap());
                    }
                    start.elapsed()
                })
            })
        });
        let run = fresh("read", &nonce);
        rt.block_on(async {
            store.begin_run(&run, &json!(null)).await.unwrap();
            for n in 1..=READ_ENTRIES {
                store.append_entry(&run, n, &entry(n)).await.unwrap();
            }
        });
        group.bench_function(format!("journal_read_20/{name}"), |b| {
            b.iter(|| {
                rt.block_on(async { assert_eq!(store.entries(&run).await.unwrap().len(), 20) })
            })
        });
        group.bench_function(format!("spend/{name}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let ids: Vec<String> = (0..iters).map(|_| fresh("spend", &nonce)).collect();
                    let start = Instant::now();
                    for id in &ids {
                        assert!(store.spend(id).await.unwrap());
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.throughput(Throughput::Elements(1));
    for (name, store) in &stores {
        group.bench_function(format!("spend_8_workers/{name}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    let workers: Vec<_> = (0..WORKERS)
                        .map(|w| {
                            let store = Arc::clone(store);
                            let nonce = nonce.clone();
                            tokio::spawn(async move {
                                for _ in (w..iters).step_by(WORKERS as usize) {
                                    assert!(store.spend(&fresh("spend8", &nonce)).await.unwrap());
                                }
                            })
                        })
                        .collect();
                    for worker in workers {
                        worker.await.unwrap();
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
