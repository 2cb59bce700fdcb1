//! Pure rules of the MCP import (`docs/CONTRACTS.md`, "MCP"): public names, server names, the
//! output schema, result interpretation and every render text.
#![cfg(feature = "mcp")]

use dsh_tools_runtime::mcp::{
    McpOutcome, interpret_call_result, is_valid_server_name, mcp_output_schema, public_tool_name,
    render_mcp_content,
};
use serde_json::{Value, json};

/// `<first 51 chars of the normalised name>_<first 12 hex of sha256(server \0 raw)>`.
fn hashed(normalized: &str, hash12: &str) -> String {
    format!("{}_{hash12}", &normalized[..normalized.len().min(51)])
}

#[test]
fn clean_names_are_kept_verbatim_up_to_64_characters() {
    assert_eq!(
        public_tool_name("fs", "read_text_file"),
        "mcp__fs__read_text_file"
    );
    assert_eq!(
        public_tool_name("ev", "get-tiny-image"),
        "mcp__ev__get-tiny-image"
    );
    let raw = "x".repeat(64 - "mcp__s__".len());
    assert_eq!(public_tool_name("s", &raw), format!("mcp__s__{raw}"));
}

#[test]
fn replaced_characters_append_the_identity_hash() {
    // sha256("s\0a.b") starts 407e8e5cd262, computed independently with `printf 's\0a.b' | sha256sum`.
    assert_eq!(
        public_tool_name("s", "a.b"),
        hashed("mcp__s__a_b", "407e8e5cd262")
    );
    // One `_` per UTF-16 code unit, as JavaScript replaces: `é` is one unit, `😀` two.
    let accent = public_tool_name("s", "é");
    assert!(
        accent.starts_with("mcp__s___") && accent.len() == "mcp__s___".len() + 13,
        "{accent}"
    );
    let emoji = public_tool_name("s", "😀");
    assert!(
        emoji.starts_with("mcp__s____") && emoji.len() == "mcp__s____".len() + 13,
        "{emoji}"
    );
    // Names that normalise alike stay apart through the hash.
    assert_ne!(public_tool_name("s", "a.b"), public_tool_name("s", "a b"));
}

#[test]
fn long_names_are_cut_to_51_characters_plus_the_hash() {
    let raw = "x".repeat(64 - "mcp__s__".len() + 1);
    let name = public_tool_name("s", &raw);
    assert_eq!(name.len(), 64);
    assert_eq!(&name[..51], &format!("mcp__s__{raw}")[..51]);
    assert_eq!(name.as_bytes()[51], b'_');
    assert!(
        name[52..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    // A pure function of (server, raw).
    assert_eq!(name, public_tool_name("s", &raw));
    assert_ne!(name, public_tool_name("t", &raw));
}

#[test]
fn server_names_are_1_to_32_of_letters_digits_underscore_and_dash() {
    for ok in ["a", "fs", "my-server_2", &"z".repeat(32)] {
        assert!(is_valid_server_name(ok), "{ok}");
    }
    for bad in ["", "a b", "a.b", "ü", &"z".repeat(33)] {
        assert!(!is_valid_server_name(bad), "{bad}");
    }
}

#[test]
fn the_output_schema_follows_the_reference() {
    assert_eq!(
        mcp_output_schema(None),
        json!({"type": "object", "properties": {"content": {"type": "array", "items": {}}, "structuredContent": {}}, "required": ["content"], "additionalProperties": false})
    );
    let supported =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    assert_eq!(
        mcp_output_schema(Some(&supported)),
        json!({"type": "object", "properties": {"content": {"type": "array", "items": {}}, "structuredContent": supported}, "required": ["content", "structuredContent"], "additionalProperties": false})
    );
    let unsupported =
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}});
    assert_eq!(
        mcp_output_schema(Some(&unsupported))["required"],
        json!(["content"])
    );
}

#[test]
fn call_results_become_values_or_errors() {
    let structured = json!({"content": [], "structuredContent": {"a": 1}});
    assert_eq!(
        interpret_call_result("t", &structured),
        McpOutcome::Value(structured.clone())
    );
    assert_eq!(
        interpret_call_result("t", &json!({})),
        McpOutcome::Value(json!({"content": []}))
    );
    assert_eq!(
        interpret_call_result("t", &json!({"content": [], "isError": true})),
        McpOutcome::Error("(t returned no model-visible content)".into())
    );
    assert_eq!(
        interpret_call_result("t", &json!({"toolResult": [1, "x"]})),
        McpOutcome::Value(json!({"content": [{"type": "text", "text": "[1,\"x\"]"}]}))
    );
}

fn render(blocks: Value) -> String {
    render_mcp_content("tool", blocks.as_array().unwrap())
}

#[test]
fn every_render_text_of_the_reference() {
    assert_eq!(
        render(json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])),
        "a\nb"
    );
    assert_eq!(
        render(json!([{"type": "resource_link", "name": "readme", "uri": "file:///r.md"}])),
        "Resource link: readme (file:///r.md)"
    );
    assert_eq!(
        render(json!([{"type": "resource_link", "uri": "file:///r.md"}])),
        "[resource link unavailable: the MCP block is missing its name or URI]"
    );
    assert_eq!(
        render(json!([{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}])),
        "[audio result unsupported: audio/wav; raw audio data remains available to programmatic callers]"
    );
    assert_eq!(
        render(json!([{"type": "audio", "data": "AAAA"}])),
        "[audio result unsupported: unknown media type; raw audio data remains available to programmatic callers]"
    );
    assert_eq!(
        render(json!([{"type": "resource", "resource": {"uri": "x:", "text": "t"}}])),
        "[embedded resource unsupported; raw resource data remains available to programmatic callers]"
    );
    assert_eq!(
        render(json!([{"type": "video"}])),
        "[unsupported MCP content type: video]"
    );
    assert_eq!(
        render(json!([{"kind": "text"}])),
        "[unsupported MCP content type: undefined]"
    );
    assert_eq!(
        render(json!(["text"])),
        "[unsupported MCP content block: expected an object]"
    );
    assert_eq!(
        render(json!([{"type": "image", "data": "iVBO", "mimeType": "image/png"}])),
        "[image unavailable: image/png; this result was not admitted to durable model context; raw image data remains available to programmatic callers]"
    );
    assert_eq!(
        render(json!([{"type": "image", "data": "iVBO"}])),
        "[image unavailable: unknown media type; this result was not admitted to durable model context; raw image data remains available to programmatic callers]"
    );
    assert_eq!(
        render(json!([])),
        "(tool returned no model-visible content)"
    );
    // A text block without text shows nothing; an empty text is still a piece.
    assert_eq!(
        render(json!([{"type": "text"}])),
        "(tool returned no model-visible content)"
    );
    assert_eq!(render(json!([{"type": "text", "text": ""}])), "");
    // Order is kept across kinds.
    assert_eq!(
        render(
            json!([{"type": "text", "text": "see"}, {"type": "resource_link", "name": "n", "uri": "u"}, {"type": "text", "text": "end"}])
        ),
        "see\nResource link: n (u)\nend"
    );
}
