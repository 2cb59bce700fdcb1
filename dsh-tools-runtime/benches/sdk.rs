//! SDK emission (`render_tools_sdk`) for 10, 200 and 2,000 generated tools, and one
//! `json_schema_to_ts` call; and the same 200 tools' prompt from a registry, where the SDK text is
//! cached per scope and tool-set generation (what a host pays per model turn).
//!
//! `render_tools_sdk` prints every tool on its own and assembles the pieces;
//! `sdk_declarations_whole/200 tools` is the same declarations printed as one AST (the way
//! before per-tool fragments). `sdk_cache/200 tools, cold` renders through a fresh `SdkCache`
//! (every tool printed, as a registry's first prompt does); `sdk_cache/200 tools, one changed`
//! re-renders the set after one tool changed, the other 199 fragments warm (a scope whose tool
//! set changed, or a new scope).
//!
//! The generated tools mix the shapes real tool sets have: half are typed Rust tools (optional
//! integers as `oneOf [integer with bounds, null]`, outside the reference subset), half are
//! MCP-style schemas (`$schema`, `additionalProperties: false`, enums, nested arrays of
//! objects); every tool has a closed object output. Target: ≤ 1 ms for 200 tools.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::hint::black_box;

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dsh_tools::ToolDefinition;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::sdk::{
    SdkCache, SdkTool, json_schema_to_ts, render_tools_sdk, sdk_declarations_whole, sdk_tool_from,
};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::Value;

#[path = "support/sdk_tools.rs"]
mod sdk_tools;
use sdk_tools::{mcp_style, tools};

fn definition(tool: SdkTool) -> ToolDefinition {
    ToolDefinition::builder(tool.name)
        .description(tool.description)
        .raw_parameters(tool.parameters)
        .output_json(tool.output)
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("a valid tool")
}

fn bench_sdk(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_tools_sdk");
    for n in [10, 200, 2000] {
        let set = tools(n);
        let bytes = render_tools_sdk(&set).len();
        eprintln!("render_tools_sdk: {n} tools → {bytes} bytes");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(format!("{n} tools"), |b| {
            b.iter(|| render_tools_sdk(black_box(&set)))
        });
    }
    group.finish();
    let set = tools(200);
    c.bench_function("sdk_declarations_whole/200 tools", |b| {
        b.iter(|| sdk_declarations_whole(black_box(&set)))
    });

    let definitions: Vec<ToolDefinition> = tools(200).into_iter().map(definition).collect();
    c.bench_function("sdk_cache/200 tools, cold", |b| {
        b.iter(|| SdkCache::new().render(black_box(&definitions)))
    });
    // Tool 0 alternates between two definitions: each render prints it and reuses the other
    // 199 fragments, which the previous SDK holds (as a scope's cached SDK does).
    let cache = SdkCache::new();
    let mut changed = definitions.clone();
    let variants = [definitions[0].clone(), definitions[0].clone()].map(|d| {
        definition(SdkTool {
            name: d.name().to_owned(),
            description: format!("{} Changed.", d.description()),
            parameters: d.parameters().clone(),
            output: d.output_schema().clone(),
        })
    });
    let mut held = cache.render(&changed);
    let mut flip = 0;
    c.bench_function("sdk_cache/200 tools, one changed", |b| {
        b.iter(|| {
            flip ^= 1;
            changed[0] = variants[flip].clone();
            held = cache.render(black_box(&changed));
        })
    });
    assert_eq!(
        held.text(),
        render_tools_sdk(&changed.iter().map(sdk_tool_from).collect::<Vec<_>>())
    );
    eprintln!("sdk_cache: {} fragments printed in all", cache.printed());

    let schema = mcp_style(1);
    c.bench_function("json_schema_to_ts/mcp-style schema", |b| {
        b.iter(|| json_schema_to_ts(black_box(&schema), 1))
    });

    // The same 200 tools in a Code Mode registry: the first prompt renders the SDK, later ones
    // reuse the text until the tool set changes.
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config"),
    ))
    .install(&registry)
    .expect("Code Mode installs");
    for tool in tools(200) {
        registry
            .register(definition(tool))
            .expect("registered")
            .keep();
    }
    let first = registry.prompt(None).expect("a code runtime is mounted");
    assert!(first.sections.iter().any(|s| s.name == "tools:sdk"));
    c.bench_function("registry_prompt_cached/200 tools", |b| {
        b.iter(|| registry.prompt(black_box(None)).expect("a prompt"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench_sdk
}
criterion_main!(benches);
