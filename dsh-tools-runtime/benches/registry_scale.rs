//! The registry at scale: 10,000 tools and 1,000 scopes.
//!
//! - `registry_scale/register_10000_tools`: registering 10,000 tools (MCP-style schemas, each
//!   compiled and checked at registration) into an empty registry;
//! - `registry_scale/visible/10000_tools` and `registry_scale/prompt_native/10000_tools`: one
//!   scope's visible list and its native prompt (the wire schemas) over 10,000 global tools;
//! - `registry_scale/prompt_code_cached/10000_tools`: the Code Mode prompt of a scope whose SDK
//!   text is cached (the per-turn cost of a host);
//! - `registry_scale/1000_scopes/*`: 1,000 agent scopes, each with 10 tools of its own over 100
//!   global ones: creating a scope with its tools, and one scope's `visible` and `prompt` with
//!   999 others alive.
//!
//! Before the timings, the resident memory of 10,000 registered tools and of 1,000 scopes is
//! printed (growth of the process's RSS over the empty registry, per tool and per scope).

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use dsh_tools::ToolDefinition;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, Scope, ToolRegistry};
use serde_json::{Value, json};

fn definition(name: &str, i: usize) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!(
            "Tool {i}: searches one service's records and returns the matches."
        ))
        .raw_parameters(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for.", "maxLength": 400},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "mode": {"type": "string", "enum": ["fast", "thorough"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("a valid tool")
}

fn definitions(prefix: &str, n: usize) -> Vec<ToolDefinition> {
    (0..n)
        .map(|i| definition(&format!("{prefix}_{i:05}"), i))
        .collect()
}

fn registry(mode: PresentationMode) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config"),
    ))
    .install(&registry)
    .expect("Code Mode installs");
    registry
}

fn register_all(registry: &ToolRegistry, defs: Vec<ToolDefinition>) {
    for def in defs {
        registry.register(def).expect("registered").keep();
    }
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// 1,000 agent scopes of 10 tools each.
fn scopes(registry: &ToolRegistry) -> Vec<Scope> {
    (0..1000)
        .map(|s| {
            let scope = registry.new_scope();
            for def in definitions(&format!("agent{s:04}"), 10) {
                scope.register(def).expect("registered").keep();
            }
            scope
        })
        .collect()
}

fn memory() {
    let Some(before) = rss_kib() else {
        println!("registry_scale: memory: skipped (no /proc/self/status)");
        return;
    };
    let registry = registry(PresentationMode::Native);
    register_all(&registry, definitions("tool", 10_000));
    let tools = rss_kib().unwrap_or(before).saturating_sub(before);
    let scoped = scopes(&registry);
    let all = rss_kib().unwrap_or(before).saturating_sub(before);
    println!(
        "registry_scale: 10,000 tools: +{tools} KiB RSS ({:.1} KiB per tool); 1,000 scopes of 10 tools: +{} KiB ({:.1} KiB per scope)",
        tools as f64 / 10_000.0,
        all - tools,
        (all - tools) as f64 / 1000.0
    );
    drop(scoped);
}

fn benches(c: &mut Criterion) {
    memory();
    let mut group = c.benchmark_group("registry_scale");
    group.sample_size(10);
    group.bench_function("register_10000_tools", |b| {
        b.iter_batched(
            || {
                (
                    registry(PresentationMode::Native),
                    definitions("tool", 10_000),
                )
            },
            |(registry, defs)| {
                register_all(&registry, defs);
                registry
            },
            BatchSize::PerIteration,
        )
    });

    let native = registry(PresentationMode::Native);
    register_all(&native, definitions("tool", 10_000));
    let agent = native.new_scope();
    assert_eq!(native.visible(Some(agent.id())).len(), 10_000);
    group.bench_function("visible/10000_tools", |b| {
        b.iter(|| native.visible(black_box(Some(agent.id()))))
    });
    group.bench_function("prompt_native/10000_tools", |b| {
        b.iter(|| {
            native
                .prompt(black_box(Some(agent.id())))
                .expect("a prompt")
        })
    });

    let code = registry(PresentationMode::Code);
    register_all(&code, definitions("tool", 10_000));
    let coder = code.new_scope();
    let first = code.prompt(Some(coder.id())).expect("a prompt");
    assert!(first.sections.iter().any(|s| s.name == "tools:sdk"));
    group.bench_function("prompt_code_cached/10000_tools", |b| {
        b.iter(|| code.prompt(black_box(Some(coder.id()))).expect("a prompt"))
    });

    let shared = registry(PresentationMode::Native);
    register_all(&shared, definitions("tool", 100));
    let alive = scopes(&shared);
    let one = alive[500].id();
    assert_eq!(shared.visible(Some(one)).len(), 110);
    group.bench_function("1000_scopes/create_scope_with_10_tools", |b| {
        b.iter_batched(
            || definitions("extra", 10),
            |defs| {
                let scope = shared.new_scope();
                for def in defs {
                    scope.register(def).expect("registered").keep();
                }
                scope
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("1000_scopes/visible", |b| {
        b.iter(|| shared.visible(black_box(Some(one))))
    });
    group.bench_function("1000_scopes/prompt_native", |b| {
        b.iter(|| shared.prompt(black_box(Some(one))).expect("a prompt"))
    });
    group.finish();
}

criterion_group!(registry_benches, benches);
criterion_main!(registry_benches);
