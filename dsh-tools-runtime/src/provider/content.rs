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
/// anything else as the JSON text of the block (carried, not dropped).
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
            other => Piece::Text(
                serde_json::to_string(other)
                    .unwrap_or_else(|_| format!("[{} content]", other.type_name())),
            ),
        })
        .collect()
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
