//! JavaScript `JSON.stringify` string escaping.

/// Quotes a string exactly as JavaScript `JSON.stringify` does.
///
/// Escapes `"`, `\`, `\b`, `\f`, `\n`, `\r`, `\t`; other C0 controls become `\u00xx` (lowercase
/// hex). DEL, U+2028/U+2029 and all non-ASCII characters are kept as they are.
///
/// ```
/// use dsh_tools::json::json_quote;
/// assert_eq!(json_quote("a\"b\\c\n\u{1}\u{7f}\u{2028}é"), "\"a\\\"b\\\\c\\n\\u0001\u{7f}\u{2028}é\"");
/// ```
pub fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_json_quote(&mut out, s);
    out
}

/// Appends [`json_quote`]`(s)` to `out`.
///
/// ```
/// let mut out = String::from("key=");
/// dsh_tools::json::write_json_quote(&mut out, "tab\there");
/// assert_eq!(out, "key=\"tab\\there\"");
/// ```
pub fn write_json_quote(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (index, byte) in s.bytes().enumerate() {
        let escape: &str = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `index` is the position of an ASCII byte, hence a char boundary.
        out.push_str(s.get(start..index).unwrap_or_default());
        start = index + 1;
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(s.get(start..).unwrap_or_default());
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_json_stringify() {
        assert_eq!(json_quote(""), "\"\"");
        assert_eq!(json_quote("\u{8}\u{c}\r\t"), "\"\\b\\f\\r\\t\"");
        assert_eq!(json_quote("\u{0}\u{1f}"), "\"\\u0000\\u001f\"");
        assert_eq!(json_quote("\u{1b}x"), "\"\\u001bx\"");
        assert_eq!(json_quote("\u{2029}😀"), "\"\u{2029}😀\"");
        assert_eq!(json_quote("/"), "\"/\"");
    }
}
