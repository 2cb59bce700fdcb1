//! Stages 15–17 (`docs/CONTRACTS.md`, "Stages"): the post-execute waterfall over a post-result.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use dsh_tools::ToolError;
use dsh_tools::exec::{PostToolDecision, ToolExecutionResult, ToolFailure};
use futures_util::FutureExt;

use super::hooks::{PostExecute, PostExecuteFn, PostNext, applicable};
use super::outcome::{block_message, cancelled, from_panic, try_success};
use super::{Call, Host};
use crate::error::ToolNotFoundError;

/// Stages 15–17: the post-execute waterfall over a post-result.
pub(super) async fn run<H: Host>(
    host: &H,
    call: &Call,
    result: ToolExecutionResult,
) -> ToolExecutionResult {
    let chain = applicable(call.hooks.get::<PostExecute>(), &call.exec, |a| {
        host.chain(a)
    });
    if chain.is_empty() {
        return result;
    }
    waterfall(host, call, chain.into(), result).await
}

async fn waterfall<H: Host>(
    host: &H,
    call: &Call,
    chain: Arc<[PostExecuteFn]>,
    result: ToolExecutionResult,
) -> ToolExecutionResult {
    let exec = &call.exec;
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
                let nested = exec.parent.is_some();
                match host.resolve(&exec.name, exec.agent, nested).runnable() {
                    None => ToolExecutionResult::failure(ToolError::from_harness(
                        &ToolNotFoundError::unknown(&exec.name),
                    )),
                    Some(def) => {
                        let mut contexts = success.additional_contexts;
                        contexts.extend(additional_contexts);
                        // An invalid value is a post-execute error (stage 17): no contexts.
                        let json = host.pipeline().dispatch.json;
                        try_success(&def, exec, value, contexts, success.concludes_turn, json)
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
    if call.caller_cancel.is_cancelled() && !post.is_error() {
        let body_invoked = call.body_invoked.load(std::sync::atomic::Ordering::SeqCst);
        return cancelled(body_invoked, post.additional_contexts().to_vec());
    }
    post
}
