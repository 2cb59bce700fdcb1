//! Result budgets (`docs/CONTRACTS.md`, "Result budgets"): what re-enters the model's context
//! from one result is cut, by structure, to a number of tokens.
//!
//! - Text keeps its head and its tail; a marker between them says how many bytes and lines were
//!   cut and how to get the rest (the tool's own hint, e.g. "continue with offset 2001", or a
//!   generic one).
//! - JSON stays valid JSON: long strings keep their start and end a marker between them; long
//!   arrays keep their first items and end with a string saying how many were left out.
//!
//! Both are deterministic and never count more than a bounded prefix of a huge input: a text
//! longer than 16 bytes per token of budget is cut without being counted whole.
//! [`fit_content`] applies them to one result's content blocks; the pipeline calls it on every
//! top-level result (with the tool's, the scope's or the registry's budget).
//!
//! ```
//! use dsh_tools_runtime::tokens::budget::fit_text;
//!
//! let log = (1..=2000).map(|i| format!("line {i}\n")).collect::<String>();
//! let cut = fit_text(&log, 100, Some("read with offset 2001"));
//! assert!(cut.starts_with("line 1\n") && cut.ends_with("line 2000\n"));
//! assert!(cut.contains("read with offset 2001"));
//! assert!(dsh_tools_runtime::tokens::count(&cut) <= 100);
//! ```

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::count;

pub use super::blocks::fit_content;

/// The budget of one result's model-facing content when nothing else sets one.
pub const DEFAULT_MAX_RESULT_TOKENS: usize = 25_000;

/// Tokens kept back for the marker.
const MARKER_TOKENS: usize = 60;

/// `text` within `max_tokens`: unchanged when it fits, else its head and tail around a marker.
/// `hint` says how to get the rest ("continue with offset 2001"); without one the marker asks
/// for a narrower request.
pub fn fit_text<'t>(text: &'t str, max_tokens: usize, hint: Option<&str>) -> Cow<'t, str> {
    if fits(text, max_tokens) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(cut_text(text, max_tokens, hint))
}

/// [`fit_text`] of a text known not to fit: its head and tail around the marker.
pub(super) fn cut_text(text: &str, max_tokens: usize, hint: Option<&str>) -> String {
    let keep = max_tokens.saturating_sub(MARKER_TOKENS);
    let head = prefix_within(text, keep / 2);
    let tail = suffix_within(&text[head.len()..], keep - keep / 2);
    let cut = &text[head.len()..text.len() - tail.len()];
    let how = hint.unwrap_or("ask for a narrower part (an offset, a range or a filter)");
    let marker = format!(
        "\n[… {} bytes ({} lines) cut to fit {max_tokens} tokens; {how} …]\n",
        cut.len(),
        cut.matches('\n').count(),
    );
    format!("{head}{marker}{tail}")
}

/// `value` within `max_tokens` as compact JSON: unchanged when it fits, else with strings and
/// arrays shortened, longest first, until it does (still valid JSON; a value that cannot be
/// made to fit ends as one string saying so).
pub fn fit_json(value: &Value, max_tokens: usize) -> Cow<'_, Value> {
    if fits(&value.to_string(), max_tokens) {
        return Cow::Borrowed(value);
    }
    let mut limits = Limits {
        string_chars: 4096,
        array_items: 256,
    };
    loop {
        let shortened = shorten(value, &limits, 0);
        if fits(&shortened.to_string(), max_tokens) {
            return Cow::Owned(shortened);
        }
        if limits.string_chars <= 16 && limits.array_items <= 1 {
            return Cow::Owned(Value::String(format!(
                "[… a JSON value too large for {max_tokens} tokens was cut; ask for a narrower part …]"
            )));
        }
        limits.string_chars = (limits.string_chars / 2).max(16);
        limits.array_items = (limits.array_items / 2).max(1);
    }
}

/// Whether `text` is within `max_tokens`, without counting a text far beyond it.
pub(super) fn fits(text: &str, max_tokens: usize) -> bool {
    // A token is at least one byte; o200k tokens are rarely more than 16 bytes.
    text.len() <= max_tokens || (text.len() <= max_tokens * 16 && count(text) <= max_tokens)
}

/// The longest prefix of `text` (at a char boundary, preferring a line end) within `tokens`.
fn prefix_within(text: &str, tokens: usize) -> &str {
    let mut end = floor_char_boundary(text, (tokens * 4).min(text.len()));
    while end > 0 && count(&text[..end]) > tokens {
        end = floor_char_boundary(text, end * 9 / 10);
    }
    match text[..end].rfind('\n') {
        Some(line_end) if line_end + 1 >= end / 2 => &text[..=line_end],
        _ => &text[..end],
    }
}

/// The longest suffix of `text` (at a char boundary, preferring a line start) within `tokens`.
fn suffix_within(text: &str, tokens: usize) -> &str {
    let mut start = ceil_char_boundary(text, text.len().saturating_sub(tokens * 4));
    while start < text.len() && count(&text[start..]) > tokens {
        let len = text.len() - start;
        start = ceil_char_boundary(text, text.len() - len * 9 / 10);
    }
    let rest = &text[start..];
    match rest.find('\n') {
        Some(line_end) if line_end + 1 < rest.len() && line_end <= rest.len() / 2 => {
            &rest[line_end + 1..]
        }
        _ => rest,
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

struct Limits {
    string_chars: usize,
    array_items: usize,
}

/// How deep [`shorten`] descends; deeper values are replaced by a marker string.
const MAX_DEPTH: usize = 64;

fn shorten(value: &Value, limits: &Limits, depth: usize) -> Value {
    if depth >= MAX_DEPTH && matches!(value, Value::Array(_) | Value::Object(_)) {
        return Value::String("[… nested too deep, cut …]".to_owned());
    }
    match value {
        Value::String(text) => {
            let chars = text.chars().count();
            if chars <= limits.string_chars {
                return value.clone();
            }
            let half = limits.string_chars / 2;
            let head: String = text.chars().take(half).collect();
            let tail: String = text.chars().skip(chars - half).collect();
            Value::String(format!("{head}[… {} chars cut …]{tail}", chars - 2 * half))
        }
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(limits.array_items)
                .map(|item| shorten(item, limits, depth + 1))
                .collect();
            if items.len() > limits.array_items {
                kept.push(Value::String(format!(
                    "[… {} more items of {} cut …]",
                    items.len() - limits.array_items,
                    items.len()
                )));
            }
            Value::Array(kept)
        }
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, member)| (key.clone(), shorten(member, limits, depth + 1)))
                .collect::<Map<_, _>>(),
        ),
        scalar => scalar.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_fits_is_untouched() {
        assert!(matches!(
            fit_text("short", 10, None),
            Cow::Borrowed("short")
        ));
        let value = json!({"a": [1, 2, 3]});
        assert!(matches!(fit_json(&value, 100), Cow::Borrowed(_)));
    }

    #[test]
    fn text_keeps_head_and_tail_and_says_what_was_cut() {
        let text: String = (0..10_000).map(|i| format!("row {i}\n")).collect();
        let cut = fit_text(&text, 500, None);
        assert!(count(&cut) <= 500, "{}", count(&cut));
        assert!(cut.starts_with("row 0\nrow 1\n"));
        assert!(cut.ends_with("row 9999\n"));
        let marker = cut
            .lines()
            .find(|l| l.starts_with("[…"))
            .expect("a marker line");
        assert!(marker.contains("lines) cut to fit 500 tokens"), "{marker}");
        assert!(marker.contains("narrower part"), "{marker}");
        let kept_rows = cut.lines().filter(|l| l.starts_with("row ")).count();
        let cut_lines: usize = marker
            .split(" bytes (")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a line count");
        assert_eq!(kept_rows + cut_lines, 10_000);
    }

    #[test]
    fn a_hundred_megabytes_of_text_is_cut_without_counting_it_whole() {
        let text = "x".repeat(100 << 20);
        let cut = fit_text(&text, 1000, Some("continue with offset 4001"));
        assert!(count(&cut) <= 1000);
        assert!(cut.contains("continue with offset 4001"));
    }

    #[test]
    fn multibyte_text_is_cut_at_char_boundaries() {
        let text = "é🙂".repeat(20_000);
        let cut = fit_text(&text, 300, None);
        assert!(count(&cut) <= 300);
        assert!(cut.starts_with("é🙂"));
    }

    #[test]
    fn json_stays_json_with_counts() {
        let rows: Vec<Value> = (0..5000)
            .map(|i| json!({"id": i, "body": "lorem ipsum ".repeat(50)}))
            .collect();
        let value = json!({"total": 5000, "rows": rows});
        let cut = fit_json(&value, 2000).into_owned();
        let text = cut.to_string();
        assert!(count(&text) <= 2000, "{}", count(&text));
        let back: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back["total"], 5000);
        let kept = back["rows"].as_array().expect("still an array");
        let last = kept.last().and_then(Value::as_str).expect("a count item");
        assert!(last.ends_with("more items of 5000 cut …]"), "{last}");
        assert!(kept[0]["body"].as_str().unwrap().contains("chars cut"));
    }
}
