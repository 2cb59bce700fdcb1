//! JavaScript `JSON.stringify` (compact), canonical JSON (RFC 8785) and the shared iterative
//! JSON writer.

use serde_json::{Value, map};

use super::escape::write_json_quote;
use super::number::write_js_number_of;
use super::order::{array_index, utf16_cmp};

/// Renders a value exactly as JavaScript `JSON.stringify(value)` does (compact form).
///
/// Numbers print as JavaScript prints the corresponding double, strings use `JSON.stringify`
/// escaping, and object keys come in JavaScript's order: array-index keys (`"0"`, `"1"`, …)
/// first in ascending order, then the others in insertion order (`docs/CONTRACTS.md`, "JSON
/// values"). Iterative: 5,000-deep values are fine.
///
/// ```
/// use dsh_tools::json::js_stringify;
/// use serde_json::json;
/// assert_eq!(js_stringify(&json!([1e21, 0.1, 1e-7])), "[1e+21,0.1,1e-7]");
/// assert_eq!(js_stringify(&json!({"b": [true, null], "a": "\u{2028}"})), "{\"b\":[true,null],\"a\":\"\u{2028}\"}");
/// assert_eq!(js_stringify(&json!(1.0)), "1");
/// assert_eq!(js_stringify(&json!({"b": 1, "10": 2, "2": 3})), r#"{"2":3,"10":2,"b":1}"#);
/// ```
pub fn js_stringify(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, 0, KeyOrder::JavaScript);
    out
}

/// Appends [`js_stringify`]`(v)` to `out`.
///
/// ```
/// let mut out = String::from("one of ");
/// dsh_tools::json::write_js_stringify(&mut out, &serde_json::json!(["a", "b"]));
/// assert_eq!(out, "one of [\"a\",\"b\"]");
/// ```
pub fn write_js_stringify(out: &mut String, v: &Value) {
    write_json(out, v, 0, KeyOrder::JavaScript);
}

/// Renders a value in the JSON Canonicalization Scheme (RFC 8785): [`js_stringify`] with every
/// object's keys sorted by their UTF-16 code units. Two values that are equal as JSON (the same
/// keys in any order, `1.0` and `1`) render to the same text, so it is what a digest or a
/// signature of a value covers. Iterative: 5,000-deep values are fine.
///
/// ```
/// use dsh_tools::json::canonical_json;
/// use serde_json::json;
/// assert_eq!(canonical_json(&json!({"b": [1.0, {"y": 1, "x": 2}], "a": "é"})), r#"{"a":"é","b":[1,{"x":2,"y":1}]}"#);
/// assert_eq!(canonical_json(&json!({"b": 1, "10": 2, "2": 3})), r#"{"10":2,"2":3,"b":1}"#);
/// ```
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, 0, KeyOrder::Canonical);
    out
}

/// Appends [`canonical_json`]`(v)` to `out`.
///
/// ```
/// let mut out = String::from("digest of ");
/// dsh_tools::json::write_canonical_json(&mut out, &serde_json::json!({"b": 2, "a": 1}));
/// assert_eq!(out, r#"digest of {"a":1,"b":2}"#);
/// ```
pub fn write_canonical_json(out: &mut String, v: &Value) {
    write_json(out, v, 0, KeyOrder::Canonical);
}

/// The order in which an object's keys are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    /// JavaScript's enumeration order (see [`js_stringify`]).
    JavaScript,
    /// Sorted by UTF-16 code units (RFC 8785, see [`canonical_json`]).
    Canonical,
}

/// One open container of the writer.
enum Frame<'a> {
    Array {
        items: std::slice::Iter<'a, Value>,
        depth: usize,
        compact: bool,
    },
    Object {
        entries: Entries<'a>,
        depth: usize,
        compact: bool,
    },
}

/// An object's entries in a [`KeyOrder`].
enum Entries<'a> {
    /// JavaScript's order with no array-index key: insertion order, without a copy.
    Inserted(map::Iter<'a>),
    /// Array-index keys first (JavaScript), or all keys sorted (canonical).
    Reordered(std::vec::IntoIter<(&'a String, &'a Value)>),
}

impl<'a> Entries<'a> {
    fn of(map: &'a map::Map<String, Value>, order: KeyOrder) -> Self {
        if order == KeyOrder::Canonical {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| utf16_cmp(a, b));
            return Entries::Reordered(entries.into_iter());
        }
        if !map.keys().any(|key| array_index(key).is_some()) {
            return Entries::Inserted(map.iter());
        }
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        // Stable: the other keys keep their insertion order behind the indices.
        entries.sort_by_key(|(key, _)| array_index(key).map_or(u64::MAX, u64::from));
        Entries::Reordered(entries.into_iter())
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::Inserted(entries) => entries.next(),
            Entries::Reordered(entries) => entries.next(),
        }
    }
}

fn push_indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Writes `v` as JSON: containers at depth `>= compact_from` (root = depth 0) and all their
/// descendants compact, shallower ones with 2-space indentation (`"key": value`, `,\n`);
/// object keys in `order`.
pub(crate) fn write_json(out: &mut String, v: &Value, compact_from: usize, order: KeyOrder) {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut next: Option<(&Value, usize, bool)> = Some((v, 0, false));
    loop {
        if let Some((value, depth, inherited_compact)) = next.take() {
            let compact = inherited_compact || depth >= compact_from;
            match value {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => write_js_number_of(out, n),
                Value::String(s) => write_json_quote(out, s),
                Value::Array(items) if items.is_empty() => out.push_str("[]"),
                Value::Object(map) if map.is_empty() => out.push_str("{}"),
                Value::Array(items) => {
                    out.push('[');
                    let mut items = items.iter();
                    if let Some(first) = items.next() {
                        if !compact {
                            out.push('\n');
                            push_indent(out, depth + 1);
                        }
                        next = Some((first, depth + 1, compact));
                    }
                    stack.push(Frame::Array {
                        items,
                        depth,
                        compact,
                    });
                    continue;
                }
                Value::Object(map) => {
                    out.push('{');
                    let mut entries = Entries::of(map, order);
                    if let Some((key, first)) = entries.next() {
                        if !compact {
                            out.push('\n');
                            push_indent(out, depth + 1);
                        }
                        write_key(out, key, compact);
                        next = Some((first, depth + 1, compact));
                    }
                    stack.push(Frame::Object {
                        entries,
                        depth,
                        compact,
                    });
                    continue;
                }
            }
        }
        let Some(frame) = stack.last_mut() else {
            return;
        };
        match frame {
            Frame::Array {
                items,
                depth,
                compact,
            } => {
                if let Some(item) = items.next() {
                    separator(out, *depth, *compact);
                    next = Some((item, *depth + 1, *compact));
                } else {
                    close(out, *depth, *compact, ']');
                    stack.pop();
                }
            }
            Frame::Object {
                entries,
                depth,
                compact,
            } => {
                if let Some((key, item)) = entries.next() {
                    separator(out, *depth, *compact);
                    write_key(out, key, *compact);
                    next = Some((item, *depth + 1, *compact));
                } else {
                    close(out, *depth, *compact, '}');
                    stack.pop();
                }
            }
        }
    }
}

fn write_key(out: &mut String, key: &str, compact: bool) {
    write_json_quote(out, key);
    out.push_str(if compact { ":" } else { ": " });
}

fn separator(out: &mut String, depth: usize, compact: bool) {
    out.push(',');
    if !compact {
        out.push('\n');
        push_indent(out, depth + 1);
    }
}

fn close(out: &mut String, depth: usize, compact: bool, bracket: char) {
    if !compact {
        out.push('\n');
        push_indent(out, depth);
    }
    out.push(bracket);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_forms() {
        assert_eq!(js_stringify(&json!(null)), "null");
        assert_eq!(js_stringify(&json!([])), "[]");
        assert_eq!(js_stringify(&json!({})), "{}");
        assert_eq!(
            js_stringify(&json!({"a": {}, "b": [[]]})),
            r#"{"a":{},"b":[[]]}"#
        );
        assert_eq!(
            js_stringify(&json!([u64::MAX, -1, 2.5])),
            "[18446744073709552000,-1,2.5]"
        );
        assert_eq!(js_stringify(&json!("\u{7f}\u{1}")), "\"\u{7f}\\u0001\"");
    }

    /// RFC 8785's key-sorting example (§3.2.3): keys compare by UTF-16 code units, so the
    /// astral `😀` (a surrogate pair, 0xD83D…) sorts before `\u{fb33}` though its code point is
    /// larger; numbers print as JavaScript prints them.
    #[test]
    fn canonical_json_follows_rfc_8785() {
        let value = json!({"\u{20ac}": "Euro", "\r": "CR", "\u{fb33}": "Hebrew",
            "1": "One", "\u{1f600}": "Emoji", "\u{80}": "Control", "\u{f6}": "Latin"});
        let keys: Vec<String> = canonical_json(&value)
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .map(|pair| pair.split(':').nth(1).unwrap_or_default().to_owned())
            .collect();
        assert_eq!(
            keys,
            [
                "\"CR\"",
                "\"One\"",
                "\"Control\"",
                "\"Latin\"",
                "\"Euro\"",
                "\"Emoji\"",
                "\"Hebrew\""
            ]
        );
        assert_eq!(
            canonical_json(&json!({"n": [1e21, 1.0, -0.0, 5e-7]})),
            r#"{"n":[1e+21,1,0,5e-7]}"#
        );
    }

    #[test]
    fn deep_values_are_iterative() {
        let mut v = json!(1);
        for i in 0..5_000 {
            v = if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::Object(std::iter::once((String::from("k"), v)).collect())
            };
        }
        let text = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let text = js_stringify(&v);
                std::mem::forget(v);
                text
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert!(text.starts_with("{\"k\":[{\"k\":["));
        assert!(text.contains("{\"k\":[1]}]}") && text.ends_with("]}]}"));
        assert_eq!(text.len(), 1 + 2_500 * 2 + 2_500 * 6);
    }
}
