//! A fixed amount of work on the pipeline's hot paths, for instruction counting.
//!
//! `per_call execute N` runs `N` sequential `ToolRegistry::execute` calls of a trivial tool with
//! no hooks; `per_call awaited N` runs one `run_code` program making `N` sequential awaited
//! `tools.read(...)` calls (each through the bridge, the sub-call lane and the whole pipeline).
//! Both warm up first. Run it under `valgrind --tool=callgrind` for `N` and `2N` and divide the
//! difference by `N` to get the instructions of one call: `scripts/per-call-instructions` does
//! exactly that (the fixed costs — process start, warm-up, a program's sandbox — cancel out).

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

#[cfg(feature = "code-mode")]
async fn awaited(n: u64) {
    use std::sync::Arc;

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
    registry.set_code_runtime(Arc::new(runtime));
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

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(what), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!("usage: per_call (execute|awaited) N");
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
        other => {
            eprintln!("unknown probe {other:?}: execute or awaited");
            std::process::exit(2);
        }
    }
}
