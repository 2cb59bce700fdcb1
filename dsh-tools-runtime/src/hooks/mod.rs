//! Pipeline hooks: pre-execute policies, guards, execute wrappers, post-execute policies, result
//! observers (REFERENCE §6.1) and the Code Mode dispatch-log waterfall (§8.6 rule 14), each
//! registered globally or for one scope.
//!
//! Waterfall hooks receive a `next` handle and run in registration order: the first registered
//! hook is the outermost. A hook that never calls `next` short-circuits the rest.

mod chain;
mod dispatch_log;

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    PostToolDecision, PreToolDecision, ScopeId, ToolExecution, ToolExecutionResult,
};

pub use chain::{DispatchExecution, ExecuteNext, PostNext, PreNext};
#[cfg(feature = "code-mode")]
pub(crate) use dispatch_log::shape as shape_dispatch_log;
pub use dispatch_log::{DispatchLogEntry, DispatchLogFn, dispatch_log_fn};

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

/// A hook and the scope it was registered for (`None` = every call).
#[derive(Clone)]
pub(crate) struct Scoped<T> {
    pub(crate) id: u64,
    pub(crate) scope: Option<ScopeId>,
    pub(crate) hook: T,
}

/// Every hook table, copied out (cheaply: `Arc`s) when an execution starts, so hooks added or
/// removed while it runs take effect from the next execution.
#[derive(Clone, Default)]
pub(crate) struct HookTables {
    pub(crate) pre: Vec<Scoped<PreExecuteFn>>,
    pub(crate) wrappers: Vec<Scoped<ExecuteWrapperFn>>,
    pub(crate) post: Vec<Scoped<PostExecuteFn>>,
    pub(crate) observers: Vec<Scoped<ResultObserverFn>>,
    pub(crate) dispatch_log: Vec<Scoped<DispatchLogFn>>,
}

/// Which table a hook registration lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookKind {
    Pre,
    Wrapper,
    Post,
    Observer,
    DispatchLog,
}

/// A hook of any kind, on its way into its table.
pub(crate) enum AnyHook {
    Pre(PreExecuteFn),
    Wrapper(ExecuteWrapperFn),
    Post(PostExecuteFn),
    Observer(ResultObserverFn),
    #[cfg_attr(
        not(feature = "code-mode"),
        allow(dead_code, reason = "registered through Code Mode")
    )]
    DispatchLog(DispatchLogFn),
}

impl HookTables {
    /// Appends `hook` to its table and says which table that was.
    pub(crate) fn insert(&mut self, id: u64, scope: Option<ScopeId>, hook: AnyHook) -> HookKind {
        match hook {
            AnyHook::Pre(hook) => {
                self.pre.push(Scoped { id, scope, hook });
                HookKind::Pre
            }
            AnyHook::Wrapper(hook) => {
                self.wrappers.push(Scoped { id, scope, hook });
                HookKind::Wrapper
            }
            AnyHook::Post(hook) => {
                self.post.push(Scoped { id, scope, hook });
                HookKind::Post
            }
            AnyHook::Observer(hook) => {
                self.observers.push(Scoped { id, scope, hook });
                HookKind::Observer
            }
            AnyHook::DispatchLog(hook) => {
                self.dispatch_log.push(Scoped { id, scope, hook });
                HookKind::DispatchLog
            }
        }
    }

    pub(crate) fn remove(&mut self, kind: HookKind, id: u64) {
        match kind {
            HookKind::Pre => self.pre.retain(|h| h.id != id),
            HookKind::Wrapper => self.wrappers.retain(|h| h.id != id),
            HookKind::Post => self.post.retain(|h| h.id != id),
            HookKind::Observer => self.observers.retain(|h| h.id != id),
            HookKind::DispatchLog => self.dispatch_log.retain(|h| h.id != id),
        }
    }

    pub(crate) fn remove_scope(&mut self, scope: ScopeId) {
        let keep = |s: &Option<ScopeId>| *s != Some(scope);
        self.pre.retain(|h| keep(&h.scope));
        self.wrappers.retain(|h| keep(&h.scope));
        self.post.retain(|h| keep(&h.scope));
        self.observers.retain(|h| keep(&h.scope));
        self.dispatch_log.retain(|h| keep(&h.scope));
    }
}
