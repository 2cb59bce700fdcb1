//! The suite's tasks-extension tools (`tasks-*` scenarios): a sync `greet`, long-running
//! `slow_compute`, `failing_job`, `protocol_error_job`, `confirm_delete` and `multi_input`
//! (these two ask the client from inside the task), and `test_tool_with_task`. Their sleeps are
//! what the scenarios specify (a job that takes `seconds`), not synchronisation.

use std::time::Duration;

use dsh_tools::exec::{AskError, Elicited, ToolRunContext};
use dsh_tools::{DefinitionError, ToolDefinition, tool};
use dsh_tools_runtime::mcp::{McpTasks, TaskSupport};
use serde_json::json;

/// Greets `name`.
#[tool(read_only, concurrency_safe = true)]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, then answers.
#[tool(read_only, concurrency_safe = true)]
async fn slow_compute(seconds: u64, label: Option<String>) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!(
        "computed {} in {seconds}s",
        label.unwrap_or_else(|| "(unlabelled)".to_owned())
    )
}

/// Fails after a second.
#[tool(read_only, concurrency_safe = true)]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed".to_owned())
}

/// Panics.
#[tool(read_only, concurrency_safe = true)]
async fn protocol_error_job() -> String {
    panic!("protocol_error_job always panics")
}

fn confirmation() -> serde_json::Value {
    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
}

fn confirmed(answer: &Elicited) -> bool {
    matches!(answer, Elicited::Accept(content) if content.get("confirm") == Some(&json!(true)))
}

/// Asks for a confirmation, then "deletes" `filename`.
#[tool(read_only, concurrency_safe = true)]
async fn confirm_delete(ctx: ToolRunContext, filename: String) -> Result<String, AskError> {
    let answer = ctx
        .elicit("confirm", &format!("Delete {filename}?"), confirmation())
        .await?;
    Ok(if confirmed(&answer) {
        format!("deleted {filename}")
    } else {
        format!("kept {filename}")
    })
}

/// Asks two questions at once.
#[tool(read_only, concurrency_safe = true)]
async fn multi_input(ctx: ToolRunContext) -> Result<String, AskError> {
    let name = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let (first, second) = tokio::join!(
        ctx.elicit("first", "Your name?", name),
        ctx.elicit("second", "Confirm?", confirmation()),
    );
    Ok(format!("answered: {:?}, {}", first?, confirmed(&second?)))
}

/// Asks the user's name, then greets them.
#[tool(read_only, concurrency_safe = true)]
async fn test_tool_with_task(ctx: ToolRunContext) -> Result<String, AskError> {
    let name =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let answer = ctx.elicit("user_name", "What is your name?", name).await?;
    let name = match &answer {
        Elicited::Accept(content) => content["name"].as_str().unwrap_or_default().to_owned(),
        _ => "(no name)".to_owned(),
    };
    Ok(format!("Hello, {name}!"))
}

/// The tools of the `tasks-*` scenarios.
pub(crate) fn task_tools() -> Vec<Result<ToolDefinition, DefinitionError>> {
    vec![
        greet::definition(),
        slow_compute::definition(),
        failing_job::definition(),
        protocol_error_job::definition(),
        confirm_delete::definition(),
        multi_input::definition(),
        test_tool_with_task::definition(),
    ]
}

/// Which of them answer a task handle.
pub(crate) fn tasks() -> McpTasks {
    McpTasks::new()
        .tool("slow_compute", TaskSupport::Optional)
        .tool("failing_job", TaskSupport::Required)
        .tool("protocol_error_job", TaskSupport::Optional)
        .tool("confirm_delete", TaskSupport::Optional)
        .tool("multi_input", TaskSupport::Optional)
        .tool("test_tool_with_task", TaskSupport::Required)
}
