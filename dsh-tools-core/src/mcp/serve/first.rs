//! A byte-stream session's requests before it is open.
//!
//! Over stdio (or any byte stream), a session opens with `initialize` (MCP 2025-11-25), or each
//! request carries the protocol version and the client's capabilities in its `_meta` (MCP
//! 2026-07-28, stateless). A request that does neither — a bare `tools/list` typed by hand, or
//! sent by a client that skipped the handshake — would get rmcp's answer about missing `_meta`
//! fields and the connection would close. Here it gets an error saying what to send first, and
//! the session stays open for the request that does.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

/// The `_meta` key naming a stateless request's protocol version.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The error code of a request before the session is open: JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;

/// Reads `reader` until the line that opens the session (or is not a request at all), answering
/// each request before it on `writer`. Returns that line (empty at the end of the stream) and
/// the reader, positioned after it.
pub(super) async fn until_open<R, W>(
    reader: R,
    writer: &mut W,
) -> std::io::Result<(Vec<u8>, BufReader<R>)>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok((line, reader));
        }
        let Some(answer) = refusal(&line) else {
            return Ok((line, reader));
        };
        let mut frame = serde_json::to_vec(&answer).map_err(std::io::Error::other)?;
        frame.push(b'\n');
        writer.write_all(&frame).await?;
        writer.flush().await?;
    }
}

/// The error answering `line` when it is a request that cannot come first, else `None` (the
/// session's own handling takes it: `initialize`, a stateless request, a notification,
/// anything that is not a JSON-RPC request).
fn refusal(line: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(line).ok()?;
    let method = message.get("method")?.as_str()?;
    let id = message.get("id")?;
    let stateless = message
        .pointer("/params/_meta")
        .and_then(|meta| meta.get(VERSION_KEY))
        .is_some();
    if method == "initialize" || stateless {
        return None;
    }
    Some(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": INVALID_REQUEST,
            "message": format!(
                "\"{method}\" came before the session was opened: send an \"initialize\" request \
                 first (MCP 2025-11-25), or give every request \"_meta\" with \"{VERSION_KEY}\" \
                 and \"io.modelcontextprotocol/clientCapabilities\" (MCP 2026-07-28)"
            ),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_before_initialize_is_answered_with_what_to_send() {
        let answer = refusal(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32600);
        assert_eq!(
            answer["error"]["message"],
            "\"tools/list\" came before the session was opened: send an \"initialize\" request \
             first (MCP 2025-11-25), or give every request \"_meta\" with \
             \"io.modelcontextprotocol/protocolVersion\" and \
             \"io.modelcontextprotocol/clientCapabilities\" (MCP 2026-07-28)"
        );
    }

    #[test]
    fn what_opens_a_session_or_is_no_request_passes() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "not json",
        ] {
            assert_eq!(refusal(line.as_bytes()), None, "{line}");
        }
    }

    #[tokio::test]
    async fn the_session_stays_open_for_the_request_that_opens_it() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n\
                      {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}\nrest\n";
        let mut written = Vec::new();
        let (line, mut reader) = until_open(&input[..], &mut written).await.unwrap();
        assert_eq!(
            line,
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}\n"
        );
        let answers: Vec<Value> = written
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0]["id"], 1);
        let mut rest = String::new();
        reader.read_line(&mut rest).await.unwrap();
        assert_eq!(rest, "rest\n");
    }
}
