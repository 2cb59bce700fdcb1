//! The callback types a definition holds.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::content::{ContentBlock, ToolResult};
use crate::error::ToolError;
use crate::exec::{ToolExecution, ToolExecutionResult, ToolRunContext};
use crate::present::{ToolCallView, ToolResultView};

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool body: the argument snapshot and the run context in, the canonical value out.
pub type ExecuteFn = Arc<
    dyn Fn(Arc<Value>, ToolRunContext) -> BoxFuture<'static, Result<Value, ToolError>>
        + Send
        + Sync,
>;

/// Renders the model-facing content of a canonical value: `(args, value) -> content`.
pub type RenderFn = Arc<dyn Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync>;

/// Computes a presentation payload: `(args, value) -> meta`.
pub type MetaFn = Arc<dyn Fn(&Value, &Value) -> Value + Send + Sync>;

/// Rewrites the final content of an execution (synchronous, content-only).
pub type FinalizeFn =
    Arc<dyn Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>> + Send + Sync>;

/// The pending-call card: `args -> view`.
pub type PresentCallFn = Arc<dyn Fn(&Value) -> Option<ToolCallView> + Send + Sync>;

/// The completed-call card: `(args, result) -> view`.
pub type PresentResultFn = Arc<dyn Fn(&Value, &ToolResult) -> Option<ToolResultView> + Send + Sync>;

/// How to get the rest of a result cut to its budget, from the call's arguments.
pub type ResultHintFn = Arc<dyn Fn(&Value) -> String + Send + Sync>;

/// How a tool's calls may be scheduled. Only an explicit parallel answer overlaps.
#[derive(Clone, Default)]
pub enum Concurrency {
    /// Every call runs alone (the default).
    #[default]
    Exclusive,
    /// Every call with valid arguments may overlap.
    Parallel,
    /// Decided per call from the arguments.
    Classify(Arc<dyn Fn(&Value) -> bool + Send + Sync>),
}

impl fmt::Debug for Concurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exclusive => f.write_str("Exclusive"),
            Self::Parallel => f.write_str("Parallel"),
            Self::Classify(_) => f.write_str("Classify(..)"),
        }
    }
}
