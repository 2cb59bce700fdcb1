//! Stages 15–21: post-execute policies, materialisation, the finaliser, observers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use dsh_tools::ToolError;
use dsh_tools::exec::{PostToolDecision, ToolExecutionResult, ToolFailure};
use futures_util::FutureExt;

use super::outcome::{
    block_message, cancelled, content_is_lossless, from_panic, result_is_lossless, try_success,
};
use super::prepare::Execution;
use crate::error::ToolNotFoundError;
use crate::hooks::{PostExecuteFn, PostNext};
use crate::panic_message;
use crate::registry::ToolRegistry;

impl ToolRegistry {
    /// Stages 15–17: the post-execute waterfall over a post-result.
    pub(crate) async fn post_execute(
        &self,
        execution: &Execution,
        result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        let chain = self.filtered(&execution.hooks.post, &execution.exec);
        if chain.is_empty() {
            return result;
        }
        // Boxed: the waterfall's future would otherwise size every execution's future.
        Box::pin(self.post_waterfall(execution, chain.into(), result)).await
    }

    async fn post_waterfall(
        &self,
        execution: &Execution,
        chain: Arc<[PostExecuteFn]>,
        result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        let exec = &execution.exec;
        let result = Arc::new(result);
        let next = PostNext {
            chain,
            index: 0,
            exec: Arc::clone(exec),
            result: Arc::clone(&result),
        };
        let decision = match AssertUnwindSafe(next.run()).catch_unwind().await {
            Ok(decision) => decision,
            Err(payload) => {
                tracing::warn!(tool = %exec.name, call_id = %exec.call_id, "post-execute policy panicked");
                return from_panic(&*payload);
            }
        };
        let previous = Arc::unwrap_or_clone(result);
        let post = match decision {
            PostToolDecision::Block {
                feedback,
                additional_contexts,
            } => ToolExecutionResult::Failure(ToolFailure {
                error: ToolError::msg(block_message(&feedback)),
                content: feedback,
                meta: None,
                additional_contexts,
            }),
            PostToolDecision::AcceptValue {
                value,
                additional_contexts,
            } => match previous {
                ToolExecutionResult::Failure(_) => ToolExecutionResult::failure(ToolError::msg(
                    "tools/post-execute cannot replace the value of a failed result",
                )),
                ToolExecutionResult::Success(success) => {
                    match self.resolve_executable(&exec.name, exec.agent, exec.parent.is_some()) {
                        None => ToolExecutionResult::failure(ToolError::from_harness(
                            &ToolNotFoundError::unknown(&exec.name),
                        )),
                        Some(def) => {
                            let mut contexts = success.additional_contexts;
                            contexts.extend(additional_contexts);
                            // An invalid value is a post-execute error (rule 17): no contexts.
                            try_success(&def, exec, value, contexts, success.concludes_turn)
                                .unwrap_or_else(ToolExecutionResult::failure)
                        }
                    }
                }
            },
            PostToolDecision::Accept {
                content,
                additional_contexts,
            } => {
                let mut result = previous;
                match &mut result {
                    ToolExecutionResult::Success(s) => {
                        if let Some(content) = content {
                            s.content = content;
                        }
                        s.additional_contexts.extend(additional_contexts);
                    }
                    ToolExecutionResult::Failure(f) => {
                        if let Some(content) = content {
                            f.content = content;
                        }
                        f.additional_contexts.extend(additional_contexts);
                    }
                }
                result
            }
        };
        // 16. A success cancelled meanwhile.
        if execution.caller_cancel.is_cancelled() && !post.is_error() {
            let body_invoked = execution
                .body_invoked
                .load(std::sync::atomic::Ordering::SeqCst);
            return cancelled(body_invoked, post.additional_contexts().to_vec());
        }
        post
    }

    /// Stages 18–21: materialise, finalise once, notify observers.
    pub(crate) fn finish(
        &self,
        execution: &Execution,
        result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        let exec = &execution.exec;
        // 18. Materialise.
        let mut result = if result_is_lossless(&result) {
            result
        } else {
            ToolExecutionResult::failure(ToolError::msg(
                "tool result must be losslessly JSON-serializable",
            ))
        };
        // 19. The finaliser captured at stage 1, called exactly once.
        if let Some(finalize) = &execution.finalizer {
            match catch_unwind(AssertUnwindSafe(|| finalize(exec, &result))) {
                Ok(None) => {}
                Ok(Some(content)) if content_is_lossless(&content) => match &mut result {
                    ToolExecutionResult::Success(s) => s.content = content,
                    ToolExecutionResult::Failure(f) => f.content = content,
                },
                Ok(Some(_)) => {
                    result = ToolExecutionResult::failure(ToolError::msg(
                        "tool result must be losslessly JSON-serializable",
                    ));
                }
                Err(payload) => result = from_panic(&*payload),
            }
        }
        // 20. Observers (scope-filtered); a panicking observer is contained and logged.
        for observer in self.filtered(&execution.hooks.observers, exec) {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| observer(exec, &result))) {
                tracing::warn!(
                    "tool \"{}\" ({}): tools/result observer failed: {}",
                    exec.name,
                    exec.call_id,
                    panic_message(&*payload)
                );
            }
        }
        result
    }
}
