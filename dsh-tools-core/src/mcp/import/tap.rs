//! Reads `execution.taskSupport` of listed tools off the raw stdio stream.
//!
//! rmcp 3.11's typed `Tool` has no `execution` field, so the declaration that a tool *requires*
//! task-based execution (`docs/CONTRACTS.md`, "MCP") is lost once a `tools/list` response is
//! decoded. For byte-stream transports this reader sees each newline-delimited JSON-RPC message
//! before rmcp decodes it and records the task support of every listed tool, so the sync that
//! awaits the decoded response finds the record already there.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// Lines longer than this are not inspected (they still pass through untouched).
const MAX_LINE: usize = 64 * 1024 * 1024;

/// The raw tool names a server declared with `execution.taskSupport == "required"`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskSupport(Arc<Mutex<HashMap<String, bool>>>);

impl TaskSupport {
    /// Whether the last listing declared `raw` task-required.
    pub(crate) fn requires_task(&self, raw: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(raw)
            .copied()
            .unwrap_or(false)
    }

    fn record(&self, line: &[u8]) {
        // Cheap pre-filter: only tool listings are parsed.
        if !contains(line, b"\"tools\"") {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(tools) = message
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let required = tool
                    .get("execution")
                    .and_then(|e| e.get("taskSupport"))
                    .and_then(Value::as_str)
                    == Some("required");
                map.insert(name.to_owned(), required);
            }
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// An [`AsyncRead`] that passes bytes through and records tool listings line by line.
pub(crate) struct TapReader<R> {
    inner: R,
    line: Vec<u8>,
    overflow: bool,
    support: TaskSupport,
}

impl<R> TapReader<R> {
    pub(crate) fn new(inner: R, support: TaskSupport) -> Self {
        Self {
            inner,
            line: Vec::new(),
            overflow: false,
            support,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let complete = chunk.last() == Some(&b'\n');
            if !self.overflow {
                if self.line.len() + chunk.len() > MAX_LINE {
                    self.overflow = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            if complete {
                if !self.overflow {
                    self.support.record(&self.line);
                }
                self.line.clear();
                self.overflow = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            this.feed(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_task_support_across_split_reads() {
        let support = TaskSupport::default();
        let mut tap = TapReader::new(tokio::io::empty(), support.clone());
        let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b"}]}}"#;
        let (head, tail) = line.split_at(20);
        tap.feed(head);
        assert!(!support.requires_task("a"));
        tap.feed(tail);
        tap.feed(b"\n");
        assert!(support.requires_task("a"));
        assert!(!support.requires_task("b"));
    }
}
