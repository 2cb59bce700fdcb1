//! The body's cancellation token (`ToolRunContext`): given, or a child of the caller's made on
//! demand — the two behave alike wherever a body or the pipeline can look.

use std::sync::Arc;

use dsh_tools::exec::{ToolExecution, ToolRunContext};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn exec() -> Arc<ToolExecution> {
    Arc::new(ToolExecution::detached("c1", "read", json!({})))
}

#[test]
fn a_parent_cancelled_before_the_child_is_made_cancels_it() {
    let caller = CancellationToken::new();
    let (ctx, handle) = ToolRunContext::with_parent_token(exec(), caller.clone());
    assert!(!ctx.is_cancelled() && !handle.is_cancelled());
    caller.cancel();
    assert!(ctx.is_cancelled() && handle.is_cancelled());
    assert!(
        ctx.cancellation().is_cancelled(),
        "made after: born cancelled"
    );
}

#[test]
fn a_parent_cancelled_after_the_child_is_made_cancels_it() {
    let caller = CancellationToken::new();
    let (ctx, handle) = ToolRunContext::with_parent_token(exec(), caller.clone());
    let own = ctx.cancellation().clone();
    caller.cancel();
    assert!(own.is_cancelled() && ctx.is_cancelled() && handle.is_cancelled());
}

#[test]
fn the_body_cancelling_its_own_token_does_not_reach_the_caller() {
    let caller = CancellationToken::new();
    let (ctx, handle) = ToolRunContext::with_parent_token(exec(), caller.clone());
    let clone = ctx.clone();
    clone.cancellation().cancel();
    assert!(ctx.is_cancelled(), "every clone shares the one token");
    assert!(handle.is_cancelled());
    assert!(!caller.is_cancelled());
}

#[test]
fn the_handle_cancels_the_body_token_it_has_not_seen_yet() {
    let caller = CancellationToken::new();
    let (ctx, handle) = ToolRunContext::with_parent_token(exec(), caller.clone());
    handle.cancel();
    assert!(ctx.is_cancelled() && ctx.cancellation().is_cancelled());
    assert!(!caller.is_cancelled());
}

#[test]
fn a_given_token_is_the_body_token_itself() {
    let token = CancellationToken::new();
    let (ctx, handle) = ToolRunContext::new(exec(), token.clone());
    ctx.cancellation().cancel();
    assert!(token.is_cancelled() && handle.is_cancelled());
    let token = CancellationToken::new();
    let (ctx, _handle) = ToolRunContext::new(exec(), token.clone());
    token.cancel();
    assert!(ctx.is_cancelled());
}

#[test]
fn a_shared_parent_behaves_as_an_own_one() {
    let run = Arc::new(CancellationToken::new());
    let (ctx, handle) = ToolRunContext::with_shared_parent_token(exec(), Arc::clone(&run));
    ctx.cancellation().cancel();
    assert!(
        handle.is_cancelled() && !run.is_cancelled(),
        "the body's own only"
    );
    let (ctx, handle) = ToolRunContext::with_shared_parent_token(exec(), Arc::clone(&run));
    run.cancel();
    assert!(ctx.is_cancelled() && handle.is_cancelled() && ctx.cancellation().is_cancelled());
}
