//! Stage 19b (`docs/CONTRACTS.md`, "Stages" and "Result budgets"): a top-level result's
//! model-facing content is cut to its budget — the tool's, else the calling scope's, else the
//! registry's.
//!
//! A result under budget costs a sum of text lengths and, when its tool sets no budget, one
//! atomic load: the host's floor (no budget below it is in force anywhere) settles content that
//! small without looking the scope's budget up, and nothing is tokenized.

use std::panic::{AssertUnwindSafe, catch_unwind};

use dsh_tools::ContentBlock;
use dsh_tools::exec::ToolExecutionResult;

use super::{Call, Host};
use crate::tokens::budget::fit_content;

/// Cuts the content of `result`, the final result of `call`, to its budget. Sub-calls (a parent
/// execution: a Code Mode program's calls) are never cut: their content does not reach the model
/// as such, and their value is the program's.
pub(super) fn cut<H: Host>(host: &H, call: &Call, result: &mut ToolExecutionResult) {
    if call.exec.parent.is_some() {
        return;
    }
    let content = match result {
        ToolExecutionResult::Success(s) => &mut s.content,
        ToolExecutionResult::Failure(f) => &mut f.content,
    };
    let bytes: usize = content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(str::len)
        .sum();
    let tool = call.resolved.as_ref().map(|(def, _)| def);
    let budget = match tool.and_then(|def| def.max_result_tokens()) {
        Some(budget) => budget,
        None if bytes <= host.budget_floor() => return,
        None => match host.result_budget(call.exec.agent) {
            Some(budget) => budget,
            None => return,
        },
    };
    if bytes <= budget {
        return;
    }
    // The tool's hint is its own code: a panic there only loses the hint.
    let hint = tool.and_then(|def| {
        let args = call.exec.arguments.as_deref()?;
        catch_unwind(AssertUnwindSafe(|| def.result_hint(args)))
            .ok()?
            .filter(|hint| !hint.is_empty())
    });
    fit_content(content, budget, hint.as_deref());
}
