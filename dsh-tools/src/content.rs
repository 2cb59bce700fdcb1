//! Content blocks: the model-facing projection of tool results and messages.
//!
//! [`ContentBlock`] is an *open* union keyed by `type`. The core members are typed; any other
//! `type` is kept verbatim in [`ContentBlock::Unknown`] so blocks written by newer producers survive
//! a deserialize/serialize round trip byte-for-byte (key order included). A block whose `type` is a
//! core type but whose fields are malformed is rejected with a message naming the type and field.

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// One block of model-facing content, keyed by `type` on the wire.
///
/// ```
/// use dsh_tools::ContentBlock;
///
/// let block = ContentBlock::text("hello");
/// assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"hello"}"#);
///
/// // Unknown types are kept verbatim, key order included.
/// let raw = r#"{"type":"audio","z":1,"a":[true]}"#;
/// let block: ContentBlock = serde_json::from_str(raw).unwrap();
/// assert_eq!(block.type_name(), "audio");
/// assert_eq!(serde_json::to_string(&block).unwrap(), raw);
///
/// // A malformed core block is an error naming the type and the field.
/// let err = serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).unwrap_err();
/// assert!(err.to_string().starts_with(r#"invalid "text" content block: missing field "text""#));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{"type":"text","text":…}` — plain text.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"reasoning","text":…}` — model reasoning.
    Reasoning {
        /// The reasoning text.
        text: String,
    },
    /// `{"type":"image","attachment":{…}}` — an image stored as an attachment.
    Image {
        /// The attachment reference.
        attachment: ImageAttachmentRef,
    },
    /// `{"type":"tool-call","id":…,"name":…,"arguments":…}` — a model-issued tool call.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments as the raw JSON text the model wrote.
        arguments: String,
    },
    /// `{"type":"tool-result","toolCallId":…,"content":[…],"isError"?:…}` — a tool's result.
    ToolResult {
        /// The id of the call this result answers (wire `toolCallId`).
        tool_call_id: String,
        /// The result content.
        content: Vec<ContentBlock>,
        /// Whether the result is a failure (wire `isError`, omitted when `None`).
        is_error: Option<bool>,
    },
    /// Any other `type`, kept verbatim (the map includes the `type` key itself).
    ///
    /// The map must hold a string `type`; serializing one without it fails. A map whose `type` is
    /// a core type name is written verbatim and reads back as that core variant.
    Unknown(Map<String, Value>),
}

const TEXT: &str = "text";
const REASONING: &str = "reasoning";
const IMAGE: &str = "image";
const TOOL_CALL: &str = "tool-call";
const TOOL_RESULT: &str = "tool-result";

impl ContentBlock {
    /// A `text` block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A `reasoning` block.
    pub fn reasoning(text: impl Into<String>) -> Self {
        Self::Reasoning { text: text.into() }
    }

    /// The text of a `text` block; `None` for every other block (including `reasoning`).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }

    /// The wire `type` of the block (for [`ContentBlock::Unknown`], its `type` string, or `""`
    /// when the map has none).
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text { .. } => TEXT,
            Self::Reasoning { .. } => REASONING,
            Self::Image { .. } => IMAGE,
            Self::ToolCall { .. } => TOOL_CALL,
            Self::ToolResult { .. } => TOOL_RESULT,
            Self::Unknown(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Self::Unknown(map) = self {
            if !map.get("type").is_some_and(Value::is_string) {
                return Err(S::Error::custom(
                    "unknown content block has no string \"type\" field",
                ));
            }
            return map.serialize(serializer);
        }
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("type", self.type_name())?;
        match self {
            Self::Text { text } | Self::Reasoning { text } => out.serialize_entry("text", text)?,
            Self::Image { attachment } => out.serialize_entry("attachment", attachment)?,
            Self::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.serialize_entry("id", id)?;
                out.serialize_entry("name", name)?;
                out.serialize_entry("arguments", arguments)?;
            }
            Self::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                out.serialize_entry("toolCallId", tool_call_id)?;
                out.serialize_entry("content", content)?;
                if let Some(is_error) = is_error {
                    out.serialize_entry("isError", is_error)?;
                }
            }
            Self::Unknown(_) => unreachable!("handled above"),
        }
        out.end()
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        block_from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// The JSON kind of a value, for error messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn block_from_value(value: Value) -> Result<ContentBlock, String> {
    let Value::Object(mut map) = value else {
        return Err(format!(
            "content block must be a JSON object, got {}",
            kind_of(&value)
        ));
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.clone(),
        Some(other) => {
            return Err(format!(
                "content block field \"type\" must be a string, got {}",
                kind_of(other)
            ));
        }
        None => return Err("content block is missing field \"type\"".to_owned()),
    };
    let fields = Fields { map: &map, ty: &ty };
    let block = match ty.as_str() {
        TEXT => ContentBlock::Text {
            text: fields.string("text")?,
        },
        REASONING => ContentBlock::Reasoning {
            text: fields.string("text")?,
        },
        IMAGE => {
            let raw = fields.required("attachment")?.clone();
            let attachment = ImageAttachmentRef::deserialize(raw)
                .map_err(|e| fields.error(format!("field \"attachment\": {e}")))?;
            ContentBlock::Image { attachment }
        }
        TOOL_CALL => ContentBlock::ToolCall {
            id: fields.string("id")?,
            name: fields.string("name")?,
            arguments: fields.string("arguments")?,
        },
        TOOL_RESULT => {
            let tool_call_id = fields.string("toolCallId")?;
            let is_error = match map.get("isError") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(other) => return Err(fields.wrong_type("isError", "a boolean", other)),
            };
            let content = fields.required("content")?;
            if !content.is_array() {
                return Err(fields.wrong_type("content", "an array", content));
            }
            // Take the nested blocks by value so deep nesting is not cloned level by level.
            let items = match map.get_mut("content").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => unreachable!("checked to be an array above"),
            };
            let content = items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    block_from_value(item).map_err(|e| {
                        format!("invalid \"{TOOL_RESULT}\" content block: content[{i}]: {e}")
                    })
                })
                .collect::<Result<_, _>>()?;
            ContentBlock::ToolResult {
                tool_call_id,
                content,
                is_error,
            }
        }
        _ => return Ok(ContentBlock::Unknown(map)),
    };
    Ok(block)
}

/// Field access on a core block, with errors naming the block type and the field.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    ty: &'a str,
}

impl Fields<'_> {
    fn error(&self, detail: String) -> String {
        format!("invalid \"{}\" content block: {detail}", self.ty)
    }

    fn wrong_type(&self, field: &str, expected: &str, got: &Value) -> String {
        self.error(format!(
            "field \"{field}\" must be {expected}, got {}",
            kind_of(got)
        ))
    }

    fn required(&self, field: &str) -> Result<&Value, String> {
        self.map
            .get(field)
            .ok_or_else(|| self.error(format!("missing field \"{field}\"")))
    }

    fn string(&self, field: &str) -> Result<String, String> {
        match self.required(field)? {
            Value::String(s) => Ok(s.clone()),
            other => Err(self.wrong_type(field, "a string", other)),
        }
    }
}

/// A reference to an image stored as an attachment.
///
/// `attachmentId` must be `sha256:` followed by 64 lowercase hex digits; deserialization rejects
/// anything else (see [`ImageAttachmentRef::is_valid_attachment_id`]).
///
/// ```
/// use dsh_tools::content::ImageAttachmentRef;
///
/// let json = format!(
///     r#"{{"attachmentId":"sha256:{}","mediaType":"image/png","bytes":1024,"width":32,"height":16}}"#,
///     "ab".repeat(32)
/// );
/// let image: ImageAttachmentRef = serde_json::from_str(&json).unwrap();
/// assert_eq!((image.width, image.height), (32, 16));
/// assert_eq!(serde_json::to_string(&image).unwrap(), json);
///
/// let bad = json.replace("sha256:ab", "sha256:AB");
/// let err = serde_json::from_str::<ImageAttachmentRef>(&bad).unwrap_err();
/// assert!(err.to_string().contains("invalid attachmentId"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "RawImageAttachmentRef")]
pub struct ImageAttachmentRef {
    /// Content address of the attachment: `sha256:<64 lowercase hex>` (wire `attachmentId`).
    pub attachment_id: String,
    /// The MIME type, e.g. `image/png` (wire `mediaType`).
    pub media_type: String,
    /// Size of the image in bytes.
    pub bytes: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl ImageAttachmentRef {
    /// Whether `id` has the attachment-id form `sha256:<64 lowercase hex digits>`.
    ///
    /// ```
    /// use dsh_tools::content::ImageAttachmentRef;
    /// assert!(ImageAttachmentRef::is_valid_attachment_id(&format!("sha256:{}", "0f".repeat(32))));
    /// assert!(!ImageAttachmentRef::is_valid_attachment_id("sha256:0f"));
    /// ```
    pub fn is_valid_attachment_id(id: &str) -> bool {
        id.strip_prefix("sha256:").is_some_and(|hex| {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    }
}

/// Wire form of [`ImageAttachmentRef`] before the attachment id is validated.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawImageAttachmentRef {
    attachment_id: String,
    media_type: String,
    bytes: u64,
    width: u32,
    height: u32,
}

impl TryFrom<RawImageAttachmentRef> for ImageAttachmentRef {
    type Error = String;

    fn try_from(raw: RawImageAttachmentRef) -> Result<Self, String> {
        if !Self::is_valid_attachment_id(&raw.attachment_id) {
            return Err(format!(
                "invalid attachmentId {:?}: expected \"sha256:\" followed by 64 lowercase hex digits",
                raw.attachment_id
            ));
        }
        Ok(Self {
            attachment_id: raw.attachment_id,
            media_type: raw.media_type,
            bytes: raw.bytes,
            width: raw.width,
            height: raw.height,
        })
    }
}

/// A user message that enters the conversation outside the model's turn: deferred by a tool
/// (`deferContext`) or attached by a policy (`additionalContexts`).
///
/// ```
/// use dsh_tools::content::{ContentBlock, ContextMessage, ContextSource};
///
/// let msg = ContextMessage {
///     content: vec![ContentBlock::text("lint: 2 warnings")],
///     source: Some(ContextSource { kind: "policy".into(), plugin: Some("lint".into()) }),
/// };
/// let json = r#"{"content":[{"type":"text","text":"lint: 2 warnings"}],"source":{"kind":"policy","plugin":"lint"}}"#;
/// assert_eq!(serde_json::to_string(&msg).unwrap(), json);
/// assert_eq!(serde_json::from_str::<ContextMessage>(json).unwrap(), msg);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextMessage {
    /// The message content.
    pub content: Vec<ContentBlock>,
    /// Where the message came from (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ContextSource>,
}

/// Attribution of a [`ContextMessage`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContextSource {
    /// What produced the message (e.g. `tool`, `policy`).
    pub kind: String,
    /// The plugin that produced it (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

/// The durable result handed to a result presenter: `{content, isError, meta?}`.
///
/// `meta` is the tool's opaque presentation payload; a present `null` is kept as `Some(Null)`.
///
/// ```
/// use dsh_tools::{ContentBlock, ToolResult};
///
/// let result = ToolResult {
///     content: vec![ContentBlock::text("ok")],
///     is_error: false,
///     meta: Some(serde_json::json!({"exit": 0})),
/// };
/// let json = r#"{"content":[{"type":"text","text":"ok"}],"isError":false,"meta":{"exit":0}}"#;
/// assert_eq!(serde_json::to_string(&result).unwrap(), json);
/// assert_eq!(serde_json::from_str::<ToolResult>(json).unwrap(), result);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The model-facing content.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The tool's presentation payload (omitted when `None`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub meta: Option<Value>,
}

/// Deserializes a present field as `Some(value)`, keeping an explicit `null` as `Some(Null)`.
/// Pair with `#[serde(default)]` so an absent field is `None`.
pub(crate) fn present_json<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}
