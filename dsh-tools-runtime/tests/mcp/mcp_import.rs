//! Import against a scripted in-process rmcp server: paging, public names, calls, `isError`,
//! structured content, cancellation and timeouts reaching the server, re-sync on
//! `tools/list_changed`, the all-or-nothing swap, and disposal.
#![cfg(feature = "mcp")]

use crate::mcp_support;

use std::sync::Arc;
use std::time::Duration;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpError, McpImport, public_tool_name};
use mcp_support::scripted::{connect, names, tool};
use mcp_support::text_of;
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, args)
}

#[tokio::test]
async fn every_page_is_fetched_and_registered_under_its_public_name() {
    let registry = ToolRegistry::new();
    let pages = vec![
        vec![tool("a"), tool("b")],
        vec![tool("c")],
        vec![tool("files.read")],
    ];
    let (connection, script, _) = connect(&McpImport::new(&registry), "st", pages).await;
    let connection = connection.unwrap();
    assert_eq!(script.with(|s| s.list_requests), 3);
    let hashed = public_tool_name("st", "files.read");
    assert_eq!(
        names(&registry),
        ["mcp__st__a", "mcp__st__b", "mcp__st__c", hashed.as_str()]
    );
    let tools = connection.tools();
    assert_eq!(tools[3].raw_name, "files.read");
    assert_eq!(tools[3].public_name, hashed);
    // The parameters are the server's input schema, verbatim and unvalidated.
    let def = registry.get("mcp__st__a", None).unwrap();
    assert_eq!(def.description(), "The a tool.");
    assert_eq!(
        def.parameters()["properties"]["text"],
        json!({"type": "string"})
    );
    assert!(!def.validates_args());
}

#[tokio::test]
async fn a_call_sends_the_raw_name_and_object_arguments() {
    let registry = ToolRegistry::new();
    let (connection, script, _) = connect(
        &McpImport::new(&registry),
        "st",
        vec![vec![tool("files.read")]],
    )
    .await;
    let _connection = connection.unwrap();
    let name = public_tool_name("st", "files.read");
    let ok = registry.execute(call(&name, json!({"text": "hi"}))).await;
    assert_eq!(
        ok.value(),
        Some(&json!({"content": [{"type": "text", "text": "{\"text\":\"hi\"}"}]}))
    );
    assert_eq!(text_of(&ok), "{\"text\":\"hi\"}");
    // Arguments that are not an object are sent as `{}`.
    let odd = registry.execute(call(&name, json!([1, 2]))).await;
    assert!(!odd.is_error());
    let calls = script.with(|s| s.calls.clone());
    assert_eq!(
        calls,
        [
            ("files.read".to_owned(), json!({"text": "hi"})),
            ("files.read".to_owned(), json!({}))
        ]
    );
}

#[tokio::test]
async fn is_error_is_a_failure_with_the_rendered_text() {
    let registry = ToolRegistry::new();
    let (connection, _, _) =
        connect(&McpImport::new(&registry), "st", vec![vec![tool("fail")]]).await;
    let _connection = connection.unwrap();
    let failed = registry.execute(call("mcp__st__fail", json!({}))).await;
    assert_eq!(failed.error().unwrap().message(), "it broke\nbadly");
    assert_eq!(text_of(&failed), "Error: it broke\nbadly");
    assert!(failed.error().unwrap().info().is_none());
}

#[tokio::test]
async fn a_supported_output_schema_makes_structured_content_required() {
    let registry = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"temperature": {"type": "number"}}});
    let with_schema = |name: &str| {
        let mut t = tool(name);
        t.output_schema = Some(Arc::new(schema.as_object().cloned().unwrap()));
        t
    };
    let pages = vec![vec![
        with_schema("structured"),
        with_schema("echo"),
        tool("bare"),
    ]];
    let (connection, _, _) = connect(&McpImport::new(&registry), "st", pages).await;
    let _connection = connection.unwrap();
    let def = registry.get("mcp__st__structured", None).unwrap();
    assert_eq!(
        def.output_schema()["properties"]["structuredContent"],
        schema
    );
    assert_eq!(
        def.output_schema()["required"],
        json!(["content", "structuredContent"])
    );

    let ok = registry
        .execute(call("mcp__st__structured", json!({})))
        .await;
    assert_eq!(
        ok.value().unwrap()["structuredContent"],
        json!({"temperature": 21})
    );
    assert_eq!(text_of(&ok), "sunny");
    // Promised structured content that does not come is an output violation.
    let missing = registry.execute(call("mcp__st__echo", json!({}))).await;
    assert_eq!(
        missing.error().unwrap().info().unwrap().code,
        "INVALID_TOOL_OUTPUT"
    );
    // Without a promise, structured content is kept as any JSON; empty content renders the
    // reference's diagnostic.
    let bare = registry.execute(call("mcp__st__bare", json!({}))).await;
    assert_eq!(
        bare.value().unwrap()["structuredContent"],
        json!({"temperature": 21})
    );
    assert_eq!(text_of(&bare), "(bare returned no model-visible content)");
}

#[tokio::test]
async fn cancelling_the_execution_cancels_the_request_on_the_server() {
    let registry = ToolRegistry::new();
    let (connection, _, mut feeds) = connect(
        &McpImport::new(&registry),
        "st",
        vec![vec![tool("hang"), tool("echo")]],
    )
    .await;
    let _connection = connection.unwrap();
    let input = call("mcp__st__hang", json!({}));
    let cancel = input.cancel.clone();
    let running = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(input).await }
    });
    assert_eq!(feeds.received.recv().await.as_deref(), Some("hang"));
    cancel.cancel();
    let result = running.await.unwrap();
    assert_eq!(result.error().unwrap().info().unwrap().code, "ABORTED");
    assert_eq!(text_of(&result), "Error: tool call aborted");
    // The server saw `notifications/cancelled` for that request.
    assert_eq!(feeds.cancelled.recv().await.as_deref(), Some("hang"));
    // The connection is still good.
    assert!(
        !registry
            .execute(call("mcp__st__echo", json!({})))
            .await
            .is_error()
    );
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_and_is_cancelled_on_the_server() {
    let registry = ToolRegistry::new();
    let import = McpImport::new(&registry).call_timeout(Duration::from_millis(200));
    let (connection, _, mut feeds) = connect(&import, "st", vec![vec![tool("hang")]]).await;
    let _connection = connection.unwrap();
    let result = registry.execute(call("mcp__st__hang", json!({}))).await;
    assert_eq!(
        result.error().unwrap().message(),
        "mcp-client(st): tools/call \"hang\" timed out after 200ms"
    );
    assert_eq!(feeds.cancelled.recv().await.as_deref(), Some("hang"));
}

#[tokio::test]
async fn list_changed_swaps_in_the_new_generation() {
    let registry = ToolRegistry::new();
    let (connection, script, _) = connect(
        &McpImport::new(&registry),
        "st",
        vec![vec![tool("a"), tool("b")]],
    )
    .await;
    let connection = connection.unwrap();
    let mut syncs = connection.syncs();
    assert_eq!(*syncs.borrow_and_update(), 1);
    // The server speaks 2026-07-28: the change comes on the client's subscription.
    script.set_pages(vec![vec![tool("b")], vec![tool("c")]]);
    script.list_changed().await;
    syncs.changed().await.unwrap();
    assert_eq!(names(&registry), ["mcp__st__b", "mcp__st__c"]);
    assert_eq!(connection.tools().len(), 2);
}

#[tokio::test]
async fn a_failed_listing_keeps_the_previous_generation() {
    let registry = ToolRegistry::new();
    let (connection, script, _) =
        connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    let connection = connection.unwrap();
    script.with(|s| s.fail_list = true);
    script.set_pages(vec![vec![tool("z")]]);
    let error = connection.resync().await.unwrap_err();
    assert_eq!(error.code(), "MCP_LIST_FAILED");
    assert_eq!(names(&registry), ["mcp__st__a"]);
    // The next listing works again.
    connection.resync().await.unwrap();
    assert_eq!(names(&registry), ["mcp__st__z"]);
}

#[tokio::test]
async fn a_duplicate_public_name_is_an_invalid_tool_list() {
    let registry = ToolRegistry::new();
    let (connection, script, _) =
        connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    let connection = connection.unwrap();
    script.set_pages(vec![vec![tool("b")], vec![tool("b")]]);
    let error = connection.resync().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "mcp-client(st): server listed tool \"b\" more than once — invalid tool list"
    );
    assert_eq!(names(&registry), ["mcp__st__a"]);
    // At connect time the same list refuses the connection.
    let (refused, _, _) = connect(
        &McpImport::new(&registry),
        "st2",
        vec![vec![tool("b"), tool("b")]],
    )
    .await;
    assert_eq!(refused.unwrap_err().code(), "MCP_DUPLICATE_TOOL");
}

#[tokio::test]
async fn a_registry_conflict_leaves_no_tool_of_the_server() {
    let registry = ToolRegistry::new();
    let squatter = mcp_support::scripted::squatter("mcp__st__b");
    registry.register(squatter.clone()).unwrap().keep();
    let (refused, _, _) = connect(
        &McpImport::new(&registry),
        "st",
        vec![vec![tool("a"), tool("b")]],
    )
    .await;
    let error = refused.unwrap_err();
    assert_eq!(error.code(), "MCP_REGISTRATION_FAILED");
    assert!(
        error
            .to_string()
            .starts_with("mcp-client(st): tool registration failed, no tools registered: ")
    );
    assert_eq!(names(&registry), ["mcp__st__b"]);

    // A later re-sync that conflicts clears this server's tools and keeps the squatter.
    let (connection, script, _) =
        connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    let connection = connection.unwrap();
    assert_eq!(names(&registry), ["mcp__st__b", "mcp__st__a"]);
    script.set_pages(vec![vec![tool("a"), tool("b")]]);
    assert_eq!(
        connection.resync().await.unwrap_err().code(),
        "MCP_REGISTRATION_FAILED"
    );
    assert_eq!(names(&registry), ["mcp__st__b"]);
    assert!(registry.get("mcp__st__b", None).unwrap().ptr_eq(&squatter));
    assert!(connection.tools().is_empty());
}

#[tokio::test]
async fn closing_or_dropping_the_connection_unregisters_its_tools() {
    let registry = ToolRegistry::new();
    let (connection, _, _) = connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    connection.unwrap().close().await;
    assert!(names(&registry).is_empty());
    let (connection, _, _) = connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    let connection = connection.unwrap();
    assert_eq!(names(&registry), ["mcp__st__a"]);
    drop(connection);
    assert!(names(&registry).is_empty());
}

#[tokio::test]
async fn server_names_follow_the_rule_and_are_unique_while_live() {
    let registry = ToolRegistry::new();
    let (bad, _, _) = connect(&McpImport::new(&registry), "no spaces", vec![]).await;
    assert!(matches!(bad.unwrap_err(), McpError::InvalidServerName(_)));
    let (first, _, _) = connect(&McpImport::new(&registry), "st", vec![vec![tool("a")]]).await;
    let first = first.unwrap();
    let (second, _, _) = connect(&McpImport::new(&registry), "st", vec![vec![tool("b")]]).await;
    assert_eq!(second.unwrap_err().code(), "MCP_SERVER_NAME_IN_USE");
    // Another registry may use the name.
    let other = ToolRegistry::new();
    let (elsewhere, _, _) = connect(&McpImport::new(&other), "st", vec![vec![tool("b")]]).await;
    assert!(elsewhere.is_ok());
    first.close().await;
    let (again, _, _) = connect(&McpImport::new(&registry), "st", vec![vec![tool("b")]]).await;
    assert!(again.is_ok());
}

#[tokio::test]
async fn a_scoped_import_is_seen_by_that_agent_only_and_policies_apply() {
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    let import = McpImport::new(&registry).into_scope(&agent);
    let (connection, script, _) = connect(&import, "st", vec![vec![tool("echo")]]).await;
    let _connection = connection.unwrap();
    assert!(registry.get("mcp__st__echo", None).is_none());
    assert!(agent.get("mcp__st__echo").is_some());
    // A guard denies the call before it reaches the server.
    agent
        .guard(|exec| (exec.name.as_ref() == "mcp__st__echo").then(|| "not today".to_owned()))
        .keep();
    let mut input = call("mcp__st__echo", json!({}));
    input.agent = Some(agent.id());
    let denied = registry.execute(input).await;
    assert_eq!(text_of(&denied), "Error: not today");
    assert!(script.with(|s| s.calls.is_empty()));
}

#[tokio::test]
async fn a_deferred_server_is_found_through_tool_search_and_stays_callable() {
    let registry = ToolRegistry::new();
    let import = McpImport::new(&registry).loading(dsh_tools::Loading::Deferred);
    let (connection, _, _) = connect(&import, "st", vec![vec![tool("a"), tool("b")]]).await;
    let connection = connection.unwrap();
    let shown: Vec<String> = registry.schemas(None).into_iter().map(|s| s.name).collect();
    assert_eq!(shown, [dsh_tools_runtime::TOOL_SEARCH_NAME]);
    assert_eq!(registry.deferred(None).len(), 2);
    // Executable while deferred; a re-sync keeps the new generation deferred.
    let result = registry
        .execute(call("mcp__st__a", json!({"text": "hi"})))
        .await;
    assert!(!result.is_error(), "{result:?}");
    connection.resync().await.unwrap();
    assert_eq!(registry.deferred(None).len(), 2);
}

/// An `https://` server is reached over TLS: the first bytes the client sends are a TLS
/// handshake record (content type 22), not plain HTTP and not nothing (a build without TLS fails
/// before it connects). The listener then hangs up, so the import fails.
#[tokio::test]
async fn an_https_server_is_reached_over_tls() {
    use tokio::io::AsyncReadExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let first_byte = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("the client connects");
        socket.read_u8().await.expect("the client sends a byte")
    });
    let registry = ToolRegistry::new();
    let url = format!("https://127.0.0.1:{port}/mcp");
    let Err(error) = McpImport::new(&registry).connect_http("tls", &url).await else {
        panic!("a listener that hangs up is no MCP server");
    };
    // Bounds a failure (the client never connected), not a synchronisation: the byte was read
    // before the listener hung up, which is what failed the import.
    let byte = tokio::time::timeout(Duration::from_secs(30), first_byte)
        .await
        .unwrap_or_else(|_| panic!("the client never connected over TLS: {error}"))
        .expect("the listener task");
    assert_eq!(byte, 0x16, "a TLS handshake record opens the connection");
}
