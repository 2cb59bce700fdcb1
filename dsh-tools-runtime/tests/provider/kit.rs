//! The tools and image store of the provider-turn tests.

#![allow(dead_code, reason = "each test binary uses a part of the kit")]

use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::content::ImageAttachmentRef;
use dsh_tools::{ContentBlock, ContextMessage, ToolDefinition, ToolError};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::provider::ImageSource;
use serde_json::{Value, json};

/// A 1x1 red PNG.
pub(crate) const RED_DOT_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The attachment the `picture` tool returns.
pub(crate) fn red_dot() -> ImageAttachmentRef {
    ImageAttachmentRef {
        attachment_id: format!("sha256:{}", "ab".repeat(32)),
        media_type: "image/png".into(),
        bytes: 70,
        width: 1,
        height: 1,
    }
}

/// The host's attachment store: knows the red dot.
pub(crate) struct Store;

impl ImageSource for Store {
    fn image_base64(&self, attachment: &ImageAttachmentRef) -> Option<String> {
        (attachment == &red_dot()).then(|| RED_DOT_PNG.to_owned())
    }
}

/// The bodies that ran, in the order they started.
#[derive(Clone, Default)]
pub(crate) struct Ran(Arc<Mutex<Vec<String>>>);

impl Ran {
    pub(crate) fn push(&self, entry: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(entry);
    }
    pub(crate) fn list(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// `echo` (parallel-safe; `repeat` is optional and not nullable), `picture` (an image result),
/// `fail` (always fails), `note` (defers a context message), `shout` (exclusive).
pub(crate) fn registry(ran: &Ran) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let log = ran.clone();
    let echo = ToolDefinition::builder("echo")
        .description("Echo the text.")
        .parameters_json(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "repeat": {"type": "integer", "minimum": 1}},
            "required": ["text"],
            "additionalProperties": false
        }))
        .output_json(json!({"type": "string"}))
        .concurrency_safe(true)
        .execute(move |args, _| {
            let log = log.clone();
            async move {
                let text = args["text"].as_str().unwrap_or_default().to_owned();
                log.push(format!("echo:{text}"));
                let repeat = args.get("repeat").and_then(Value::as_u64).unwrap_or(1);
                Ok(json!(text.repeat(repeat as usize)))
            }
        });
    let log = ran.clone();
    let picture = ToolDefinition::builder("picture")
        .description("Draw a red dot.")
        .render(|_, _| {
            vec![
                ContentBlock::text("a red dot"),
                ContentBlock::Image {
                    attachment: red_dot(),
                },
            ]
        })
        .concurrency_safe(true)
        .execute(move |_, _| {
            let log = log.clone();
            async move {
                log.push("picture".into());
                Ok(json!({"drawn": true}))
            }
        });
    let log = ran.clone();
    let fail = ToolDefinition::builder("fail")
        .description("Fail with the reason.")
        .parameters_json(json!({"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}))
        .execute(move |args, _| {
            let log = log.clone();
            async move {
                log.push("fail".into());
                Err(ToolError::msg(args["reason"].as_str().unwrap_or_default()))
            }
        });
    let log = ran.clone();
    let note = ToolDefinition::builder("note")
        .description("Note the text for later.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .execute(move |args, ctx| {
            let log = log.clone();
            async move {
                log.push("note".into());
                let text = args["text"].as_str().unwrap_or_default();
                ctx.defer_context(ContextMessage {
                    content: vec![ContentBlock::text(format!("note: {text}"))],
                    source: None,
                });
                Ok(json!("noted"))
            }
        });
    for tool in [echo, picture, fail, note] {
        registry.register(tool.build().unwrap()).unwrap().keep();
    }
    registry
}

/// A fixture of `tests/fixtures/provider/`.
pub(crate) fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/provider/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}
