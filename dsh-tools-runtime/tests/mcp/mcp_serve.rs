//! Serving a registry over MCP, driven by rmcp's own client in process (stdio-style byte
//! streams and streamable HTTP), by our own import (both ways), and by the real
//! `@modelcontextprotocol/inspector` CLI over HTTP.
#![cfg(feature = "mcp")]

use crate::mcp_support;

use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::mcp::rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use dsh_tools_runtime::mcp::rmcp::service::{RoleClient, RunningService, ServiceError};
use dsh_tools_runtime::mcp::rmcp::transport::StreamableHttpClientTransport;
use dsh_tools_runtime::mcp::{McpImport, McpServer};
use dsh_tools_runtime::{ToolRegistry, ToolRestriction};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

type Client = RunningService<RoleClient, ()>;

/// The served tools: `add` (integer output), `weather` (object output), `remove` (destructive,
/// asks for approval), `raw` (a raw schema carrying `$schema` and `title`) and `slow` (reports
/// its start and its cancellation).
/// Say it louder.
#[dsh_tools::tool]
async fn shout(
    /// What to say.
    text: String,
) -> String {
    text.to_uppercase()
}

fn registry(events: mpsc::UnboundedSender<&'static str>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let tools = [
        ToolDefinition::builder("add")
            .description("Add two integers.")
            .parameters_json(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))
            .output_json(json!({"type": "integer"}))
            .annotations(ToolAnnotations { read_only_hint: Some(true), idempotent_hint: Some(true), ..Default::default() })
            .execute(|args, _| async move { Ok(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))) }),
        ToolDefinition::builder("weather")
            .description("The weather.")
            .output_json(json!({"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}))
            .execute(|_, _| async { Ok(json!({"temperature": 21})) }),
        ToolDefinition::builder("remove")
            .description("Remove everything.")
            .annotations(ToolAnnotations { destructive_hint: Some(true), open_world_hint: Some(false), ..Default::default() })
            .execute(|_, _| async { Ok(json!("removed")) }),
        ToolDefinition::builder("raw")
            .description("A raw schema.")
            .raw_parameters(json!({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Args", "type": "object", "properties": {"x": {"title": "X"}}}))
            .execute(|_, _| async { Ok(json!("ok")) }),
        ToolDefinition::builder("slow")
            .description("Wait until cancelled.")
            .execute(move |_, ctx| {
                let events = events.clone();
                async move {
                    let _ = events.send("started");
                    ctx.cancellation().cancelled().await;
                    let _ = events.send("cancelled");
                    Ok(json!("cancelled"))
                }
            }),
    ];
    for tool in tools {
        registry.register(tool.build().unwrap()).unwrap().keep();
    }
    registry
        .register(shout::definition().unwrap())
        .unwrap()
        .keep();
    registry
}

/// An `ask` for destructive tools, answered by an approval service that says no.
fn ask_for_destructive(registry: &ToolRegistry) {
    struct No;
    impl ApprovalService for No {
        fn request(&self, _: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
            Box::pin(async { ApprovalOutcome::Rejected })
        }
    }
    let lookup = registry.clone();
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            let destructive = lookup
                .get(&exec.name, exec.agent)
                .is_some_and(|d| d.annotations().destructive_hint == Some(true));
            async move {
                if destructive {
                    PreToolDecision::Ask { reason: None }
                } else {
                    next.run().await
                }
            }
        }))
        .keep();
    registry.set_approval(Arc::new(No));
}

/// Serves `server` over an in-process byte pipe and connects rmcp's client to it.
async fn pipe_client(server: McpServer) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_io);
        let _ = server.serve_io(reader, writer).await;
    });
    let (reader, writer) = tokio::io::split(client_io);
    dsh_tools_runtime::mcp::rmcp::serve_client((), (reader, writer))
        .await
        .unwrap()
}

fn params(name: &str, args: Value) -> CallToolRequestParams {
    let arguments: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn find<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} listed"))
}

#[tokio::test]
async fn tools_list_speaks_the_mcp_dialect_with_output_schemas_and_annotations() {
    let (events, _) = mpsc::unbounded_channel();
    let client = pipe_client(McpServer::new(&registry(events))).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["add", "weather", "remove", "raw", "slow", "shout"]);

    let add = find(&tools, "add");
    assert_eq!(add.description.as_deref(), Some("Add two integers."));
    assert_eq!(
        Value::Object((*add.input_schema).clone())["required"],
        json!(["a", "b"])
    );
    assert!(
        add.output_schema.is_none(),
        "an integer output is not an MCP output schema"
    );
    let hints = add.annotations.as_ref().unwrap();
    assert_eq!(
        (
            hints.read_only_hint,
            hints.idempotent_hint,
            hints.destructive_hint
        ),
        (Some(true), Some(true), None)
    );

    let weather = find(&tools, "weather");
    assert_eq!(
        Value::Object((**weather.output_schema.as_ref().unwrap()).clone())["required"],
        json!(["temperature"])
    );
    assert!(weather.annotations.is_none());
    assert_eq!(
        find(&tools, "remove")
            .annotations
            .as_ref()
            .unwrap()
            .destructive_hint,
        Some(true)
    );

    // The root `$schema` and `title` are dropped; nested titles stay.
    let raw = Value::Object((*find(&tools, "raw").input_schema).clone());
    assert_eq!(
        raw,
        json!({"type": "object", "properties": {"x": {"title": "X"}}})
    );
}

#[tokio::test]
async fn tools_call_runs_the_pipeline_and_every_failure_is_an_is_error_result() {
    let (events, _) = mpsc::unbounded_channel();
    let registry = registry(events);
    ask_for_destructive(&registry);
    let ids = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&ids);
    registry
        .on_result(move |exec, _| {
            seen.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(exec.call_id.to_string())
        })
        .keep();
    let client = pipe_client(McpServer::new(&registry)).await;
    let peer = client.peer();

    let sum = peer
        .call_tool(params("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(
        (text(&sum), sum.is_error, sum.structured_content.clone()),
        ("5".to_owned(), Some(false), None)
    );

    let weather = peer.call_tool(params("weather", json!({}))).await.unwrap();
    assert_eq!(weather.structured_content, Some(json!({"temperature": 21})));
    assert_eq!(text(&weather), r#"{"temperature":21}"#);

    let bad = peer
        .call_tool(params("add", json!({"a": "2"})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        text(&bad),
        "Error: invalid arguments: missing required property \"b\"; \"a\" must be an integer"
    );

    // A `#[tool]` refuses a key that is not a parameter before its body runs; a raw
    // (imported-style) schema stays open.
    let unknown_key = peer
        .call_tool(params("shout", json!({"text": "hi", "txt": "hi"})))
        .await
        .unwrap();
    assert_eq!(unknown_key.is_error, Some(true));
    assert_eq!(
        text(&unknown_key),
        "Error: invalid arguments: \"txt\" is not a parameter of shout; did you mean \"text\"?"
    );
    let open = peer
        .call_tool(params("raw", json!({"x": 1, "y": 2})))
        .await
        .unwrap();
    assert_eq!((text(&open), open.is_error), ("ok".to_owned(), Some(false)));

    // A name the server does not have is the spec's protocol error, not a tool result.
    let unknown = peer.call_tool(params("nope", json!({}))).await.unwrap_err();
    let ServiceError::McpError(unknown) = unknown else {
        panic!("not a JSON-RPC error: {unknown:?}");
    };
    assert_eq!(
        (unknown.code.0, unknown.message.as_ref()),
        (-32602, "unknown tool: nope")
    );

    // `ask` reaches the registry's approval service (calls run as the server's own agent).
    let refused = peer.call_tool(params("remove", json!({}))).await.unwrap();
    assert_eq!(
        (refused.is_error, text(&refused)),
        (
            Some(true),
            "Error: the user rejected tool \"remove\"".to_owned()
        )
    );

    let ids = ids.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert_eq!(ids, ["mcp-1", "mcp-2", "mcp-3", "mcp-4", "mcp-5", "mcp-6"]);
}

#[tokio::test]
async fn notifications_cancelled_cancels_the_execution() {
    let (events, mut seen) = mpsc::unbounded_channel();
    let client = pipe_client(McpServer::new(&registry(events))).await;
    let peer = client.peer().clone();
    let call = tokio::spawn(async move { peer.call_tool(params("slow", json!({}))).await });
    assert_eq!(seen.recv().await, Some("started"));
    // Abandoning the request makes rmcp send `notifications/cancelled`.
    call.abort();
    assert_eq!(seen.recv().await, Some("cancelled"));
    // The session goes on.
    let sum = client
        .peer()
        .call_tool(params("add", json!({"a": 1, "b": 1})))
        .await
        .unwrap();
    assert_eq!(text(&sum), "2");
}

#[tokio::test]
async fn a_scope_is_served_as_it_sees_the_registry() {
    let (events, _) = mpsc::unbounded_channel();
    let registry = registry(events);
    let agent = registry.new_scope();
    agent
        .restrict(ToolRestriction {
            allow: Some(vec!["add".into()]),
            ..Default::default()
        })
        .unwrap()
        .keep();
    let client = pipe_client(McpServer::for_scope(&agent)).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["add"]
    );
    let hidden = client
        .peer()
        .call_tool(params("weather", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&hidden, ServiceError::McpError(e) if e.code.0 == -32602 && e.message == "unknown tool: weather"),
        "{hidden:?}"
    );
}

#[tokio::test]
async fn http_serving_answers_rmcp_and_our_own_import() {
    let (events, _) = mpsc::unbounded_channel();
    let served = registry(events);
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    assert!(server.local_addr().ip().is_loopback());

    let transport = StreamableHttpClientTransport::from_uri(server.url());
    let client: Client = dsh_tools_runtime::mcp::rmcp::serve_client((), transport)
        .await
        .unwrap();
    assert_eq!(client.peer().list_all_tools().await.unwrap().len(), 6);
    let sum = client
        .peer()
        .call_tool(params("add", json!({"a": 20, "b": 22})))
        .await
        .unwrap();
    assert_eq!(text(&sum), "42");

    // Both ways: another registry imports the served tools over HTTP and calls them natively.
    let host = ToolRegistry::new();
    let imported = McpImport::new(&host)
        .connect_http("self", &server.url())
        .await
        .unwrap();
    assert_eq!(imported.tools().len(), 6);
    let weather = host
        .execute(ToolExecutionInput::new(
            "c1",
            "mcp__self__weather",
            json!({}),
        ))
        .await;
    assert_eq!(
        weather.value().unwrap()["structuredContent"],
        json!({"temperature": 21})
    );
    let bad = host
        .execute(ToolExecutionInput::new(
            "c2",
            "mcp__self__add",
            json!({"a": 1}),
        ))
        .await;
    assert_eq!(
        bad.error().unwrap().message(),
        "Error: invalid arguments: missing required property \"b\""
    );
    imported.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_inspector_cli_lists_and_calls_over_http() {
    let Some(inspector) = mcp_support::inspector() else {
        return;
    };
    let (events, _) = mpsc::unbounded_channel();
    let server = McpServer::new(&registry(events))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let catalog = tempfile::tempdir().unwrap();
    let run = |args: Vec<String>| {
        let mut command = inspector.command(&[]);
        command
            .arg("--cli")
            .arg(server.url())
            .args(["--transport", "http"])
            .args(args)
            .env("MCP_CATALOG_PATH", catalog.path().join("mcp.json"))
            .stdin(std::process::Stdio::null());
        async move {
            let output = command.output().await.unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(output.status.success(), "inspector failed: {stdout}");
            let start = stdout
                .find('{')
                .unwrap_or_else(|| panic!("no JSON in {stdout}"));
            serde_json::from_str::<Value>(&stdout[start..])
                .unwrap_or_else(|e| panic!("{e}: {stdout}"))
        }
    };
    let listed = run(vec!["--method".into(), "tools/list".into()]).await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "weather", "remove", "raw", "slow", "shout"]);
    assert_eq!(
        listed["tools"][1]["outputSchema"]["required"],
        json!(["temperature"])
    );

    let called = run([
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=40",
        "b=2",
    ]
    .map(String::from)
    .to_vec())
    .await;
    assert_eq!(called["content"][0]["text"], "42", "{called}");
    let structured = run(["--method", "tools/call", "--tool-name", "weather"]
        .map(String::from)
        .to_vec())
    .await;
    assert_eq!(
        structured["structuredContent"],
        json!({"temperature": 21}),
        "{structured}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_code_only_tool_is_neither_listed_nor_callable() {
    let registry = ToolRegistry::new();
    let tool = |name: &str, callers: dsh_tools::Callers| {
        ToolDefinition::builder(name)
            .description("A tool.")
            .callers(callers)
            .execute(|_, _| async { Ok(json!("ran")) })
            .build()
            .unwrap()
    };
    registry
        .register(tool("crunch", dsh_tools::Callers::Code))
        .unwrap()
        .keep();
    registry
        .register(tool("ask", dsh_tools::Callers::Native))
        .unwrap()
        .keep();
    let client = pipe_client(McpServer::new(&registry)).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["ask"]
    );
    let refused = client
        .peer()
        .call_tool(params("crunch", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ServiceError::McpError(e) if e.code.0 == -32602 && e.message == "unknown tool: crunch"),
        "{refused:?}"
    );
}

/// A code-mode registry serving three tools, deferring all but `loaded_tool`.
#[cfg(feature = "code-mode")]
fn deferring_code_registry() -> ToolRegistry {
    use dsh_tools_runtime::code::CodeMode;
    use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
    let registry = ToolRegistry::with_config(dsh_tools_runtime::RegistryConfig {
        mode: dsh_tools_runtime::PresentationMode::Code,
        ..dsh_tools_runtime::RegistryConfig::default()
    });
    for name in ["loaded_tool", "later_one", "later_two"] {
        registry
            .register(
                ToolDefinition::builder(name)
                    .description("Answer ok.")
                    .execute(|_, _| async { Ok(json!("ok")) })
                    .build()
                    .unwrap(),
            )
            .unwrap()
            .keep();
    }
    registry.defer_beyond(Some(1));
    let sandbox = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
    CodeMode::new(Arc::new(sandbox)).install(&registry).unwrap();
    registry
}

/// Code mode over MCP: exactly `tool_search` (tools are deferred) and `run_code`, whose
/// description is its own, the code-only rule naming `tool_search`, the SDK and the search
/// section; a tool the view does not list is the protocol's unknown tool.
#[cfg(feature = "code-mode")]
#[tokio::test]
async fn a_code_view_lists_run_code_and_tool_search_when_it_defers() {
    use dsh_tools_runtime::code::{RUN_CODE_DESCRIPTION, TOOL_SEARCH_TEXT};
    let registry = deferring_code_registry();
    let client = pipe_client(McpServer::new(&registry)).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["tool_search", "run_code"]);
    let description = find(&tools, "run_code").description.as_deref().unwrap();
    let prompt = registry.prompt(None).unwrap();
    let sections: Vec<&str> = prompt.sections.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        description,
        format!("{RUN_CODE_DESCRIPTION}\n\n{}", sections.join("\n\n"))
    );
    assert!(
        description.starts_with(&format!(
            "{RUN_CODE_DESCRIPTION}\n\n`run_code` and `tool_search` are the only tools you can \
             call directly: a call naming any other tool fails, and programs cannot call it."
        )),
        "{description}"
    );
    assert!(description.ends_with(&format!("\n\n{TOOL_SEARCH_TEXT}")));
    assert!(description.contains("\nloaded_tool: "), "{description}");
    assert!(!description.contains("later_one"), "{description}");
    let error = client
        .call_tool(params("loaded_tool", json!({})))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("unknown tool: loaded_tool"),
        "{error}"
    );
    // A program reaches a deferred tool.
    let code = "return await tools.later_two({});";
    let result = client
        .call_tool(params(
            "run_code",
            json!({"code": code, "description": "Call"}),
        ))
        .await
        .unwrap();
    assert_eq!(text(&result), "ok");
}
