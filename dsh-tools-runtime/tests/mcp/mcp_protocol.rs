//! MCP to the letter (`docs/CONTRACTS.md`, "MCP"): the client starts with `server/discover`
//! (2026-07-28) and, with a server of an older revision, offers a version with an `initialize`
//! handshake and negotiates down to what the server speaks; the HTTP server checks `Origin`.

#![cfg(feature = "mcp")]

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientNotification, ClientRequest,
    ContentBlock, DiscoverRequestMethod, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    ServerResult, Tool,
};
use dsh_tools_runtime::mcp::rmcp::service::{
    NotificationContext, RequestContext, RoleServer, Service,
};
use dsh_tools_runtime::mcp::rmcp::{ErrorData, ServerHandler};
use dsh_tools_runtime::mcp::{McpError, McpImport, McpServer};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server that speaks exactly one protocol version and records the one the client offered.
#[derive(Clone)]
struct Speaks {
    version: ProtocolVersion,
    offered: Arc<Mutex<Option<String>>>,
}

impl ServerHandler for Speaks {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = self.version.clone();
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![self.version.clone()])
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        *self.offered.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(request.protocol_version.to_string());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {}});
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "version",
            "The protocol version.",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(self.version.to_string()),
        ])))
    }
}

/// A server of a revision before 2026-07-28: `server/discover` is a method it does not know.
struct Legacy(Speaks);

impl Service<RoleServer> for Legacy {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        if matches!(request, ClientRequest::DiscoverRequest(_)) {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        Service::handle_request(&self.0, request, context).await
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Service::handle_notification(&self.0, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}

/// Serves `service` on one end of an in-process pipe until the client goes.
async fn serve(service: impl Service<RoleServer>, io: tokio::io::DuplexStream) {
    let (reader, writer) = tokio::io::split(io);
    if let Ok(running) = dsh_tools_runtime::mcp::rmcp::serve_server(service, (reader, writer)).await
    {
        let _ = running.waiting().await;
    }
}

/// Imports the one tool of a server speaking `version` (one without `server/discover` when
/// the version has an `initialize` handshake) and calls it; returns the call's text and the
/// version the client's `initialize` offered (`None`: there was no `initialize`).
async fn import_from(version: ProtocolVersion) -> (Result<String, McpError>, Option<String>) {
    let server = Speaks {
        version: version.clone(),
        offered: Arc::default(),
    };
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let handler = server.clone();
    if version.has_initialize() {
        tokio::spawn(serve(Legacy(handler), server_io));
    } else {
        tokio::spawn(serve(handler, server_io));
    }
    let registry = ToolRegistry::new();
    let (reader, writer) = tokio::io::split(client_io);
    let result = match McpImport::new(&registry)
        .connect_io("v", reader, writer)
        .await
    {
        Ok(connection) => {
            let result = registry
                .execute(ToolExecutionInput::new("c1", "mcp__v__version", json!({})))
                .await;
            connection.close().await;
            Ok(result.content()[0].as_text().unwrap_or_default().to_owned())
        }
        Err(error) => Err(error),
    };
    let offered = server
        .offered
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    (result, offered)
}

#[tokio::test]
async fn the_client_speaks_2026_07_28_without_a_handshake() {
    let (result, offered) = import_from(ProtocolVersion::V_2026_07_28).await;
    assert_eq!(offered, None, "no initialize");
    assert_eq!(result.unwrap(), "2026-07-28");
}

#[tokio::test]
async fn the_client_negotiates_down_to_every_version_with_a_handshake() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let (result, offered) =
            import_from(serde_json::from_value::<ProtocolVersion>(json!(version)).unwrap()).await;
        assert_eq!(
            offered.as_deref(),
            Some("2025-11-25"),
            "offered to a {version} server"
        );
        assert_eq!(result.unwrap(), version, "a tool of a {version} server");
    }
}

#[tokio::test]
async fn a_version_the_client_does_not_speak_ends_the_connection() {
    let (result, _) =
        import_from(serde_json::from_value::<ProtocolVersion>(json!("2024-10-07")).unwrap()).await;
    let error = result.unwrap_err();
    assert_eq!(
        error.to_string(),
        McpError::Connect {
            server: "v".into(),
            message: "the server answered protocol version 2024-10-07; this client speaks 2024-11-05 through 2026-07-28".into(),
        }
        .to_string()
    );
}

/// Posts an `initialize` request with an optional `Origin`; returns the HTTP status.
async fn status_for(port: u16, origin: Option<&str>) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}})
    .to_string();
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{origin}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_http_server_refuses_foreign_origins_with_403() {
    let registry = ToolRegistry::new();
    registry
        .register(
            ToolDefinition::builder("ping")
                .description("Answer pong.")
                .execute(|_, _| async { Ok(json!("pong")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let server = McpServer::new(&registry)
        .allow_origins(["https://app.example.com"])
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let port = server.local_addr().port();
    assert_eq!(status_for(port, Some("http://evil.example")).await, 403);
    assert_eq!(status_for(port, Some("http://127.0.0.1:1")).await, 403);
    assert_eq!(
        status_for(port, Some("https://app.example.com.evil.example")).await,
        403
    );
    assert_eq!(
        status_for(port, Some(&format!("http://127.0.0.1:{port}"))).await,
        200
    );
    assert_eq!(
        status_for(port, Some(&format!("http://localhost:{port}"))).await,
        200
    );
    assert_eq!(status_for(port, Some("https://app.example.com")).await, 200);
    // Non-browser clients send no Origin.
    assert_eq!(status_for(port, None).await, 200);
    server.shutdown().await;
}

/// Sends raw bytes (a request with `Connection: close`) and returns the status and the body.
async fn exchange(port: u16, request: String) -> (u16, String) {
    let response = raw(port, request).await;
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The whole response to a request sent with `Connection: close`.
async fn raw(port: u16, request: String) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

fn post_head(port: u16, framing: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n{framing}\r\n"
    )
}

#[tokio::test]
async fn malformed_requests_get_400_with_the_json_rpc_error() {
    let registry = ToolRegistry::new();
    let server = McpServer::new(&registry)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let port = server.local_addr().port();
    let sized = |body: &str| {
        format!(
            "{}{body}",
            post_head(port, &format!("Content-Length: {}\r\n", body.len()))
        )
    };
    // Not JSON: a parse error.
    let (status, body) = exchange(port, sized("{\"jsonrpc\": ")).await;
    assert_eq!(status, 400);
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], serde_json::Value::Null);
    assert_eq!(error["error"]["code"], -32700);
    assert_eq!(
        error["error"]["message"],
        "Parse error: EOF while parsing a value at line 1 column 12"
    );
    // JSON, but no JSON-RPC message: an invalid request.
    let (status, body) = exchange(port, sized("[1, 2]")).await;
    assert_eq!(status, 400);
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32600);
    // A chunk whose size is not hexadecimal breaks HTTP framing: 400, not 500.
    let chunked = format!(
        "{}zz\r\n{{}}\r\n0\r\n\r\n",
        post_head(port, "Transfer-Encoding: chunked\r\n")
    );
    let (status, body) = exchange(port, chunked).await;
    assert_eq!(status, 400, "{body}");
    // Past the body limit: 413.
    let huge = post_head(port, &format!("Content-Length: {}\r\n", 5 * 1024 * 1024));
    let (status, _) = exchange(port, huge).await;
    assert_eq!(status, 413);
    server.shutdown().await;
}

/// An `initialize` request's status, `Retry-After` and session id.
async fn initialize(port: u16) -> (u16, Option<String>, Option<String>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}})
    .to_string();
    let request = format!(
        "{}{body}",
        post_head(port, &format!("Content-Length: {}\r\n", body.len()))
    );
    let response = raw(port, request).await;
    let header = |name: &str| {
        response.lines().find_map(|line| {
            let (key, value) = line.split_once(": ")?;
            key.eq_ignore_ascii_case(name).then(|| value.to_owned())
        })
    };
    (
        response[9..12].parse().unwrap(),
        header("retry-after"),
        header("mcp-session-id"),
    )
}

#[tokio::test]
async fn sessions_past_the_cap_get_503_until_pending_ones_expire() {
    use std::time::{Duration, Instant};
    let registry = ToolRegistry::new();
    let limits = dsh_tools_runtime::mcp::HttpLimits {
        max_sessions: 2,
        pending_session_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let server = McpServer::new(&registry)
        .with_http_limits(limits)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let port = server.local_addr().port();
    let opened = Instant::now();
    assert_eq!(initialize(port).await.0, 200);
    assert_eq!(initialize(port).await.0, 200);
    let (status, retry, session) = initialize(port).await;
    assert_eq!((status, retry.as_deref(), session), (503, Some("1"), None));
    // Neither session sent `notifications/initialized`: both end after 300 ms, and the cap
    // frees (bounded wait: 5 s).
    loop {
        let (status, _, _) = initialize(port).await;
        if status == 200 {
            break;
        }
        assert_eq!(status, 503);
        assert!(opened.elapsed() < Duration::from_secs(5), "never freed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(opened.elapsed() >= Duration::from_millis(300));
    server.shutdown().await;
}
