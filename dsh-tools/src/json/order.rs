//! JavaScript string ordering and whitespace semantics.

use std::cmp::Ordering;

/// Compares two strings by UTF-16 code units, as JavaScript's default sort and `<` do.
///
/// Differs from `str::cmp` (code point order) for characters above U+FFFF versus U+E000..U+FFFF.
///
/// ```
/// use std::cmp::Ordering;
/// use dsh_tools::json::utf16_cmp;
/// assert_eq!(utf16_cmp("\u{1F600}", "\u{FF5E}"), Ordering::Less);
/// assert_eq!("\u{1F600}".cmp("\u{FF5E}"), Ordering::Greater);
/// assert_eq!(utf16_cmp("a", "ab"), Ordering::Less);
/// ```
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The array index a property key denotes in JavaScript, if any: the canonical decimal text of
/// an integer from 0 to 2^32 − 2 (`"0"`, `"7"`, `"4294967294"`; not `"01"`, `"-1"`, `"1.0"` or
/// `"4294967295"`). JavaScript enumerates such keys first, in ascending order, before the other
/// keys in insertion order (`docs/CONTRACTS.md`, "JSON values").
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    let canonical = match bytes {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.len() < 10 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    key.parse::<u32>().ok().filter(|&index| index != u32::MAX)
}

/// Whether `c` matches JavaScript's `\s`: the WhiteSpace and LineTerminator productions (TAB, VT,
/// FF, SPACE, NBSP, U+FEFF, every `Zs` character, LF, CR, U+2028, U+2029). U+0085 is **not**
/// included (unlike [`char::is_whitespace`]).
///
/// ```
/// use dsh_tools::json::is_js_whitespace;
/// assert!(is_js_whitespace('\u{feff}'));
/// assert!(is_js_whitespace('\u{a0}'));
/// assert!(is_js_whitespace('\u{3000}'));
/// assert!(!is_js_whitespace('\u{85}'));
/// assert!(!is_js_whitespace('\u{180e}'));
/// ```
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// Collapses every run of JavaScript whitespace to one space and trims both ends
/// (`s.replace(/\s+/g, ' ').trim()`).
///
/// ```
/// use dsh_tools::json::collapse_js_whitespace;
/// assert_eq!(collapse_js_whitespace("  a\n\t b\u{feff}c \u{85} "), "a b c \u{85}");
/// assert_eq!(collapse_js_whitespace(" \n "), "");
/// ```
pub fn collapse_js_whitespace(s: &str) -> String {
    if is_collapsed_ascii(s.as_bytes()) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_js_whitespace).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Whether `s` is printable ASCII whose spaces are single and inside (the common text that
/// [`collapse_js_whitespace`] leaves as it is).
fn is_collapsed_ascii(s: &[u8]) -> bool {
    let mut after_space = true;
    for &b in s {
        match b {
            b' ' if after_space => return false,
            b' ' => after_space = true,
            0x21..=0x7e => after_space = false,
            _ => return false,
        }
    }
    !after_space || s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapsed_text_is_copied_as_it_is() {
        for s in [
            "",
            "a",
            "a b",
            "The file.",
            "a  b",
            " a",
            "a ",
            "a\tb",
            "\u{e9} b",
            "a\u{a0}b",
            " ",
        ] {
            let words: Vec<&str> = s
                .split(is_js_whitespace)
                .filter(|w| !w.is_empty())
                .collect();
            assert_eq!(collapse_js_whitespace(s), words.join(" "), "{s:?}");
        }
        assert!(is_collapsed_ascii(b"a b.c"));
        assert!(!is_collapsed_ascii(b"a  b"));
    }

    #[test]
    fn array_indices_are_canonical_and_below_two_pow_32_minus_one() {
        for (key, index) in [
            ("0", Some(0)),
            ("7", Some(7)),
            ("4294967294", Some(4_294_967_294)),
        ] {
            assert_eq!(array_index(key), index, "{key}");
        }
        for key in [
            "",
            "01",
            "-1",
            "1.0",
            "+1",
            " 1",
            "4294967295",
            "99999999999",
            "1e3",
            "a",
        ] {
            assert_eq!(array_index(key), None, "{key}");
        }
    }

    #[test]
    fn utf16_order_sorts_like_javascript() {
        let mut names = vec!["b", "\u{ff5e}", "\u{1f600}", "B", "a"];
        names.sort_by(|a, b| utf16_cmp(a, b));
        assert_eq!(names, vec!["B", "a", "b", "\u{1f600}", "\u{ff5e}"]);
    }

    #[test]
    fn every_zs_character_is_whitespace() {
        for c in [
            '\u{2000}', '\u{2005}', '\u{200a}', '\u{202f}', '\u{205f}', '\u{1680}',
        ] {
            assert!(is_js_whitespace(c), "{c:?}");
        }
        for c in ['\u{200b}', 'x', '\u{85}', '\u{2060}'] {
            assert!(!is_js_whitespace(c), "{c:?}");
        }
    }
}
