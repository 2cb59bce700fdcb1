//! Trace context from outside the process (feature `otel`): a remote parent for the next
//! `tool.execute` span a task starts (`docs/CONTRACTS.md`, "Spans").
//!
//! A served MCP call (`_meta.traceparent`) runs the registry's pipeline under
//! [`with_remote_parent`]: the call's `tool.execute` span — the first one the task makes —
//! becomes a child of the caller's span, so one trace crosses the process boundary. The
//! context is taken once: the call's own sub-calls nest under its span as usual.

use std::cell::RefCell;

use opentelemetry::Context;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

tokio::task_local! {
    static REMOTE_PARENT: RefCell<Option<Context>>;
}

/// Runs `work` with `parent` as the parent of the first `tool.execute` span it starts.
#[cfg(feature = "mcp")]
pub(crate) async fn with_remote_parent<F: std::future::Future>(
    parent: Context,
    work: F,
) -> F::Output {
    REMOTE_PARENT.scope(RefCell::new(Some(parent)), work).await
}

/// Makes `span` a child of the task's remote parent, if one is waiting (taking it).
pub(crate) fn adopt_remote_parent(span: &tracing::Span) {
    let parent = REMOTE_PARENT
        .try_with(|parent| parent.borrow_mut().take())
        .ok()
        .flatten();
    if let Some(parent) = parent {
        // Refused only when no OpenTelemetry layer records the span: nothing to continue then.
        let _ = span.set_parent(parent);
    }
}
