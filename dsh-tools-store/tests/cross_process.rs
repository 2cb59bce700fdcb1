//! Exactly once across processes: 8 processes spend the same 200 continuation ids at once
//! against one shared store (file, PostgreSQL, Redis); every id is spent exactly once in total.
//!
//! The processes are this test binary itself, run with `--ignored --exact worker`: the
//! `worker` test reads what to do from the environment and prints the ids it won.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::Arc;

use dsh_tools_store::{DurableStore, FileStore, PostgresStore, RedisStore, StoreKey};

const PROCESSES: usize = 8;
const IDS: usize = 200;
/// Concurrent spends inside each process.
const TASKS: usize = 4;

/// Spawns the processes, all started before any is awaited, and counts the wins per id.
fn spend_everywhere(kind: &str, target: &str, prefix: &str) {
    let key = common::hex(StoreKey::generate().as_bytes());
    let children: Vec<_> = (0..PROCESSES)
        .map(|worker| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--ignored",
                    "--exact",
                    "worker",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(
                    "DSH_STORE_WORKER",
                    format!("{kind}\t{target}\t{key}\t{prefix}\t{worker}"),
                )
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut wins: HashMap<String, usize> = HashMap::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a worker failed: {output:?}");
        for line in String::from_utf8(output.stdout).unwrap().lines() {
            // The first line follows libtest's `test worker ... `.
            if let Some((_, id)) = line.split_once("WON ") {
                *wins.entry(id.to_owned()).or_default() += 1;
            }
        }
    }
    assert_eq!(wins.len(), IDS, "every id spent by some process");
    let twice: Vec<_> = wins.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "ids spent more than once: {twice:?}");
}

#[test]
fn file_store_spends_each_id_once_across_8_processes() {
    let dir = tempfile::tempdir().unwrap();
    spend_everywhere(
        "file",
        dir.path().to_str().unwrap(),
        &common::unique("file"),
    );
}

#[test]
fn postgres_store_spends_each_id_once_across_8_processes() {
    let Some(url) = common::server_url("DSH_TEST_POSTGRES_URL") else {
        return;
    };
    spend_everywhere("postgres", &url, &common::unique("pg"));
}

#[test]
fn redis_store_spends_each_id_once_across_8_processes() {
    let Some(url) = common::server_url("DSH_TEST_REDIS_URL") else {
        return;
    };
    spend_everywhere("redis", &url, &common::unique("redis"));
}

/// One process of the tests above (run by them, not on its own).
#[test]
#[ignore = "a child process of the cross-process tests"]
fn worker() {
    let spec = std::env::var("DSH_STORE_WORKER").expect("run by the cross-process tests");
    let [kind, target, key, prefix, worker]: [&str; 5] =
        spec.split('\t').collect::<Vec<_>>().try_into().unwrap();
    let key = StoreKey::new(common::unhex(key)).unwrap();
    let store: Arc<dyn DurableStore> = match kind {
        "file" => Arc::new(FileStore::open(target, key).unwrap()),
        "postgres" => Arc::new(PostgresStore::new(target, key).unwrap()),
        "redis" => Arc::new(RedisStore::with_prefix(target, key, &format!("{prefix}:")).unwrap()),
        other => panic!("unknown store {other}"),
    };
    // Each process walks the ids from another starting point, so that they collide all along.
    let start: usize = worker.parse::<usize>().unwrap() * IDS / PROCESSES;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let won = runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let store = Arc::clone(&store);
                let prefix = prefix.to_owned();
                tokio::spawn(async move {
                    let mut won = Vec::new();
                    for n in (task..IDS).step_by(TASKS) {
                        let id = format!("{prefix}-{}", (start + n) % IDS);
                        if store.spend(&id).await.unwrap() {
                            won.push(id);
                        }
                    }
                    won
                })
            })
            .collect();
        let mut won = Vec::new();
        for task in tasks {
            won.extend(task.await.unwrap());
        }
        won
    });
    for id in won {
        println!("WON {id}");
    }
}
