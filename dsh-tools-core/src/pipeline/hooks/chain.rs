//! The `next` handles of the three waterfalls.

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PostToolDecision, PreToolDecision, ToolExecution, ToolExecutionResult};
use tokio_util::sync::CancellationToken;

use super::{ExecuteWrapperFn, PostExecuteFn, PreExecuteFn};

/// The rest of the pre-execute waterfall. Its tail decides `Allow`.
pub struct PreNext {
    pub(crate) chain: Arc<[PreExecuteFn]>,
    pub(crate) index: usize,
    pub(crate) exec: Arc<ToolExecution>,
}

impl PreNext {
    /// Runs the remaining policies.
    pub fn run(self) -> BoxFuture<'static, PreToolDecision> {
        match self.chain.get(self.index).cloned() {
            Some(hook) => {
                let next = PreNext {
                    chain: Arc::clone(&self.chain),
                    index: self.index + 1,
                    exec: Arc::clone(&self.exec),
                };
                hook(self.exec, next)
            }
            None => Box::pin(std::future::ready(PreToolDecision::Allow)),
        }
    }
}

/// The dispatch view handed to execute wrappers: the execution plus its cancellation token,
/// which is the only thing a wrapper may replace.
#[derive(Clone)]
pub struct DispatchExecution {
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) cancel: CancellationToken,
    /// Whether a wrapper replaced the caller's token (dispatch then fuses both).
    pub(crate) replaced: bool,
    /// The declared `timeout_ms` of the tool the call resolved to when it was created.
    pub(crate) budget: Option<u64>,
}

impl DispatchExecution {
    /// The execution (read-only).
    pub fn execution(&self) -> &Arc<ToolExecution> {
        &self.exec
    }

    /// The cancellation token the body will observe (fused with the caller's).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The same view with another cancellation token (e.g. a deadline). The caller's token still
    /// cancels the body: dispatch fuses both.
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self.replaced = true;
        self
    }
}

/// What the tail of the execute waterfall runs: core dispatch.
pub(crate) type CoreDispatch =
    Arc<dyn Fn(DispatchExecution) -> BoxFuture<'static, ToolExecutionResult> + Send + Sync>;

/// The rest of the execute waterfall. Its tail is core dispatch, which always returns a result
/// (a failing or panicking body shows up as an error result, never as a panic here).
///
/// It is `Clone`, so a retry wrapper can run the rest of the chain more than once.
#[derive(Clone)]
pub struct ExecuteNext {
    pub(crate) chain: Arc<[ExecuteWrapperFn]>,
    pub(crate) index: usize,
    pub(crate) core: CoreDispatch,
}

impl ExecuteNext {
    /// Runs the remaining wrappers and dispatch with `dispatch` (pass the view you were given,
    /// possibly with a replaced cancellation token).
    pub fn run(self, dispatch: DispatchExecution) -> BoxFuture<'static, ToolExecutionResult> {
        match self.chain.get(self.index).cloned() {
            Some(hook) => {
                let next = ExecuteNext {
                    chain: Arc::clone(&self.chain),
                    index: self.index + 1,
                    core: Arc::clone(&self.core),
                };
                hook(dispatch, next)
            }
            None => (self.core)(dispatch),
        }
    }
}

/// The rest of the post-execute waterfall. Its tail accepts unchanged.
pub struct PostNext {
    pub(crate) chain: Arc<[PostExecuteFn]>,
    pub(crate) index: usize,
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) result: Arc<ToolExecutionResult>,
}

impl PostNext {
    /// Runs the remaining policies.
    pub fn run(self) -> BoxFuture<'static, PostToolDecision> {
        match self.chain.get(self.index).cloned() {
            Some(hook) => {
                let next = PostNext {
                    chain: Arc::clone(&self.chain),
                    index: self.index + 1,
                    exec: Arc::clone(&self.exec),
                    result: Arc::clone(&self.result),
                };
                hook(self.exec, self.result, next)
            }
            None => Box::pin(std::future::ready(PostToolDecision::accept())),
        }
    }
}
