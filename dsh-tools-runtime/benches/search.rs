//! Tool search (`dsh_tools_runtime::search`): one query over the real MCP tool corpus
//! (`tests/fixtures/mcp-tools`, 353 tools of 26 servers) and over 10,000 tools (the corpus
//! repeated under 29 prefixes, as if 29 copies of each server were imported), and building the
//! index of 10,000 tools.
//!
//! - `tool_search/query/353_tools`, `tool_search/query/10000_tools`: one request in plain words
//!   (the median over a fixed set of five is what criterion reports per iteration / 5);
//! - `tool_search/index/10000_tools`: building the index.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_tools_runtime::search::ToolIndex;
use serde_json::Value;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-tools");

const QUERIES: [&str; 5] = [
    "post a message to a slack channel",
    "take a screenshot of the web page",
    "find open tickets in a repository",
    "get driving directions between two places",
    "show the logs of a pod",
];

fn corpus() -> Vec<(String, String, Value)> {
    let mut files: Vec<_> = std::fs::read_dir(CORPUS)
        .expect("the corpus")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .flat_map(|path| {
            let server = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let entries: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("readable"))
                    .expect("a JSON list");
            entries.into_iter().map(move |entry| {
                (
                    format!("{server}.{}", entry["name"].as_str().expect("a name")),
                    entry["description"].as_str().unwrap_or_default().to_owned(),
                    entry["parameters"].clone(),
                )
            })
        })
        .collect()
}

fn index_of(tools: &[(String, String, Value)]) -> ToolIndex {
    ToolIndex::new(tools.iter().map(|(n, d, p)| (n.as_str(), d.as_str(), p)))
}

fn bench(c: &mut Criterion) {
    let real = corpus();
    let many: Vec<(String, String, Value)> = (0..29)
        .flat_map(|copy| {
            real.iter()
                .map(move |(n, d, p)| (format!("copy{copy}_{n}"), d.clone(), p.clone()))
        })
        .take(10_000)
        .collect();
    assert_eq!(many.len(), 10_000);
    let mut group = c.benchmark_group("tool_search");
    group.throughput(Throughput::Elements(QUERIES.len() as u64));
    for (label, tools) in [("353_tools", &real), ("10000_tools", &many)] {
        let index = index_of(tools);
        group.bench_function(format!("query/{label}"), |b| {
            b.iter(|| {
                for query in QUERIES {
                    black_box(index.search(black_box(query), 5));
                }
            })
        });
    }
    group.throughput(Throughput::Elements(10_000));
    group.sample_size(10);
    group.bench_function("index/10000_tools", |b| {
        b.iter(|| index_of(black_box(&many)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
