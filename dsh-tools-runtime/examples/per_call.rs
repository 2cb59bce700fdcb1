//! A fixed amount of work on the hot paths, for instruction counting.
//!
//! `per_call PROBE N` repeats one probe's unit of work `N` times after a warm-up:
//!
//! - `execute`: one `ToolRegistry::execute` of a trivial tool with no hooks;
//! - `awaited`: one awaited `tools.read(...)` call of a `run_code` program (through the bridge,
//!   the sub-call lane and the whole pipeline; one program makes all `N`);
//! - `batch`: one call of an `execute_batch` of 100 concurrency-safe trivial calls (`N` is
//!   rounded up to whole batches);
//! - `sequential`: one call of 100 sequential `execute`s of inputs made up front, whose results
//!   are kept until all 100 are done (the `sequential_execute` side of the
//!   `batch_100_parallel_safe` bench: `batch`'s like-for-like comparison);
//! - `validate-valid` / `validate-invalid`: `validate_args` of a typical 6-property schema on a
//!   valid value / on one with three violations, messages rendered (the `validate_args` bench's);
//! - `sdk10`: the SDK section for 10 tools, rendered from scratch (`render_tools_sdk`);
//! - `sdk200`: the SDK section for the `sdk` bench's 200 tools, rendered from scratch;
//! - `strip`: the type strip of a fixed three-call program (`strip_program`).
//!
//! Run it under `valgrind --tool=callgrind` for `N` and `2N` and divide the difference by `N` to
//! get the instructions of one unit: `scripts/per-call-instructions` does exactly that (the fixed
//! costs — process start, warm-up, a program's sandbox — cancel out), and `scripts/perf-guard`
//! compares the figures with a committed baseline.

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use serde_json::{Value, json};

fn trivial() -> ToolDefinition {
    ToolDefinition::builder("trivial")
        .description("Returns true.")
        .execute(|_, _| async { Ok(Value::Bool(true)) })
        .build()
        .expect("a valid definition")
}

async fn execute(n: u64) {
    let registry = ToolRegistry::new();
    registry.register(trivial()).expect("registers").keep();
    let call = || ToolExecutionInput::new("call-1", "trivial", json!({}));
    for _ in 0..100 {
        std::hint::black_box(registry.execute(call()).await);
    }
    for _ in 0..n {
        std::hint::black_box(registry.execute(call()).await);
    }
}

async fn batch(n: u64) {
    let registry = ToolRegistry::new();
    let tool = ToolDefinition::builder("trivial")
        .description("Returns true.")
        .concurrency_safe(true)
        .execute(|_, _| async { Ok(Value::Bool(true)) })
        .build()
        .expect("a valid definition");
    registry.register(tool).expect("registers").keep();
    // The inputs are made as the `execute` probe makes its one (the same id: nothing in a
    // batch needs distinct ids), so the two figures differ by the scheduling alone.
    let inputs = || -> Vec<ToolExecutionInput> {
        let mut inputs = Vec::with_capacity(100);
        inputs.resize_with(100, || {
            ToolExecutionInput::new("call-1", "trivial", json!({}))
        });
        inputs
    };
    std::hint::black_box(registry.execute_batch(inputs()).await);
    for _ in 0..n.div_ceil(100) {
        std::hint::black_box(registry.execute_batch(inputs()).await);
    }
}

async fn sequential(n: u64) {
    let registry = ToolRegistry::new();
    registry.register(trivial()).expect("registers").keep();
    // As the bench's `sequential_execute`: the same 100 inputs as `batch`'s, made up front, each
    // executed in turn, the results kept until all 100 are done.
    let hundred = || async {
        let mut inputs = Vec::with_capacity(100);
        inputs.resize_with(100, || {
            ToolExecutionInput::new("call-1", "trivial", json!({}))
        });
        let mut results = Vec::with_capacity(inputs.len());
        for input in inputs {
            results.push(registry.execute(input).await);
        }
        results
    };
    std::hint::black_box(hundred().await);
    for _ in 0..n.div_ceil(100) {
        std::hint::black_box(hundred().await);
    }
}

#[cfg(feature = "code-mode")]
async fn awaited(n: u64) {
    use std::sync::Arc;

    use dsh_tools_runtime::code::CodeMode;
    use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
    use dsh_tools_runtime::{PresentationMode, RegistryConfig};

    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let read = ToolDefinition::builder("read")
        .description("Read a file.")
        .parameters_json(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
        .concurrency_safe(true)
        .execute(|_, _| async { Ok(json!("fn main() {}")) })
        .build()
        .expect("a valid definition");
    registry.register(read).expect("registers").keep();
    let config = QuickJsConfig {
        max_tool_calls: usize::MAX,
        ..QuickJsConfig::default()
    };
    let runtime = QuickJsRuntime::new(config).expect("a valid config");
    CodeMode::new(Arc::new(runtime))
        .install(&registry)
        .expect("Code Mode installs");
    let run = |calls: u64| {
        let program =
            format!("for (let i = 0; i < {calls}; i++) await tools.read({{ path: 'a.rs' }});");
        ToolExecutionInput::new(
            "probe",
            "run_code",
            json!({"code": program, "description": "A probe program"}),
        )
    };
    let warm = registry.execute(run(100)).await;
    assert!(!warm.is_error(), "{warm:?}");
    let measured = registry.execute(run(n)).await;
    assert!(!measured.is_error(), "{measured:?}");
}

/// The `validate_args` bench's schema and values (`dsh-tools/benches/validate_args.rs`).
fn validate(n: u64, valid: bool) {
    use dsh_tools::subset::{CompiledSchema, Vocabulary};

    let schema = json!({
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
    });
    let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported");
    let value = if valid {
        json!({"path": "/src/main.rs", "offset": 10, "limit": 200, "mode": "text", "follow": true, "tags": ["a", "b"]})
    } else {
        json!({"path": 7, "offset": -1, "limit": 200, "mode": "hex", "follow": true, "tags": ["a"]})
    };
    let once = || match dsh_tools::args::validate_args(&compiled, std::hint::black_box(&value)) {
        Ok(()) => 0,
        Err(error) => error.to_string().len(),
    };
    assert_eq!(once() == 0, valid);
    for _ in 0..100 + n {
        std::hint::black_box(once());
    }
}

#[cfg(feature = "code-mode")]
fn sdk10(n: u64) {
    use dsh_tools_runtime::code::sdk::{SdkTool, render_tools_sdk};

    let tools: Vec<SdkTool> = (0..10)
        .map(|i| SdkTool {
            name: format!("tool_{i}"),
            description: format!("Tool number {i}: does one thing well."),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file."},
                    "limit": {"type": "integer", "minimum": 0},
                    "mode": {"type": "string", "enum": ["fast", "thorough"]},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["path"]
            }),
            output: json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        })
        .collect();
    for _ in 0..10 + n {
        std::hint::black_box(render_tools_sdk(std::hint::black_box(&tools)));
    }
}

/// The `sdk` bench's 200 generated tools (`dsh-tools-runtime/benches/sdk.rs`): half typed-Rust
/// style (optional integers as `oneOf [integer, null]`), half MCP style, closed object outputs.
/// The `sdk` bench's tool set.
#[cfg(feature = "code-mode")]
#[path = "../benches/support/sdk_tools.rs"]
mod sdk_tools;

#[cfg(feature = "code-mode")]
fn sdk200(n: u64) {
    use dsh_tools_runtime::code::sdk::render_tools_sdk;

    let tools = sdk_tools::tools(200);
    for _ in 0..1 + n {
        std::hint::black_box(render_tools_sdk(std::hint::black_box(&tools)));
    }
}

#[cfg(feature = "code-mode")]
fn strip(n: u64) {
    use dsh_tools_runtime::code::strip::{SourceLimits, strip_program};

    const PROGRAM: &str = "interface Hit { path: string; line: number }\n\
        const files = await tools.list({ dir: 'src' }) as string[];\n\
        const hits: Hit[] = await tools.search({ pattern: 'TODO', files });\n\
        const text = await tools.read({ path: hits[0].path });\n\
        console.log(`${hits.length} hits`);\n\
        return { first: hits[0], size: (text as string).length };";
    for _ in 0..10 + n {
        std::hint::black_box(strip_program(PROGRAM, &SourceLimits::default()).expect("strips"));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(what), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!("usage: per_call PROBE N (see the example's docs for the probes)");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    match what.as_str() {
        "execute" => rt.block_on(execute(n)),
        #[cfg(feature = "code-mode")]
        "awaited" => rt.block_on(awaited(n)),
        "batch" => rt.block_on(batch(n)),
        "sequential" => rt.block_on(sequential(n)),
        "validate-valid" => validate(n, true),
        "validate-invalid" => validate(n, false),
        #[cfg(feature = "code-mode")]
        "sdk10" => sdk10(n),
        #[cfg(feature = "code-mode")]
        "sdk200" => sdk200(n),
        #[cfg(feature = "code-mode")]
        "strip" => strip(n),
        other => {
            eprintln!(
                "unknown probe {other:?}: execute, awaited, batch, sequential, validate-valid, validate-invalid, sdk10, sdk200 or strip"
            );
            std::process::exit(2);
        }
    }
}
