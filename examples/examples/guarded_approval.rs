//! A guarded tool with approval: a pre-execute policy asks before anything destructive, an
//! approval service answers, and a guard refuses what no one may approve.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example guarded_approval
//! ```
//!
//! The approval service here is scripted (it refuses anything under `src/`); a real host asks a
//! person — see `dsh-tools call` for a terminal prompt. Guards run after an approval, so the
//! last call is refused even though it was approved.

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::tool;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::hooks::pre_execute_fn;
use serde_json::json;

/// Delete a file (pretend).
#[tool(destructive)]
async fn delete_file(
    /// The file to delete.
    path: String,
) -> Result<String, String> {
    Ok(format!("deleted {path}"))
}

/// Rejects deletions under `src/`, approves the rest. A real service would prompt a person.
struct Scripted;

impl ApprovalService for Scripted {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        let approve = !request
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("src/"));
        println!(
            "approval asked for {} ({}): {}",
            request.tool_name,
            request.reason.unwrap_or_default(),
            if approve { "approved" } else { "rejected" }
        );
        Box::pin(std::future::ready(if approve {
            ApprovalOutcome::AllowedOnce
        } else {
            ApprovalOutcome::Rejected
        }))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    registry
        .register(delete_file::definition().expect("a valid tool"))
        .expect("registered")
        .keep();
    registry.set_approval(Arc::new(Scripted));
    // Ask before every destructive call, saying what it will touch.
    registry
        .on_pre_execute(pre_execute_fn(|exec, next| async move {
            let destructive = exec.name.as_ref() == "delete_file";
            match exec.arguments.as_deref() {
                Some(args) if destructive => PreToolDecision::Ask {
                    reason: Some(format!("delete {}", args["path"].as_str().unwrap_or("?"))),
                },
                _ => next.run().await,
            }
        }))
        .keep();
    // No approval can reach outside the workspace.
    registry
        .guard(|exec| {
            let path = exec.arguments.as_deref()?["path"].as_str()?;
            path.starts_with('/')
                .then(|| format!("{path} is outside the workspace"))
        })
        .keep();

    // Approval routes through the calling agent's scope.
    let agent = registry.new_scope();
    for (id, path) in [
        ("c1", "tmp/cache.bin"),
        ("c2", "src/main.rs"),
        ("c3", "/etc/passwd"),
    ] {
        let mut input = ToolExecutionInput::new(id, "delete_file", json!({ "path": path }));
        input.agent = Some(agent.id());
        let result = registry.execute(input).await;
        println!(
            "{path}: {}",
            result.content()[0].as_text().unwrap_or_default()
        );
    }
}
