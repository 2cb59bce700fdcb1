//! The execution pipeline (REFERENCE §6): pre-execute → guards → execute wrappers →
//! post-execute → result. Every outcome is a result value; `execute` never panics.

mod dispatch;
mod finish;
mod outcome;
mod prepare;

use std::time::Instant;

use dsh_tools::exec::{ToolExecution, ToolExecutionInput, ToolExecutionResult};
use tracing::Instrument;

use crate::hooks::Scoped;
use crate::registry::ToolRegistry;
pub(crate) use outcome::aborted;
pub(crate) use prepare::{Execution, Prepared};

impl ToolRegistry {
    /// Executes one call through the whole pipeline and returns its result. Exactly one result
    /// notification is published per call.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools::exec::ToolExecutionInput;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = ToolRegistry::new();
    /// registry.register(ToolDefinition::builder("add")
    ///     .description("Add two integers.")
    ///     .parameters_json(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))
    ///     .output_json(json!({"type": "integer"}))
    ///     .execute(|args, _| async move { Ok(json!(args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap())) })
    ///     .build().unwrap()).unwrap().keep();
    /// let ok = registry.execute(ToolExecutionInput::new("c1", "add", json!({"a": 2, "b": 3}))).await;
    /// assert_eq!(ok.value(), Some(&json!(5)));
    /// let bad = registry.execute(ToolExecutionInput::new("c2", "add", json!({"a": "2"}))).await;
    /// assert_eq!(bad.content()[0].as_text(), Some("Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer"));
    /// # });
    /// ```
    pub async fn execute(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        let span = tracing::info_span!(
            "tool.execute",
            tool = %input.name,
            call_id = %input.call_id,
            nested = input.parent.is_some(),
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        // The pipeline's future is large: box it once instead of moving it through every
        // adapter (measurably cheaper than the memmoves).
        if span.is_disabled() {
            return self.execute_inner(input).await;
        }
        let pipeline = Box::pin(self.execute_inner(input));
        let started = Instant::now();
        let result = pipeline.instrument(span.clone()).await;
        span.record("outcome", if result.is_error() { "error" } else { "ok" });
        span.record("duration_us", started.elapsed().as_micros() as u64);
        result
    }

    async fn execute_inner(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        let (mut execution, failed) = self.create_execution(input);
        if let Some(result) = failed {
            return self.finish(&execution, result);
        }
        let prepared = match self.prepare(&mut execution).await {
            Prepared::Dispatch => self.dispatch(&execution).await,
            other => other,
        };
        let result = match prepared {
            Prepared::Dispatch => unreachable_dispatch(),
            Prepared::FinalResult(result) => result,
            Prepared::PostResult(result) if execution.hooks.post.is_empty() => result,
            // Boxed: this rarer stage's future would otherwise size every execution's future.
            Prepared::PostResult(result) => Box::pin(self.post_execute(&execution, result)).await,
        };
        self.finish(&execution, result)
    }

    /// The hooks of `table` that apply to `exec`: unscoped ones, and those registered for the
    /// call's agent or one of its ancestors.
    pub(crate) fn filtered<T: Clone>(&self, table: &[Scoped<T>], exec: &ToolExecution) -> Vec<T> {
        if table.iter().all(|h| h.scope.is_none()) {
            return table.iter().map(|h| h.hook.clone()).collect();
        }
        let state = self.inner.read();
        table
            .iter()
            .filter(|h| match (h.scope, exec.agent) {
                (None, _) => true,
                (Some(scope), Some(agent)) => state.within(agent, scope),
                (Some(_), None) => false,
            })
            .map(|h| h.hook.clone())
            .collect()
    }
}

/// Dispatch always resolves to a post- or final result.
fn unreachable_dispatch() -> ToolExecutionResult {
    ToolExecutionResult::failure(dsh_tools::ToolError::msg(
        "internal error: dispatch did not produce a result",
    ))
}
