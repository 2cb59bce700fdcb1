//! The MCP bridge's message handling, both ways, over in-process pipes (newline-delimited
//! JSON-RPC, as over stdio).
//!
//! - **Serve** (first byte even): a client sends the handshake, then the input's bytes as its
//!   lines, then closes. Our [`McpServer`] must answer with JSON lines only and end once the
//!   client has gone.
//! - **Import** (first byte odd): a hostile server answers the handshake properly, then answers
//!   `tools/list` with the input's text before the first NUL byte and `tools/call` with the text
//!   after it (each spliced in as the JSON-RPC `result`, garbage included). Our [`McpImport`]
//!   must end (connected or with an error), every imported tool's call must come back as a
//!   result, and the result interpretation must be total on whatever the server sent.

use std::sync::OnceLock;
use std::time::Duration;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{McpImport, McpServer, interpret_call_result};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// How long one scenario may take once the peer has closed its side: past it, a hang.
const END_WITHIN: Duration = Duration::from_secs(10);
/// The hostile server closes the pipe when the client has been silent this long (a client that
/// waits for an answer the server will never send is not a finding; waiting after the close is).
const SERVER_IDLE: Duration = Duration::from_millis(100);
/// `tools/list` answers the hostile server gives before closing (bounds cursor loops).
const MAX_LIST_ANSWERS: usize = 4;
/// Imported tools called per input.
const MAX_CALLS: usize = 3;

/// The MCP target. Input: a selector byte, then the payload (see the module docs).
pub fn mcp_messages(data: &[u8]) {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    if selector % 2 == 0 {
        runtime.block_on(serve(payload));
    } else {
        runtime.block_on(import(payload));
    }
}

/// Runs one scenario on a fresh runtime; the count [`serve`] or [`import`] returns.
#[cfg(test)]
fn scenario(data: &[u8]) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    match data.split_first() {
        Some((selector, payload)) if selector % 2 == 0 => runtime.block_on(serve(payload)),
        Some((_, payload)) => runtime.block_on(import(payload)),
        None => 0,
    }
}

/// The served registry: a typed tool (the arguments are validated) and an echo of raw arguments.
fn served_registry() -> &'static ToolRegistry {
    static REGISTRY: OnceLock<ToolRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = ToolRegistry::new();
        let tools = [
            ToolDefinition::builder("add")
                .description("Add two integers.")
                .parameters_json(json!({
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "number", "maximum": 1e21}},
                    "required": ["a", "b"]
                }))
                .output_json(json!({"type": "number"}))
                .execute(|args, _| async move {
                    Ok(json!(
                        args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0)
                    ))
                }),
            ToolDefinition::builder("echo")
                .description("Echo the arguments.")
                .raw_parameters(json!({"type": "object", "additionalProperties": true}))
                .execute(|args, _| async move { Ok(Value::clone(&args)) }),
        ];
        for tool in tools {
            registry
                .register(tool.build().expect("a valid definition"))
                .expect("registered")
                .keep();
        }
        registry
    })
}

/// A client speaking the input's bytes to our server. Returns the lines the server answered.
async fn serve(payload: &[u8]) -> usize {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_reader, server_writer) = tokio::io::split(server);
    let served = async {
        // A failed session (the client broke the protocol) is an answer, not a finding.
        let _ = McpServer::new(served_registry())
            .serve_io(server_reader, server_writer)
            .await;
    };
    let (client_reader, mut client_writer) = tokio::io::split(client);
    let speak = async move {
        let handshake = concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
        );
        // The server may stop reading (it ended the session): a failed write ends the client.
        if client_writer.write_all(handshake.as_bytes()).await.is_ok()
            && client_writer.write_all(payload).await.is_ok()
        {
            let _ = client_writer.write_all(b"\n").await;
        }
        let _ = client_writer.shutdown().await;
    };
    let listen = async {
        let mut lines = BufReader::new(client_reader).lines();
        let mut answers = 0usize;
        while let Ok(Some(line)) = lines.next_line().await {
            let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            assert_eq!(answer["jsonrpc"], "2.0", "not JSON-RPC: {line}");
            answers += 1;
        }
        answers
    };
    let all = async { tokio::join!(served, speak, listen) };
    let (_, _, answers) = tokio::time::timeout(END_WITHIN, all)
        .await
        .expect("the server ended after the client closed");
    assert!(answers >= 1, "the handshake got no answer");
    answers
}

/// Our import against a hostile server scripted by the payload. Returns the calls made.
async fn import(payload: &[u8]) -> usize {
    let (list_text, call_text) = match payload.iter().position(|&b| b == 0) {
        Some(at) => (&payload[..at], &payload[at + 1..]),
        None => (payload, &b"{\"content\":[]}"[..]),
    };
    let (Ok(list_text), Ok(call_text)) = (
        std::str::from_utf8(list_text),
        std::str::from_utf8(call_text),
    ) else {
        return 0;
    };
    // Single-line answers: a newline inside would split the message (that is the transport's
    // framing, not the handling under test).
    let (list_text, call_text) = (list_text.replace('\n', " "), call_text.replace('\n', " "));
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_reader, server_writer) = tokio::io::split(server);
    let hostile = hostile_server(server_reader, server_writer, &list_text, &call_text);
    let registry = ToolRegistry::new();
    let importer = async {
        let (reader, writer) = tokio::io::split(client);
        let import = McpImport::new(&registry).call_timeout(Duration::from_millis(500));
        let Ok(connection) = import.connect_io("hostile", reader, writer).await else {
            return 0;
        };
        let mut calls = 0;
        for tool in connection.tools().into_iter().take(MAX_CALLS) {
            calls += 1;
            let input = ToolExecutionInput::new("c1", tool.public_name.clone(), json!({}));
            let result = registry.execute(input).await;
            if let Some(error) = result.error() {
                assert!(
                    !error.to_string().is_empty(),
                    "an empty error for {}",
                    tool.public_name
                );
            }
        }
        connection.close().await;
        calls
    };
    let all = async { tokio::join!(hostile, importer) };
    let (_, calls) = tokio::time::timeout(END_WITHIN, all)
        .await
        .expect("the import ended after the server closed");
    if let Ok(result) = serde_json::from_str::<Value>(&call_text) {
        let _ = interpret_call_result("tool", &result);
    }
    calls
}

/// Answers the client's requests until it goes quiet, then closes the pipe.
async fn hostile_server<R, W>(reader: R, mut writer: W, list_text: &str, call_text: &str)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(reader).lines();
    let mut list_answers = 0;
    loop {
        let line = match tokio::time::timeout(SERVER_IDLE, lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            _ => break,
        };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            panic!("our client wrote a line that is not JSON: {line}");
        };
        let Some(id) = request
            .get("id")
            .filter(|_| request.get("method").is_some())
        else {
            continue;
        };
        let id = id.to_string();
        let answer = match request["method"].as_str().unwrap_or_default() {
            "initialize" => {
                let version = request["params"]["protocolVersion"].clone();
                let result = json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "hostile", "version": "0"}
                });
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
            }
            "tools/list" if list_answers < MAX_LIST_ANSWERS => {
                list_answers += 1;
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{list_text}}}"#)
            }
            "tools/call" => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{call_text}}}"#),
            _ => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#)
            }
        };
        if writer.write_all(answer.as_bytes()).await.is_err()
            || writer.write_all(b"\n").await.is_err()
        {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::scenario;

    /// The scenarios reach what they are meant to fuzz: a well-formed call is answered, and a
    /// well-formed listing is imported and its tools called.
    #[test]
    fn the_scenarios_reach_the_calls() {
        let call = br#"0{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
        assert_eq!(scenario(call), 2, "the handshake and the call are answered");
        let listing = concat!(
            r#"1{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}"#,
            "\0",
            r#"{"content":[{"type":"text","text":"hi"}]}"#
        );
        assert_eq!(
            scenario(listing.as_bytes()),
            2,
            "both imported tools are called"
        );
        assert_eq!(
            scenario(b"1{\"tools\":[{\"name\":"),
            0,
            "a broken listing imports nothing"
        );
    }
}
