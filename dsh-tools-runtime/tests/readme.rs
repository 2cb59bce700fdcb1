//! The README's "Large results", "Approvals" and "Host state" examples, run as written: the body of each
//! test between its markers is the README's code block, which [`the_readme_shows_these_examples`]
//! checks line by line.

use std::error::Error;
use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{State, ToolDefinition, tool};
use dsh_tools_runtime::approval::{
    ApprovalOutcome, ApprovalPolicy, ApprovalRequest, ApprovalService,
};
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

    let agent = registry.new_scope();
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

// README: approvals
/// Delete a git branch.
#[tool(requires_approval)]
async fn delete_branch(name: String) -> Result<String, String> {
    Ok(format!("deleted {name}"))
}

/// The host's channel to a person (a terminal prompt, an IDE dialog); here, a rule.
struct Reviewer;

impl ApprovalService for Reviewer {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        let main = request
            .arguments
            .as_deref()
            .is_some_and(|a| a["name"] == "main");
        let answer = if main {
            ApprovalOutcome::Rejected
        } else {
            ApprovalOutcome::AllowedOnce
        };
        Box::pin(std::future::ready(answer))
    }
}

async fn approvals() -> Result<(), Box<dyn Error>> {
    let registry = ToolRegistry::new();
    registry.register(delete_branch::definition()?)?.keep();
    registry.set_approval(Arc::new(Reviewer)); // asked for every call that needs approval
    registry.set_approval_policy(ApprovalPolicy::DeclaredOrDestructive); // and `#[tool(destructive)]` ones

    let call = |name| ToolExecutionInput::new("c1", "delete_branch", json!({"name": name}));
    let done = registry.execute(call("old-feature")).await;
    assert_eq!(done.content()[0].as_text(), Some("deleted old-feature"));
    let refused = registry.execute(call("main")).await;
    assert_eq!(
        refused.content()[0].as_text(),
        Some(r#"Error: the user rejected tool "delete_branch""#)
    );
    Ok(())
}
// README: end

#[tokio::test]
async fn the_approvals_example_runs() -> Result<(), Box<dyn Error>> {
    approvals().await
}

// README: host state
/// The host's shared state: here, a to-do list.
#[derive(Default)]
struct Todos {
    items: std::sync::Mutex<Vec<String>>,
}

/// Add an item to the to-do list.
#[tool]
async fn add_todo(item: String, todos: State<Todos>) -> usize {
    let mut list = todos.items.lock().unwrap(); // `State<T>` derefs to the shared `T`
    list.push(item);
    list.len()
}

async fn host_state() -> Result<(), Box<dyn Error>> {
    let registry = ToolRegistry::new();
    registry.register(add_todo::definition()?)?.keep();
    let add = |item| ToolExecutionInput::new("c1", "add_todo", json!({"item": item}));

    // Forgotten: the prompt is refused before a model sees the tool, naming the type ...
    let refused = registry.prompt(None).unwrap_err();
    assert!(refused.to_string().starts_with(
        "dsh-tools: tool \"add_todo\" reads host state `readme::Todos` (a State<T> parameter), \
         which the registry does not provide"
    ));
    // ... and a call made anyway fails, telling the model what the host did not provide.
    let forgotten = registry.execute(add("milk")).await;
    assert!(forgotten.is_error());
    assert_eq!(
        forgotten.content()[0].as_text(),
        Some("Error: tool state `readme::Todos` was not provided by the host")
    );

    let todos = Arc::new(Todos::default());
    registry.provide_state(Arc::clone(&todos)); // one value per type, shared by every call
    assert_eq!(registry.prompt(None)?.tools.len(), 1);
    let added = registry.execute(add("milk")).await;
    assert_eq!(added.value(), Some(&json!(1)));
    assert_eq!(todos.items.lock().unwrap().as_slice(), ["milk"]);
    Ok(())
}
// README: end

#[tokio::test]
async fn the_host_state_example_runs() -> Result<(), Box<dyn Error>> {
    host_state().await
}

/// The lines of this file between `marker` and `// README: end`, the marker's indentation
/// removed.
fn example(source: &str, marker: &str) -> Vec<String> {
    let indent = source
        .lines()
        .find(|line| line.trim() == marker)
        .map_or(0, |line| line.len() - line.trim_start().len());
    source
        .lines()
        .skip_while(|line| line.trim() != marker)
        .skip(1)
        .take_while(|line| line.trim() != "// README: end")
        .map(|line| line.get(indent..).unwrap_or(line.trim_start()).to_owned())
        .collect()
}

#[test]
fn the_readme_shows_these_examples() {
    let readme = include_str!("../../README.md");
    let source = include_str!("readme.rs");
    for (heading, marker) in [
        ("## Large results", "// README: large results"),
        ("\n## Approvals\n", "// README: approvals"),
        ("\n## Host state\n", "// README: host state"),
    ] {
        let section = &readme[readme.find(heading).expect("the section")..];
        let block: Vec<String> = section
            .lines()
            .skip_while(|line| !line.starts_with("```rust"))
            .skip(1)
            .take_while(|line| *line != "```")
            .map(str::to_owned)
            .collect();
        assert_eq!(block, example(source, marker), "{heading}");
    }
}
