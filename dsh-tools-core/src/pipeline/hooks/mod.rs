//! Pipeline hooks: pre-execute policies, guards, execute wrappers, post-execute policies and
//! result observers (`docs/CONTRACTS.md`, "Hooks"), each registered globally or for one scope.
//!
//! Waterfall hooks receive a `next` handle and run in registration order: the first registered
//! hook is the outermost. A hook that never calls `next` short-circuits the rest.
//!
//! Each kind is a marker type ([`PreExecute`], [`Guard`], …) with one table in the pipeline's
//! hook store; [`ToolRegistry::add_hook`](crate::ToolRegistry::add_hook) registers any kind, and
//! the registry's `on_*` methods and `guard` are shorthands for the kinds below.

mod chain;
mod store;

use std::any::Any;
use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PostToolDecision, PreToolDecision, ToolExecution, ToolExecutionResult};
use dsh_tools::present::ToolCallView;

use crate::approval::{ApprovalOutcome, ApprovalScope};

pub use chain::{DispatchExecution, ExecuteNext, PostNext, PreNext};
pub use store::HookKind;
pub(crate) use store::{HookTables, applicable};

/// A pre-execute policy: `(execution, next) -> decision`.
pub type PreExecuteFn =
    Arc<dyn Fn(Arc<ToolExecution>, PreNext) -> BoxFuture<'static, PreToolDecision> + Send + Sync>;

/// A monotonic synchronous guard: `Some(reason)` denies the call.
pub type GuardFn = Arc<dyn Fn(&ToolExecution) -> Option<String> + Send + Sync>;

/// An around-dispatch wrapper: `(dispatch view, next) -> result`.
pub type ExecuteWrapperFn = Arc<
    dyn Fn(DispatchExecution, ExecuteNext) -> BoxFuture<'static, ToolExecutionResult> + Send + Sync,
>;

/// A post-execute policy: `(execution, result, next) -> decision`.
pub type PostExecuteFn = Arc<
    dyn Fn(
            Arc<ToolExecution>,
            Arc<ToolExecutionResult>,
            PostNext,
        ) -> BoxFuture<'static, PostToolDecision>
        + Send
        + Sync,
>;

/// An observe-only result listener.
pub type ResultObserverFn = Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync>;

/// Pre-execute policies ([`PreExecuteFn`]): a waterfall deciding allow, deny or ask.
#[derive(Debug, Clone, Copy)]
pub struct PreExecute;

/// Guards ([`GuardFn`]): consulted after an allow; the first reason denies.
#[derive(Debug, Clone, Copy)]
pub struct Guard;

/// Execute wrappers ([`ExecuteWrapperFn`]): a waterfall around the tool body.
#[derive(Debug, Clone, Copy)]
pub struct ExecuteWrapper;

/// Post-execute policies ([`PostExecuteFn`]): a waterfall over the result.
#[derive(Debug, Clone, Copy)]
pub struct PostExecute;

/// Result observers ([`ResultObserverFn`]): told every final result.
#[derive(Debug, Clone, Copy)]
pub struct ResultObserver;

/// Called when a call starts waiting for a person's approval; what it returns is dropped when
/// the wait ends (Code Mode pauses its program's clock this way).
pub type ApprovalWaitFn = Arc<dyn Fn(&ToolExecution) -> Option<Box<dyn Any + Send>> + Send + Sync>;

/// Approval-wait hooks ([`ApprovalWaitFn`]): run while a call waits for a person (Code Mode's
/// clock pauses).
#[derive(Debug, Clone, Copy)]
pub struct ApprovalWait;

/// What an approval gate is asked about: a call whose pre-execute decision is `ask`.
#[derive(Debug)]
#[non_exhaustive]
pub struct Ask<'a> {
    /// The call.
    pub exec: &'a ToolExecution,
    /// Why the policy asked.
    pub reason: Option<&'a str>,
    /// The call's card (the tool's `present_call`, or the generic one).
    pub view: &'a ToolCallView,
    /// The widest scope an approval of this call may have.
    pub widest: ApprovalScope,
}

/// Answers an `ask` in place of the approval service, or passes (`None`). Code Mode answers the
/// sub-calls of a durable run this way: a resume decision, or the run's suspension.
pub type ApprovalGateFn =
    Arc<dyn Fn(&Ask<'_>) -> Option<BoxFuture<'static, ApprovalOutcome>> + Send + Sync>;

/// Approval gates ([`ApprovalGateFn`]): the first that answers decides an `ask` (Code Mode's
/// durable runs).
#[derive(Debug, Clone, Copy)]
pub struct ApprovalGate;

/// Told that a call was approved for the rest of its Code Mode run (the scope already narrowed
/// to what the tool allows); the run remembers it.
pub type RunApprovalFn = Arc<dyn Fn(&ToolExecution) + Send + Sync>;

/// Run-approval listeners ([`RunApprovalFn`]): told of an approval for the rest of a run
/// (Code Mode's runs).
#[derive(Debug, Clone, Copy)]
pub struct RunApproval;

macro_rules! kinds {
    ($($kind:ty => $hook:ty),* $(,)?) => {$(
        impl HookKind for $kind {
            type Hook = $hook;
        }
    )*};
}

kinds! {
    PreExecute => PreExecuteFn,
    Guard => GuardFn,
    ExecuteWrapper => ExecuteWrapperFn,
    PostExecute => PostExecuteFn,
    ResultObserver => ResultObserverFn,
    ApprovalWait => ApprovalWaitFn,
    ApprovalGate => ApprovalGateFn,
    RunApproval => RunApprovalFn,
}

/// Wraps an async closure as a pre-execute policy.
///
/// ```
/// use dsh_tools::exec::PreToolDecision;
/// use dsh_tools_runtime::hooks::pre_execute_fn;
/// let deny_bash = pre_execute_fn(|exec, next| async move {
///     if &*exec.name == "bash" {
///         PreToolDecision::Deny { reason: "no shell here".into() }
///     } else {
///         next.run().await
///     }
/// });
/// # drop(deny_bash);
/// ```
pub fn pre_execute_fn<F, Fut>(f: F) -> PreExecuteFn
where
    F: Fn(Arc<ToolExecution>, PreNext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = PreToolDecision> + Send + 'static,
{
    Arc::new(move |exec, next| Box::pin(f(exec, next)))
}

/// Wraps an async closure as an execute wrapper.
pub fn execute_wrapper_fn<F, Fut>(f: F) -> ExecuteWrapperFn
where
    F: Fn(DispatchExecution, ExecuteNext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ToolExecutionResult> + Send + 'static,
{
    Arc::new(move |dispatch, next| Box::pin(f(dispatch, next)))
}

/// Wraps an async closure as a post-execute policy.
pub fn post_execute_fn<F, Fut>(f: F) -> PostExecuteFn
where
    F: Fn(Arc<ToolExecution>, Arc<ToolExecutionResult>, PostNext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = PostToolDecision> + Send + 'static,
{
    Arc::new(move |exec, result, next| Box::pin(f(exec, result, next)))
}
