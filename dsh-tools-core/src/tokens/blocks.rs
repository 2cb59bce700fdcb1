//! One result's content blocks cut to one budget (`docs/CONTRACTS.md`, "Result budgets"): the
//! text blocks share the budget, smallest first; a text that is a JSON document stays one.

use dsh_tools::ContentBlock;
use dsh_tools::json::ResultJson;
use serde_json::Value;

use super::budget::{cut_text, fit_json, fits};
use super::count;

/// JSON texts longer than this are cut as text (parsing them would cost several times their
/// size in memory).
const JSON_PARSE_LIMIT: usize = 16 << 20;

/// How often a JSON text is cut again with a smaller budget when its rendering (pretty, as it
/// came) is over the budget its compact form fitted.
const JSON_ATTEMPTS: usize = 6;

/// Cuts the `text` blocks of `content` so that together they fit `max_tokens`; returns whether
/// anything changed. Other blocks (images, unknown types) pass untouched.
///
/// Content whose text is at most `max_tokens` bytes is not looked at further (a token is at
/// least one byte). Over that, the blocks share the budget smallest first: a block within its
/// share stays as it is and leaves the rest to the larger ones. A block whose text is a JSON
/// object or array is cut by [`fit_json`] and rendered as it came (pretty or compact), so it
/// stays valid JSON; any other text by [`fit_text`](super::budget::fit_text), with `hint` in its
/// marker.
///
/// ```
/// use dsh_tools::ContentBlock;
/// use dsh_tools_runtime::tokens::budget::fit_content;
///
/// let rows: Vec<u32> = (0..10_000).collect();
/// let mut content = vec![
///     ContentBlock::text("10000 rows:"),
///     ContentBlock::text(serde_json::to_string_pretty(&rows).unwrap()),
/// ];
/// assert!(fit_content(&mut content, 500, None));
/// assert_eq!(content[0].as_text(), Some("10000 rows:"));
/// let cut: serde_json::Value = serde_json::from_str(content[1].as_text().unwrap()).unwrap();
/// assert!(cut.as_array().unwrap().last().unwrap().as_str().unwrap().ends_with("items of 10000 cut …]"));
/// ```
pub fn fit_content(content: &mut [ContentBlock], max_tokens: usize, hint: Option<&str>) -> bool {
    let total: usize = content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(str::len)
        .sum();
    if total <= max_tokens {
        return false;
    }
    let mut texts: Vec<(usize, &mut String)> = content
        .iter_mut()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        })
        .enumerate()
        .collect();
    if let [(_, text)] = &mut texts[..] {
        if fits(text, max_tokens) {
            return false;
        }
        replace(text, max_tokens, hint);
        return true;
    }
    texts.sort_by_key(|(i, text)| (text.len(), *i));
    let mut left = max_tokens;
    let mut blocks = texts.len();
    let mut changed = false;
    for (_, text) in texts {
        let share = left / blocks;
        blocks -= 1;
        if text.len() <= share {
            left -= text.len();
            continue;
        }
        if text.len() <= share * 16 {
            let tokens = count(text);
            if tokens <= share {
                left -= tokens;
                continue;
            }
        }
        replace(text, share, hint);
        changed = true;
        left -= share;
    }
    changed
}

/// Cuts `text`, known not to fit `max_tokens`, in place (it is counted no more).
fn replace(text: &mut String, max_tokens: usize, hint: Option<&str>) {
    *text = match fit_json_text(text, max_tokens) {
        Some(cut) => cut,
        None => cut_text(text, max_tokens, hint),
    };
}

/// A JSON object or array text, known not to fit, within `max_tokens`, rendered as it came;
/// `None` when `text` is not one (or is too long to parse, or cannot be made to fit).
fn fit_json_text(text: &str, max_tokens: usize) -> Option<String> {
    let start = text.trim_start().as_bytes().first()?;
    if !matches!(start, b'{' | b'[') || text.len() > JSON_PARSE_LIMIT {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let layout = if text.contains('\n') {
        ResultJson::Pretty
    } else {
        ResultJson::Compact
    };
    let mut target = max_tokens;
    for _ in 0..JSON_ATTEMPTS {
        let cut = fit_json(&value, target);
        let rendered = layout.render(&cut);
        if fits(&rendered, max_tokens) {
            return Some(rendered);
        }
        target = target * 2 / 3;
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn small_content_is_untouched() {
        let mut content = vec![ContentBlock::text("ok"), ContentBlock::text("fine")];
        assert!(!fit_content(&mut content, 10, None));
        assert_eq!(content[1].as_text(), Some("fine"));
    }

    #[test]
    fn blocks_share_the_budget_smallest_first() {
        let big = "word ".repeat(20_000);
        let mut content = vec![
            ContentBlock::text(big.clone()),
            ContentBlock::text("a short note"),
            ContentBlock::text(big),
        ];
        assert!(fit_content(&mut content, 1_000, Some("ask again")));
        assert_eq!(content[1].as_text(), Some("a short note"));
        let total: usize = content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(count)
            .sum();
        assert!(total <= 1_000, "{total}");
        assert!(content[0].as_text().unwrap().contains("ask again"));
    }

    #[test]
    fn compact_json_stays_compact_and_valid() {
        let value = json!({"items": (0..50_000).collect::<Vec<_>>()});
        let mut content = vec![ContentBlock::text(value.to_string())];
        assert!(fit_content(&mut content, 300, None));
        let text = content[0].as_text().unwrap();
        assert!(!text.contains('\n'));
        assert!(count(text) <= 300);
        let back: Value = serde_json::from_str(text).unwrap();
        assert!(back["items"].is_array());
    }

    #[test]
    fn images_pass_untouched() {
        let image = ContentBlock::Image {
            attachment: dsh_tools::content::ImageAttachmentRef {
                attachment_id: format!("sha256:{}", "0".repeat(64)),
                media_type: "image/png".into(),
                bytes: 1,
                width: 1,
                height: 1,
            },
        };
        let mut content = vec![image.clone(), ContentBlock::text("x".repeat(10_000))];
        assert!(fit_content(&mut content, 100, None));
        assert_eq!(content[0], image);
    }
}
