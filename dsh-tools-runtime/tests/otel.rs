//! The `tool.execute` span as OpenTelemetry sees it (`docs/CONTRACTS.md`, "Spans"): the GenAI
//! semantic conventions' attributes, a Code Mode run's sub-calls nested under the run (their
//! pipeline runs on the sandbox thread), and a trace that crosses an MCP import to our own server
//! and back (`_meta.traceparent`). Exported by the OpenTelemetry SDK's in-memory exporter behind
//! `tracing-opentelemetry`: no collector.
#![cfg(all(feature = "otel", feature = "code-mode", feature = "mcp"))]

use std::sync::{Arc, OnceLock};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::mcp::rmcp::model::{CallToolRequestParams, RequestMetaObject};
use dsh_tools_runtime::mcp::rmcp::service::{RoleClient, RunningService};
use dsh_tools_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
use dsh_tools_runtime::mcp::{McpImport, McpServer};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Map, json};
use tracing_subscriber::layer::SubscriberExt as _;

/// The process's subscriber (global: Code Mode polls sub-calls on its sandbox threads) and the
/// exporter its spans end in. Tests tell their spans apart by call id.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<InMemorySpanExporter> = OnceLock::new();
    EXPORTER.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("dsh-tools-tests"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber).unwrap();
        exporter
    })
}

fn spans() -> Vec<SpanData> {
    exporter().get_finished_spans().unwrap()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv: &KeyValue| &kv.value)
}

fn string(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|value| value.as_str().into_owned())
}

/// The span of the call `call_id` (exactly one).
fn span_of(spans: &[SpanData], call_id: &str) -> SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| string(s, "gen_ai.tool.call.id").as_deref() == Some(call_id))
        .collect();
    assert_eq!(found.len(), 1, "one span for {call_id}: {found:#?}");
    found[0].clone()
}

fn echo() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echo the text.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .output_json(json!({"type": "string"}))
        .execute(|args, _| async move { Ok(args["text"].clone()) })
        .build()
        .unwrap()
}

fn registry(mode: PresentationMode) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    registry.register(echo()).unwrap().keep();
    registry
}

#[tokio::test]
async fn the_call_span_follows_the_genai_conventions() {
    exporter();
    let registry = registry(PresentationMode::Native);
    let ok = registry
        .execute(ToolExecutionInput::new(
            "genai-ok",
            "echo",
            json!({"text": "hi"}),
        ))
        .await;
    assert!(!ok.is_error());
    let bad = registry
        .execute(ToolExecutionInput::new("genai-bad", "echo", json!({})))
        .await;
    assert!(bad.is_error());

    let spans = spans();
    let ok = span_of(&spans, "genai-ok");
    assert_eq!(ok.name, "execute_tool echo");
    assert_eq!(ok.span_kind, SpanKind::Internal);
    assert_eq!(
        string(&ok, "gen_ai.operation.name").unwrap(),
        "execute_tool"
    );
    assert_eq!(string(&ok, "gen_ai.tool.name").unwrap(), "echo");
    assert_eq!(string(&ok, "gen_ai.tool.type").unwrap(), "function");
    assert_eq!(string(&ok, "outcome").unwrap(), "ok");
    assert_eq!(attribute(&ok, "error.type"), None);
    assert_eq!(ok.status, Status::Unset);
    // The OpenTelemetry controls are read by the layer, not exported as attributes.
    assert_eq!(attribute(&ok, "otel.name"), None);

    let bad = span_of(&spans, "genai-bad");
    assert_eq!(bad.name, "execute_tool echo");
    assert_eq!(string(&bad, "error.type").unwrap(), "INVALID_ARGS");
    assert_eq!(string(&bad, "outcome").unwrap(), "error");
    assert!(
        matches!(bad.status, Status::Error { .. }),
        "{:?}",
        bad.status
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_mode_runs_sub_calls_nest_under_the_run() {
    exporter();
    let registry = registry(PresentationMode::Code);
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).unwrap(),
    ))
    .install(&registry)
    .unwrap();
    let program = "const a = await tools.echo({text: 'a'});\n\
                   const b = await tools.echo({text: 'b'});\n\
                   return [a, b];";
    let run = registry
        .execute(ToolExecutionInput::new(
            "nest-run",
            "run_code",
            json!({"code": program, "description": "Echo twice"}),
        ))
        .await;
    assert!(!run.is_error(), "{run:?}");

    let spans = spans();
    let run = span_of(&spans, "nest-run");
    assert_eq!(run.name, "execute_tool run_code");
    let children: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == run.span_context.span_id())
        .collect();
    assert_eq!(children.len(), 2, "{children:#?}");
    for child in children {
        assert_eq!(child.name, "execute_tool echo");
        assert_eq!(child.span_context.trace_id(), run.span_context.trace_id());
        assert_eq!(string(child, "nested").unwrap(), "true");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_crosses_an_mcp_import_and_comes_back() {
    exporter();
    let served = registry(PresentationMode::Native);
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let host = ToolRegistry::new();
    let imported = McpImport::new(&host)
        .connect_http("traced", &server.url())
        .await
        .unwrap();
    let result = host
        .execute(ToolExecutionInput::new(
            "cross-1",
            "mcp__traced__echo",
            json!({"text": "over"}),
        ))
        .await;
    assert!(!result.is_error(), "{result:?}");
    imported.close().await;
    server.shutdown().await;

    let spans = spans();
    let client = span_of(&spans, "cross-1");
    assert_eq!(client.name, "execute_tool mcp__traced__echo");
    // The server's call of `echo` (its own call id) under the client's span.
    let served: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == client.span_context.span_id())
        .collect();
    assert_eq!(served.len(), 1, "{served:#?}");
    let served = served[0];
    assert_eq!(served.name, "execute_tool echo");
    assert_eq!(
        served.span_context.trace_id(),
        client.span_context.trace_id()
    );
    assert!(served.parent_span_is_remote);
    assert_eq!(string(served, "gen_ai.tool.name").unwrap(), "echo");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_call_continues_the_meta_traceparent_and_tracestate() {
    exporter();
    let served = registry(PresentationMode::Native);
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let client: RunningService<RoleClient, ()> =
        dsh_tools_runtime::mcp::rmcp::serve_client((), transport)
            .await
            .unwrap();
    let call = |text: &str, traceparent: &str| {
        let mut meta = Map::new();
        meta.insert("traceparent".into(), json!(traceparent));
        meta.insert("tracestate".into(), json!("vendor=abc"));
        let mut params = CallToolRequestParams::new("echo")
            .with_arguments(json!({"text": text}).as_object().cloned().unwrap());
        params.meta = Some(RequestMetaObject::from(meta));
        params
    };
    let remote = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    client
        .peer()
        .call_tool(call("traced-meta", remote))
        .await
        .unwrap();
    // Not a W3C traceparent (an all-zero trace id): ignored, the call starts its own trace.
    let invalid = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
    client
        .peer()
        .call_tool(call("untraced-meta", invalid))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    server.shutdown().await;

    let spans = spans();
    let traced: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.span_context.trace_id().to_string() == "4bf92f3577b34da6a3ce929d0e0e4736")
        .collect();
    assert_eq!(traced.len(), 1, "{traced:#?}");
    let traced = traced[0];
    assert_eq!(traced.name, "execute_tool echo");
    assert_eq!(traced.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(traced.parent_span_is_remote);
    assert_eq!(traced.span_context.trace_state().header(), "vendor=abc");
    let invalid_parent: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id.to_string() == "00f067aa0ba902b7")
        .collect();
    assert_eq!(
        invalid_parent.len(),
        1,
        "only the valid traceparent is continued"
    );
}
