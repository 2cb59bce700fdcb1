//! Stages 18–21 (`docs/CONTRACTS.md`, "Stages"): materialise the result, run the finaliser once,
//! cut a top-level result to its budget, tell the observers.

use std::panic::{AssertUnwindSafe, catch_unwind};

use dsh_tools::ToolError;
use dsh_tools::exec::ToolExecutionResult;

use super::hooks::{ResultObserver, applicable};
use super::outcome::{content_is_lossless, from_panic, result_is_lossless};
use super::{Call, Host};
use crate::error::panic_message;

/// Stages 18–21: materialise, finalise once, cut to the budget, notify observers.
pub(super) fn run<H: Host>(
    host: &H,
    call: &Call,
    result: ToolExecutionResult,
) -> ToolExecutionResult {
    let exec = &call.exec;
    // 18. Materialise.
    let mut result = if result_is_lossless(&result) {
        result
    } else {
        ToolExecutionResult::failure(ToolError::msg(
            "tool result must be losslessly JSON-serializable",
        ))
    };
    // 19. The finaliser captured at stage 1, called exactly once.
    if let Some(finalize) = &call.finalizer {
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
    // 19b. The result budget (top-level calls only).
    super::budget::cut(host, call, &mut result);
    // 20. Observers (scope-filtered); a panicking observer is contained and logged.
    for observer in applicable(call.hooks.get::<ResultObserver>(), exec, |a| host.chain(a)) {
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
