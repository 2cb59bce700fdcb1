//! Pipeline overhead: `ToolRegistry::execute` against calling the tool body directly, with and
//! without one hook of each kind, and batch throughput.
//!
//! Everything runs on one current-thread Tokio runtime. Per-call figures use `iter_custom` with
//! the whole measured loop inside one `block_on`, so runtime entry is not part of the figure.

#![allow(missing_docs, reason = "criterion_group! generates undocumented items")]

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use dsh_tools::exec::{ToolExecutionInput, ToolRunContext};
use dsh_tools::{ToolDefinition, ToolError};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::hooks::{execute_wrapper_fn, post_execute_fn, pre_execute_fn};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// The trivial tool body.
async fn trivial(_args: Arc<Value>, _ctx: ToolRunContext) -> Result<Value, ToolError> {
    Ok(Value::Bool(true))
}

fn trivial_tool(parallel: bool) -> ToolDefinition {
    ToolDefinition::builder("trivial")
        .description("Returns true.")
        .concurrency_safe(parallel)
        .execute(trivial)
        .build()
        .expect("a valid definition")
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

/// Times `iters` sequential awaits of `call()` inside one `block_on`.
fn timed<F, Fut>(rt: &Runtime, iters: u64, mut call: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future,
{
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    })
}

fn input() -> ToolExecutionInput {
    ToolExecutionInput::new("call-1", "trivial", json!({}))
}

fn with_every_hook(registry: &ToolRegistry) {
    registry
        .on_pre_execute(pre_execute_fn(|_, next| next.run()))
        .keep();
    registry.guard(|_| None).keep();
    registry
        .on_execute(execute_wrapper_fn(|dispatch, next| next.run(dispatch)))
        .keep();
    registry
        .on_post_execute(post_execute_fn(|_, _, next| next.run()))
        .keep();
    registry.on_result(|_, _| {}).keep();
}

fn execute_overhead(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("execute");

    let args = Arc::new(json!({}));
    let ctx = ToolRunContext::detached("call-1");
    group.bench_function("direct_body", |b| {
        b.iter_custom(|iters| timed(&rt, iters, || trivial(Arc::clone(&args), ctx.clone())));
    });

    let def = trivial_tool(false);
    group.bench_function("definition_execute", |b| {
        b.iter_custom(|iters| timed(&rt, iters, || def.execute(Arc::clone(&args), ctx.clone())));
    });

    let bare = ToolRegistry::new();
    bare.register(trivial_tool(false))
        .expect("registered")
        .keep();
    let template = input();
    group.bench_function("registry_no_hooks", |b| {
        b.iter_custom(|iters| timed(&rt, iters, || bare.execute(template.clone())));
    });

    let hooked = ToolRegistry::new();
    hooked
        .register(trivial_tool(false))
        .expect("registered")
        .keep();
    with_every_hook(&hooked);
    group.bench_function("registry_every_hook", |b| {
        b.iter_custom(|iters| timed(&rt, iters, || hooked.execute(template.clone())));
    });
    group.finish();
}

fn batch_throughput(c: &mut Criterion) {
    let rt = runtime();
    let registry = ToolRegistry::new();
    registry
        .register(trivial_tool(true))
        .expect("registered")
        .keep();
    let inputs: Vec<ToolExecutionInput> = (0..100)
        .map(|i| ToolExecutionInput::new(format!("call-{i}"), "trivial", json!({})))
        .collect();

    let mut group = c.benchmark_group("batch_100_parallel_safe");
    group.throughput(Throughput::Elements(100));
    group.bench_function("execute_batch", |b| {
        b.iter_batched(
            || inputs.clone(),
            |inputs| rt.block_on(registry.execute_batch(inputs)),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("sequential_execute", |b| {
        b.iter_batched(
            || inputs.clone(),
            |inputs| {
                rt.block_on(async {
                    let mut results = Vec::with_capacity(inputs.len());
                    for input in inputs {
                        results.push(registry.execute(input).await);
                    }
                    results
                })
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, execute_overhead, batch_throughput);
criterion_main!(benches);
