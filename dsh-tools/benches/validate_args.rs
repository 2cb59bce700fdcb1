//! `validate_args` against the `jsonschema` crate on the same schemas and values.
//!
//! Run with `cargo bench -p dsh-tools --bench validate_args`. Each group measures ours and the
//! comparison side by side in the same run; BENCHMARKS.md records the ratios.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dsh_tools::subset::{CompiledSchema, Vocabulary};
use serde_json::{Value, json};
use std::hint::black_box;

/// A typical 6-property tool parameter schema.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
            "limit": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
            "mode": {"type": "string", "enum": ["text", "binary"]},
            "follow": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["path", "mode"]
    })
}

fn valid() -> Value {
    json!({"path": "/src/main.rs", "offset": 10, "limit": 200, "mode": "text", "follow": true, "tags": ["a", "b"]})
}

/// Three violations: a wrong type, an enum miss, a bound.
fn invalid() -> Value {
    json!({"path": 7, "offset": -1, "limit": 200, "mode": "hex", "follow": true, "tags": ["a"]})
}

fn bench(c: &mut Criterion) {
    let schema = schema();
    let ours = CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported schema");
    let theirs = jsonschema::validator_for(&schema).expect("valid schema");
    let (valid, invalid) = (valid(), invalid());
    assert!(dsh_tools::args::validate_args(&ours, &valid).is_ok());
    assert!(theirs.is_valid(&valid));
    let ours_invalid = dsh_tools::args::validate_args(&ours, &invalid).unwrap_err();
    let theirs_invalid: Vec<String> = theirs
        .iter_errors(&invalid)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(ours_invalid.violations.len(), 3);
    assert_eq!(theirs_invalid.len(), 3);

    let mut group = c.benchmark_group("validate_args");
    group.bench_function(BenchmarkId::new("dsh-tools", "valid"), |b| {
        b.iter(|| dsh_tools::args::validate_args(black_box(&ours), black_box(&valid)).is_ok())
    });
    group.bench_function(BenchmarkId::new("jsonschema", "valid"), |b| {
        b.iter(|| theirs.validate(black_box(&valid)).is_ok())
    });
    group.bench_function(
        BenchmarkId::new("dsh-tools", "3-violations-with-messages"),
        |b| {
            b.iter(|| {
                dsh_tools::args::validate_args(black_box(&ours), black_box(&invalid))
                    .unwrap_err()
                    .to_string()
            })
        },
    );
    group.bench_function(
        BenchmarkId::new("jsonschema", "3-violations-with-messages"),
        |b| {
            b.iter(|| {
                theirs
                    .iter_errors(black_box(&invalid))
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            })
        },
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
