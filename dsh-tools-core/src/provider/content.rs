//! Content blocks as the pieces a provider message can carry: text and images.

use dsh_tools::ContentBlock;
use dsh_tools::content::ImageAttachmentRef;

/// Where the bytes of image attachments come from. A result's [`ContentBlock::Image`] holds a
/// reference to an attachment the host stores; to send the image to a provider, the host
/// resolves the reference to base64 data.
///
/// Without a source (or when it has no data for an attachment) the image is sent as a text line
/// naming the attachment, never silently dropped.
///
/// ```
/// use dsh_tools::content::ImageAttachmentRef;
/// use dsh_tools_runtime::provider::ImageSource;
///
/// struct OnePixel;
/// impl ImageSource for OnePixel {
///     fn image_base64(&self, _attachment: &ImageAttachmentRef) -> Option<String> {
///         Some("iVBORw0KGgo=".into())
///     }
/// }
/// ```
pub trait ImageSource: Send + Sync {
    /// The attachment's bytes, base64-encoded (standard alphabet, padded), if the host has them.
    fn image_base64(&self, attachment: &ImageAttachmentRef) -> Option<String>;
}

/// One piece of a tool result or context message.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    Text(String),
    Image { media_type: String, base64: String },
}

impl Piece {
    /// The `data:` URL of an image (OpenAI's form).
    pub(super) fn data_url(media_type: &str, base64: &str) -> String {
        format!("data:{media_type};base64,{base64}")
    }
}

/// The pieces of `blocks`: text as text (reasoning included), images resolved through `images`,
/// image blocks in MCP's shape as images, anything else as the JSON text of the block (carried,
/// not dropped).
pub(super) fn pieces(blocks: &[ContentBlock], images: Option<&dyn ImageSource>) -> Vec<Piece> {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } | ContentBlock::Reasoning { text } => {
                Piece::Text(text.clone())
            }
            ContentBlock::Image { attachment } => {
                match images.and_then(|source| source.image_base64(attachment)) {
                    Some(base64) => Piece::Image {
                        media_type: attachment.media_type.clone(),
                        base64,
                    },
                    None => Piece::Text(format!(
                        "[image {} ({}, {}x{}): its data is not available to this turn]",
                        attachment.attachment_id,
                        attachment.media_type,
                        attachment.width,
                        attachment.height
                    )),
                }
            }
            other => other_piece(other),
        })
        .collect()
}

/// A block that is neither text nor an image attachment: an MCP-shaped image as an image,
/// anything else as its JSON text.
fn other_piece(block: &ContentBlock) -> Piece {
    if let ContentBlock::Unknown(map) = block
        && let Some((media_type, base64)) = mcp_image(map)
    {
        return Piece::Image {
            media_type: media_type.to_owned(),
            base64: base64.to_owned(),
        };
    }
    Piece::Text(
        serde_json::to_string(block).unwrap_or_else(|_| format!("[{} content]", block.type_name())),
    )
}

/// The media type and data of an image block in MCP's shape (`{"type": "image", "data",
/// "mimeType": "image/…"}`, as a tool relays MCP content), if `block` is one.
fn mcp_image(block: &serde_json::Map<String, serde_json::Value>) -> Option<(&str, &str)> {
    let field = |key: &str| block.get(key).and_then(serde_json::Value::as_str);
    let media_type = field("mimeType").filter(|m| m.starts_with("image/"))?;
    let data = field("data").filter(|d| !d.is_empty())?;
    (field("type") == Some("image")).then_some((media_type, data))
}

/// The text pieces joined by newlines (what a text-only slot receives).
pub(super) fn joined_text(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Text(text) => Some(text.as_str()),
            Piece::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether any piece is an image.
pub(super) fn has_images(pieces: &[Piece]) -> bool {
    pieces.iter().any(|p| matches!(p, Piece::Image { .. }))
}
