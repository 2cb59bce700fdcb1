//! A Code Mode host: the registry presents its tools as a TypeScript SDK, the model (here, a
//! fixed program) writes code against it, and `run_code` runs that code in a fresh QuickJS
//! sandbox whose `tools.*` calls go back through the pipeline.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example code_mode_host
//! ```
//!
//! Prints the prompt sections the host would put in its system prompt, the wire tools the
//! model sees (just `run_code`), then the program's result and the durable dispatch log.

use std::sync::Arc;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::tool;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeEventSink, CodeMode};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

/// Look up a city's population (millions).
#[tool(concurrency_safe = true, read_only)]
async fn population(
    /// The city.
    city: String,
) -> Result<f64, String> {
    match city.as_str() {
        "Lisbon" => Ok(0.55),
        "Porto" => Ok(0.23),
        "Braga" => Ok(0.19),
        other => Err(format!("no data for {other}")),
    }
}

/// Prints each sub-call as the host's session log would record it.
struct PrintLog;

impl CodeEventSink for PrintLog {
    fn append(&self, event: CodeDispatchEvent) {
        println!("log: {}", serde_json::to_string(&event).unwrap_or_default());
    }
}

const PROGRAM: &str = r#"
const cities = ["Lisbon", "Porto", "Braga", "Atlantis"];
const results = await Promise.allSettled(cities.map((city) => tools.population({ city })));
let total = 0;
for (const [i, r] of results.entries()) {
  if (r.status === "fulfilled") total += r.value;
  else console.log(`${cities[i]}: ${(r.reason as ToolCallError).message}`);
}
return { total: Math.round(total * 100) / 100 };
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    registry
        .register(population::definition().expect("a valid tool"))
        .expect("registered")
        .keep();
    let sandbox = QuickJsRuntime::new(QuickJsConfig::default()).expect("a valid config");
    // Code Mode, installed explicitly: `run_code`, its SDK, and the dispatch log.
    CodeMode::new(Arc::new(sandbox))
        .with_event_sink(Arc::new(PrintLog))
        .install(&registry)
        .expect("Code Mode installs");

    let agent = registry.new_scope();
    let prompt = registry
        .prompt(Some(agent.id()))
        .expect("a code runtime is mounted");
    for section in &prompt.sections {
        println!(
            "--- prompt section {} (order {}) ---\n{}",
            section.name, section.order, section.text
        );
    }
    let wire: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    println!("--- wire tools: {wire:?}");

    let mut input = ToolExecutionInput::new(
        "call-1",
        "run_code",
        json!({"code": PROGRAM, "description": "Sum the populations"}),
    );
    input.agent = Some(agent.id());
    let result = registry.execute(input).await;
    println!(
        "--- run_code result:\n{}",
        result.content()[0].as_text().unwrap_or_default()
    );
}
