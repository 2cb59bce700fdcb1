//! A minimal tool: one `#[tool]` function, a registry, two calls through the pipeline.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example minimal_tool
//! ```
//!
//! The first call is valid and returns the typed value and the model-facing text; the second
//! breaks the parameter schema and comes back as an `INVALID_ARGS` result naming every
//! violation — the tool body never runs.

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::tool;
use dsh_tools_runtime::ToolRegistry;
use serde_json::json;

/// Add two integers.
#[tool(concurrency_safe = true, read_only)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> Result<i64, String> {
    a.checked_add(b)
        .ok_or_else(|| "the sum overflows".to_owned())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    registry
        .register(add::definition().expect("a valid tool"))
        .expect("registered")
        .keep();
    println!(
        "schema: {}",
        serde_json::to_string(&add::definition().unwrap().schema()).unwrap()
    );

    let ok = registry
        .execute(ToolExecutionInput::new(
            "call-1",
            "add",
            json!({"a": 2, "b": 40}),
        ))
        .await;
    println!("value: {}", ok.value().expect("a success"));
    println!(
        "model sees: {}",
        ok.content()[0].as_text().unwrap_or_default()
    );

    let bad = registry
        .execute(ToolExecutionInput::new(
            "call-2",
            "add",
            json!({"a": "2", "c": 1}),
        ))
        .await;
    println!(
        "model sees: {}",
        bad.content()[0].as_text().unwrap_or_default()
    );
}
