//! The README's "Large results" example, run as written: the body of
//! [`the_large_results_example_runs`] between its markers is the README's code block, which
//! [`the_readme_shows_this_example`] checks line by line.

use std::error::Error;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::{RegistryConfig, ToolRegistry, tokens};
use serde_json::json;

#[tokio::test]
async fn the_large_results_example_runs() -> Result<(), Box<dyn Error>> {
    // README: large results
    let registry = ToolRegistry::with_config(RegistryConfig {
        max_result_tokens: Some(10_000), // the registry's default; `None` turns budgets off
        ..RegistryConfig::default()
    });
    let log: String = (1..=50_000).map(|i| format!("line {i}\n")).collect();
    let read_log = ToolDefinition::builder("read_log")
        .description("Read the build log from a line on.")
        .max_result_tokens(2_000) // this tool's own budget
        .result_hint(|args| format!("call read_log with a larger `from` than {}", args["from"]))
        .execute(move |_, _| std::future::ready(Ok(json!(log))))
        .build()?;
    registry.register(read_log)?.keep();

    let agent = registry.scope();
    agent.set_max_result_tokens(Some(5_000))?.keep(); // this agent's calls, unless the tool says
    let mut call = ToolExecutionInput::new("c1", "read_log", json!({"from": 1}));
    call.agent = Some(agent.id());
    let result = registry.execute(call).await;
    let text = result.content()[0].as_text().unwrap();
    assert!(tokens::count(text) <= 2_000);
    assert!(text.starts_with("line 1\n") && text.ends_with("line 50000\n"));
    assert!(text.contains("call read_log with a larger `from` than 1"));
    assert_eq!(result.value().unwrap().as_str().unwrap().len(), 538_894); // the value is whole
    // README: end
    Ok(())
}

/// The lines of this file between `marker` and `// README: end`, four spaces of indentation
/// removed.
fn example(source: &str, marker: &str) -> Vec<String> {
    source
        .lines()
        .skip_while(|line| line.trim() != marker)
        .skip(1)
        .take_while(|line| line.trim() != "// README: end")
        .map(|line| line.strip_prefix("    ").unwrap_or(line).to_owned())
        .collect()
}

#[test]
fn the_readme_shows_this_example() {
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find("## Large results").expect("the section")..];
    let block: Vec<String> = section
        .lines()
        .skip_while(|line| !line.starts_with("```rust"))
        .skip(1)
        .take_while(|line| *line != "```")
        .map(str::to_owned)
        .collect();
    let source = include_str!("readme.rs");
    assert_eq!(block, example(source, "// README: large results"));
}
