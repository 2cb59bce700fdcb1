//! W3C Trace Context in a `tools/call`'s `_meta` (SEP-414; feature `otel`): the import sends the
//! calling span's `traceparent` (and `tracestate` when it has one), the server continues it.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::model::MetaObject;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// Writes the current span's trace context into `meta` (nothing when the span is not recorded
/// by an OpenTelemetry layer).
pub(crate) fn inject_current(meta: &mut MetaObject) {
    let context = tracing::Span::current().context();
    if !context.span().span_context().is_valid() {
        return;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    if let Some(parent) = carrier.remove("traceparent") {
        meta.set_traceparent(parent);
    }
    if let Some(state) = carrier.remove("tracestate").filter(|s| !s.is_empty()) {
        meta.set_tracestate(state);
    }
}

/// The remote parent a request's `_meta` names, if it carries a valid `traceparent`.
pub(crate) fn extract(meta: &MetaObject) -> Option<Context> {
    let parent = meta.get_traceparent()?;
    let mut carrier = HashMap::from([("traceparent".to_owned(), parent.to_owned())]);
    if let Some(state) = meta.get_tracestate() {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    context.span().span_context().is_valid().then_some(context)
}
