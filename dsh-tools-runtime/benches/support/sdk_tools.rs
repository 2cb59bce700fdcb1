//! The tool set of the `sdk` bench, shared with the `sdk200` probe of
//! `examples/per_call.rs`: `n` tools alternating a Rust-style and an MCP-style parameter
//! schema, each with the same shape of output, in a shuffled name order.

use dsh_tools_runtime::code::sdk::SdkTool;
use serde_json::{Value, json};

fn rust_style(i: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": format!("The file to read for step {i}: absolute, or relative to the current directory.")},
            "offset": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 9_007_199_254_740_991_u64}, {"type": "null"}], "description": "The first line to return, 1-based (default 1)."},
            "limit": {"oneOf": [{"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64}, {"type": "null"}], "description": "The maximum number of lines to return."},
            "recursive": {"oneOf": [{"type": "boolean"}, {"type": "null"}]}
        },
        "required": ["path"]
    })
}

/// An MCP-style parameter schema (a draft-07 `$schema`, closed objects, type arrays).
pub(crate) fn mcp_style(i: usize) -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": format!("Search query number {i} (max 400 chars)"), "maxLength": 400},
            "mode": {"type": "string", "enum": ["fast", "thorough", "exhaustive"]},
            "filters": {"type": "array", "items": {"type": "object", "properties": {
                "field": {"type": "string"},
                "value": {"type": ["string", "number", "null"]}
            }, "required": ["field", "value"], "additionalProperties": false}},
            "count": {"type": "number", "minimum": 1, "maximum": 20, "default": 10}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

fn output(i: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "score": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}}
            }, "required": ["name", "score", "tags"], "additionalProperties": false}},
            "total": {"type": "integer"},
            "next": {"oneOf": [{"type": "string"}, {"type": "null"}], "description": format!("Cursor {i}")}
        },
        "required": ["id", "items", "total", "next"],
        "additionalProperties": false
    })
}

/// The bench's `n` tools.
pub(crate) fn tools(n: usize) -> Vec<SdkTool> {
    (0..n)
        .map(|i| SdkTool {
            name: format!("tool_{:04}", (i * 7919) % n.max(1)),
            description: format!(
                "Tool number {i}: does one thing well and explains it in a sentence or two."
            ),
            parameters: if i % 2 == 0 {
                rust_style(i)
            } else {
                mcp_style(i)
            },
            output: output(i),
        })
        .collect()
}
