//! Path rendering and the violation texts of value validation (`docs/CONTRACTS.md`, "Validating a
//! value").

use std::fmt::Write as _;

use serde_json::Number;

use crate::json::{numbers_equal, write_js_number_of};

/// `d(path)`: the parameter-root sentinel `""` displays as `arguments`.
pub(crate) fn display(path: &str) -> &str {
    if path.is_empty() { "arguments" } else { path }
}

/// Appends the child path of object key `key` to the path buffer `path`.
pub(crate) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// Appends the child path of array index `index` to the path buffer `path`.
pub(crate) fn push_index(path: &mut String, index: usize) {
    let _ = write!(path, "[{index}]");
}

/// `"<d>" <rest>`.
pub(crate) fn quoted(path: &str, rest: &str) -> String {
    let d = display(path);
    let mut out = String::with_capacity(d.len() + rest.len() + 3);
    out.push('"');
    out.push_str(d);
    out.push_str("\" ");
    out.push_str(rest);
    out
}

/// `"<d>" must be at least <n>` style bound messages: `"<d>" <head> <n><tail>`, with `tail_one`
/// used instead of `tail` when the bound equals 1.
pub(crate) fn bound(path: &str, head: &str, n: &Number, tail: &str, tail_one: &str) -> String {
    let mut out = quoted(path, head);
    out.push(' ');
    write_js_number_of(&mut out, n);
    out.push_str(if numbers_equal(n, &Number::from(1u8)) {
        tail_one
    } else {
        tail
    });
    out
}

/// `missing required property "<child>"`.
pub(crate) fn missing_required(child: &str) -> String {
    format!("missing required property \"{child}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_bounds() {
        let mut path = String::new();
        push_key(&mut path, "servers");
        push_index(&mut path, 1);
        push_key(&mut path, "host");
        assert_eq!(path, "servers[1].host");
        assert_eq!(
            quoted("", "must be an object"),
            "\"arguments\" must be an object"
        );
        assert_eq!(
            bound(
                "s",
                "must be at least",
                &Number::from(1u8),
                " characters long",
                " character long"
            ),
            "\"s\" must be at least 1 character long"
        );
        assert_eq!(
            bound(
                "s",
                "must have at most",
                &Number::from(3u8),
                " items",
                " item"
            ),
            "\"s\" must have at most 3 items"
        );
    }
}
