//! Tool parameters mirrored into HTTP headers (SEP-2243, `x-mcp-header`) between our own
//! server and our own import: the import sends the declared argument as `Mcp-Param-*` and the
//! server checks it against the body; a call whose header disagrees is refused before it runs;
//! a tool with an invalid declaration is left out of the import.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpImport, McpServer};
use serde_json::{Value, json};

/// A raw tool (`x-mcp-header` is outside the parameter subset) whose `region` is declared as
/// the header `header`; it counts its runs.
fn region_tool(name: &str, header: &str, runs: &Arc<AtomicUsize>) -> ToolDefinition {
    let runs = Arc::clone(runs);
    ToolDefinition::builder(name)
        .description("Echoes the region.")
        .raw_parameters(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": header}},
            "required": ["region"],
        }))
        .execute(move |args, _ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({"region": args["region"]})) }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn declared_parameters_travel_as_headers_and_a_mismatch_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    let served = ToolRegistry::new();
    for tool in [
        region_tool("regional", "Region", &runs),
        region_tool("broken", "", &runs),
    ] {
        served.register(tool).unwrap().keep();
    }
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();

    // Our import: the invalid declaration (an empty header name) is left out; the valid tool
    // is called with its header, which the server accepts.
    let host = ToolRegistry::new();
    let connection = McpImport::new(&host)
        .connect_http("srv", &server.url())
        .await
        .unwrap();
    let names: Vec<String> = connection.tools().into_iter().map(|t| t.raw_name).collect();
    assert_eq!(names, ["regional"]);
    let result = host
        .execute(ToolExecutionInput::new(
            "c1",
            "mcp__srv__regional",
            json!({"region": "Hello, 世界"}),
        ))
        .await;
    assert!(!result.is_error(), "{:?}", result.error());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    connection.close().await;

    // A client whose header disagrees with the body: HTTP 400, -32020, and nothing runs.
    let post = |region_header: Option<&'static str>| {
        let mut request = reqwest::Client::new()
            .post(server.url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "regional");
        if let Some(value) = region_header {
            request = request.header("mcp-param-region", value);
        }
        request
            .json(&json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {
                    "name": "regional",
                    "arguments": {"region": "us-west1"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                    },
                },
            }))
            .send()
    };
    for (header, reason) in [
        (
            Some("eu-north1"),
            "Mcp-Param-Region header `eu-north1` does not match body value `us-west1`",
        ),
        (None, "missing Mcp-Param-Region header for `region`"),
    ] {
        let response = post(header).await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(status, 400, "{text}");
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["error"]["code"], -32020, "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(reason),
            "{body}"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no refused call ran");
    // The matching header is accepted.
    let response = post(Some("us-west1")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}
