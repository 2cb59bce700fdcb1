//! Wire shape of content blocks, context messages and presenter results.

use dsh_tools::content::{
    ContentBlock, ContextMessage, ContextSource, ImageAttachmentRef, ToolResult,
};
use serde_json::{Value, json};

fn id(hex_pair: &str) -> String {
    format!("sha256:{}", hex_pair.repeat(32))
}

/// Serializes to exactly `json` and reads `json` back to an equal value.
fn exact<T>(value: &T, json: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_string(value).unwrap(), json);
    assert_eq!(&serde_json::from_str::<T>(json).unwrap(), value);
}

/// Reads `json` and writes it back byte-for-byte.
fn verbatim(json: &str) -> ContentBlock {
    let block: ContentBlock = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&block).unwrap(), json);
    block
}

fn reject(json: &str) -> String {
    serde_json::from_str::<ContentBlock>(json)
        .unwrap_err()
        .to_string()
}

#[test]
fn text_and_reasoning_blocks() {
    exact(&ContentBlock::text("hi"), r#"{"type":"text","text":"hi"}"#);
    exact(
        &ContentBlock::reasoning("hmm"),
        r#"{"type":"reasoning","text":"hmm"}"#,
    );
}

#[test]
fn image_block() {
    let block = ContentBlock::Image {
        attachment: ImageAttachmentRef {
            attachment_id: id("a1"),
            media_type: "image/png".into(),
            bytes: 5_000_000_000,
            width: 640,
            height: 480,
        },
    };
    let json = format!(
        r#"{{"type":"image","attachment":{{"attachmentId":"{}","mediaType":"image/png","bytes":5000000000,"width":640,"height":480}}}}"#,
        id("a1")
    );
    exact(&block, &json);
}

#[test]
fn tool_call_block() {
    let block = ContentBlock::ToolCall {
        id: "call_1".into(),
        name: "grep".into(),
        arguments: r#"{"pattern":"fn"}"#.into(),
    };
    exact(
        &block,
        r#"{"type":"tool-call","id":"call_1","name":"grep","arguments":"{\"pattern\":\"fn\"}"}"#,
    );
}

#[test]
fn tool_result_block_omits_absent_is_error() {
    let mut block = ContentBlock::ToolResult {
        tool_call_id: "call_1".into(),
        content: vec![ContentBlock::text("3 matches")],
        is_error: None,
    };
    exact(
        &block,
        r#"{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"3 matches"}]}"#,
    );
    if let ContentBlock::ToolResult { is_error, .. } = &mut block {
        *is_error = Some(true);
    }
    exact(
        &block,
        r#"{"type":"tool-result","toolCallId":"call_1","content":[{"type":"text","text":"3 matches"}],"isError":true}"#,
    );
}

#[test]
fn known_block_keys_may_arrive_in_any_order() {
    let block: ContentBlock =
        serde_json::from_str(r#"{"arguments":"{}","name":"n","type":"tool-call","id":"1"}"#)
            .unwrap();
    assert_eq!(
        serde_json::to_string(&block).unwrap(),
        r#"{"type":"tool-call","id":"1","name":"n","arguments":"{}"}"#
    );
}

#[test]
fn unknown_blocks_round_trip_verbatim() {
    let block = verbatim(
        r#"{"z":{"y":1,"b":[null,false,0.5,-3,"s"]},"type":"audio","a":{"attachmentId":"x"}}"#,
    );
    assert_eq!(block.type_name(), "audio");
    assert_eq!(block.as_text(), None);
    assert!(matches!(block, ContentBlock::Unknown(_)));
}

#[test]
fn unknown_blocks_round_trip_nested_in_tool_results() {
    let json = r#"{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"a"},{"type":"resource","uri":"file:///x","meta":{"z":1,"a":2}},{"type":"tool-result","toolCallId":"d","content":[{"type":"x-custom","k2":1,"k1":2}],"isError":false}]}"#;
    let block = verbatim(json);
    let ContentBlock::ToolResult { content, .. } = &block else {
        panic!("expected a tool-result, got {block:?}");
    };
    assert_eq!(content[1].type_name(), "resource");
    let ContentBlock::ToolResult { content: inner, .. } = &content[2] else {
        panic!("expected a nested tool-result");
    };
    assert_eq!(inner[0].type_name(), "x-custom");
}

#[test]
fn unknown_blocks_round_trip_inside_context_messages() {
    exact(
        &serde_json::from_str::<ContextMessage>(
            r#"{"content":[{"type":"file","path":"a","b":1}]}"#,
        )
        .unwrap(),
        r#"{"content":[{"type":"file","path":"a","b":1}]}"#,
    );
}

#[test]
fn deeply_nested_tool_results_round_trip() {
    let mut json = r#"{"type":"later","q":1}"#.to_owned();
    for depth in 0..60 {
        json = format!(r#"{{"type":"tool-result","toolCallId":"{depth}","content":[{json}]}}"#);
    }
    verbatim(&json);
}

#[test]
fn unknown_block_without_string_type_cannot_be_serialized() {
    let block = ContentBlock::Unknown(json!({"kind": "x"}).as_object().unwrap().clone());
    let err = serde_json::to_string(&block).unwrap_err().to_string();
    assert_eq!(err, r#"unknown content block has no string "type" field"#);
    assert_eq!(block.type_name(), "");
}

#[test]
fn malformed_core_blocks_are_rejected_naming_type_and_field() {
    let cases = [
        (
            r#"{"type":"text"}"#,
            r#"invalid "text" content block: missing field "text""#,
        ),
        (
            r#"{"type":"text","text":7}"#,
            r#"invalid "text" content block: field "text" must be a string, got number"#,
        ),
        (
            r#"{"type":"reasoning","text":null}"#,
            r#"invalid "reasoning" content block: field "text" must be a string, got null"#,
        ),
        (
            r#"{"type":"tool-call","id":"1","name":"n","arguments":{}}"#,
            r#"invalid "tool-call" content block: field "arguments" must be a string, got object"#,
        ),
        (
            r#"{"type":"tool-call","id":"1","arguments":"{}"}"#,
            r#"invalid "tool-call" content block: missing field "name""#,
        ),
        (
            r#"{"type":"tool-result","content":[]}"#,
            r#"invalid "tool-result" content block: missing field "toolCallId""#,
        ),
        (
            r#"{"type":"tool-result","toolCallId":"c"}"#,
            r#"invalid "tool-result" content block: missing field "content""#,
        ),
        (
            r#"{"type":"tool-result","toolCallId":"c","content":"text"}"#,
            r#"invalid "tool-result" content block: field "content" must be an array, got string"#,
        ),
        (
            r#"{"type":"tool-result","toolCallId":"c","content":[],"isError":"yes"}"#,
            r#"invalid "tool-result" content block: field "isError" must be a boolean, got string"#,
        ),
        (
            r#"{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"ok"},{"type":"text"}]}"#,
            r#"invalid "tool-result" content block: content[1]: invalid "text" content block: missing field "text""#,
        ),
        (
            r#"{"type":"image"}"#,
            r#"invalid "image" content block: missing field "attachment""#,
        ),
        (
            r#"{"text":"hi"}"#,
            r#"content block is missing field "type""#,
        ),
        (
            r#"{"type":3,"text":"hi"}"#,
            r#"content block field "type" must be a string, got number"#,
        ),
        (r#""hi""#, "content block must be a JSON object, got string"),
    ];
    for (json, expected) in cases {
        let err = reject(json);
        assert!(
            err.starts_with(expected),
            "for {json}\n  got:      {err}\n  expected: {expected}"
        );
    }
}

#[test]
fn image_attachment_ids_are_validated() {
    let image = |attachment_id: &str| {
        format!(
            r#"{{"type":"image","attachment":{{"attachmentId":"{attachment_id}","mediaType":"image/png","bytes":1,"width":1,"height":1}}}}"#
        )
    };
    verbatim(&image(&id("09")));
    verbatim(&image(&id("af")));
    for bad in [
        id("AF"),
        id("0g"),
        format!("sha256:{}", "0".repeat(63)),
        format!("sha256:{}", "0".repeat(65)),
        format!("sha512:{}", "0".repeat(64)),
        "0".repeat(64),
        String::new(),
    ] {
        let err = reject(&image(&bad));
        let expected = format!(
            r#"invalid "image" content block: field "attachment": invalid attachmentId "{bad}": expected "sha256:" followed by 64 lowercase hex digits"#
        );
        assert!(err.starts_with(&expected), "got: {err}");
        assert!(!ImageAttachmentRef::is_valid_attachment_id(&bad));
    }
    assert!(ImageAttachmentRef::is_valid_attachment_id(&id("7e")));
}

#[test]
fn image_attachment_fields_are_checked() {
    let err = reject(&format!(
        r#"{{"type":"image","attachment":{{"attachmentId":"{}","mediaType":"image/png","bytes":1,"width":-1,"height":1}}}}"#,
        id("00")
    ));
    assert!(
        err.starts_with(
            r#"invalid "image" content block: field "attachment": invalid value: integer `-1`"#
        ),
        "got: {err}"
    );
}

#[test]
fn helpers() {
    assert_eq!(ContentBlock::text("a").as_text(), Some("a"));
    assert_eq!(ContentBlock::reasoning("a").as_text(), None);
    assert_eq!(ContentBlock::reasoning("a").type_name(), "reasoning");
    let call = ContentBlock::ToolCall {
        id: "1".into(),
        name: "n".into(),
        arguments: "{}".into(),
    };
    assert_eq!(call.type_name(), "tool-call");
}

#[test]
fn context_messages() {
    exact(
        &ContextMessage {
            content: vec![ContentBlock::text("note")],
            source: None,
        },
        r#"{"content":[{"type":"text","text":"note"}]}"#,
    );
    exact(
        &ContextMessage {
            content: vec![],
            source: Some(ContextSource {
                kind: "tool".into(),
                plugin: None,
            }),
        },
        r#"{"content":[],"source":{"kind":"tool"}}"#,
    );
    exact(
        &ContextMessage {
            content: vec![ContentBlock::text("lint")],
            source: Some(ContextSource {
                kind: "policy".into(),
                plugin: Some("lint".into()),
            }),
        },
        r#"{"content":[{"type":"text","text":"lint"}],"source":{"kind":"policy","plugin":"lint"}}"#,
    );
}

#[test]
fn tool_results() {
    let mut result = ToolResult {
        content: vec![ContentBlock::text("boom")],
        is_error: true,
        meta: None,
    };
    exact(
        &result,
        r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#,
    );
    result.meta = Some(json!({"z": [1], "a": {"b": null}}));
    exact(
        &result,
        r#"{"content":[{"type":"text","text":"boom"}],"isError":true,"meta":{"z":[1],"a":{"b":null}}}"#,
    );
    // An explicit null meta is data, not absence.
    result.meta = Some(Value::Null);
    exact(
        &result,
        r#"{"content":[{"type":"text","text":"boom"}],"isError":true,"meta":null}"#,
    );
    let err =
        serde_json::from_str::<ToolResult>(r#"{"content":[{"type":"text"}],"isError":false}"#)
            .unwrap_err()
            .to_string();
    assert!(
        err.starts_with(r#"invalid "text" content block: missing field "text""#),
        "got: {err}"
    );
}
