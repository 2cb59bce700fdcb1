//! `$ref` resolution inside one schema document: the one resolver of the workspace (validation,
//! the Code Mode SDK and the provider dialects all call it).
//!
//! Two forms:
//! - [`resolve_ref`] resolves any local reference the way JSON Schema does: `#` (the root),
//!   JSON-pointer fragments `#/…` (with `~0`/`~1` and percent escapes), and the same fragments
//!   behind the root's own `$id`. Used on imported schemas of any draft.
//! - [`resolve_schema_ref`] is the parameter vocabulary's rule (`docs/CONTRACTS.md`, "Schema
//!   vocabulary"): the pointer may only walk schema positions (`$defs/<name>`,
//!   `properties/<name>`, `items`, `prefixItems/<i>`, `additionalProperties`, `oneOf/<i>`), so
//!   its target is always a node the subset check itself visits.

use std::borrow::Cow;

use serde_json::Value;

/// Resolves `reference` against the document `root`: `#`, JSON-pointer fragments `#/…`, and the
/// same behind the root's own `$id`. Returns the target and its decoded fragment (`""` for the
/// root, `/$defs/Node` for a definition), or `None` for anchors (`#name`), other documents and
/// dangling pointers.
///
/// ```
/// use dsh_tools::subset::resolve_ref;
/// use serde_json::json;
/// let root = json!({"$defs": {"a/b": {"type": "string"}}, "items": [{"type": "null"}]});
/// assert_eq!(resolve_ref(&root, "#/$defs/a~1b").map(|(v, _)| v), Some(&json!({"type": "string"})));
/// assert_eq!(resolve_ref(&root, "#/items/0").map(|(_, p)| p.into_owned()), Some("/items/0".to_owned()));
/// assert!(resolve_ref(&root, "#anchor").is_none());
/// ```
pub fn resolve_ref<'a, 'r>(
    root: &'a Value,
    reference: &'r str,
) -> Option<(&'a Value, Cow<'r, str>)> {
    let fragment = percent_decode(fragment_of(root, reference)?)?;
    let Some(pointer) = fragment.strip_prefix('/') else {
        return fragment.is_empty().then_some((root, fragment));
    };
    let mut node = root;
    for token in pointer.split('/') {
        let token = unescape(token);
        node = match node {
            Value::Object(map) => map.get(token.as_ref())?,
            Value::Array(items) => items.get(array_index(&token)?)?,
            _ => return None,
        };
    }
    Some((node, fragment))
}

/// Resolves a `$ref` of the parameter vocabulary: like [`resolve_ref`], but every step of the
/// pointer must be a schema position, so the target is a schema the subset check visits.
///
/// ```
/// use dsh_tools::subset::resolve_schema_ref;
/// use serde_json::json;
/// let root = json!({"type": "object", "properties": {"a": {"type": "string"}}, "$defs": {"N": {"type": "null"}}});
/// assert_eq!(resolve_schema_ref(&root, "#/$defs/N"), Some(&json!({"type": "null"})));
/// assert_eq!(resolve_schema_ref(&root, "#/properties/a"), Some(&json!({"type": "string"})));
/// assert_eq!(resolve_schema_ref(&root, "#"), Some(&root));
/// // `#/properties` is an object of schemas, not a schema.
/// assert_eq!(resolve_schema_ref(&root, "#/properties"), None);
/// ```
pub fn resolve_schema_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = percent_decode(fragment_of(root, reference)?)?;
    let Some(pointer) = fragment.strip_prefix('/') else {
        return fragment.is_empty().then_some(root);
    };
    let mut tokens = pointer.split('/');
    let mut node = root;
    while let Some(keyword) = tokens.next() {
        let map = node.as_object()?;
        node = match unescape(keyword).as_ref() {
            "items" | "additionalProperties" => map.get(keyword)?,
            keyword @ ("$defs" | "properties") => {
                let name = unescape(tokens.next()?);
                map.get(keyword)?.as_object()?.get(name.as_ref())?
            }
            keyword @ ("prefixItems" | "oneOf") => {
                let index = array_index(&unescape(tokens.next()?))?;
                map.get(keyword)?.as_array()?.get(index)?
            }
            _ => return None,
        };
    }
    node.is_object().then_some(node)
}

/// The fragment of `reference` (without `#`), directly or behind the root's `$id`.
fn fragment_of<'r>(root: &Value, reference: &'r str) -> Option<&'r str> {
    if let Some(fragment) = reference.strip_prefix('#') {
        return Some(fragment);
    }
    let id = root.get("$id")?.as_str()?;
    let rest = reference.strip_prefix(id.trim_end_matches('#'))?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('#')
    }
}

fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// An array index token: digits without a leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.len() > 1 && token.starts_with('0') {
        return None;
    }
    token.parse().ok()
}

/// Decodes `%XX` escapes; `None` when an escape is malformed or the bytes are not UTF-8.
fn percent_decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('%') {
        return Some(Cow::Borrowed(s));
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_resolve_with_their_fragments() {
        let root = json!({
            "$id": "https://example.com/s.json",
            "$defs": {"A": {"type": "string"}, "a/b": {"type": "number"}, "c~d": {"type": "null"}, "é x": {"const": 1}},
            "properties": {"list": {"items": [{"type": "boolean"}]}}
        });
        let target = |r: &str| resolve_ref(&root, r).map(|(v, _)| v);
        assert_eq!(target("#"), Some(&root));
        assert_eq!(target("#/$defs/A"), Some(&json!({"type": "string"})));
        assert_eq!(target("#/$defs/a~1b"), Some(&json!({"type": "number"})));
        assert_eq!(target("#/$defs/c~0d"), Some(&json!({"type": "null"})));
        assert_eq!(target("#/$defs/%C3%A9%20x"), Some(&json!({"const": 1})));
        assert_eq!(
            target("#/properties/list/items/0"),
            Some(&json!({"type": "boolean"}))
        );
        assert_eq!(
            resolve_ref(&root, "https://example.com/s.json#/$defs/A").map(|(_, p)| p),
            Some(Cow::Borrowed("/$defs/A"))
        );
        assert_eq!(target("https://example.com/s.json"), Some(&root));
        for missing in [
            "#/$defs/B",
            "#anchor",
            "other.json#/$defs/A",
            "#/properties/list/items/01",
            "#/$defs/%zz",
            "",
        ] {
            assert_eq!(target(missing), None, "{missing}");
        }
    }

    #[test]
    fn schema_refs_walk_schema_positions_only() {
        let root = json!({
            "type": "array",
            "prefixItems": [{"type": "string"}],
            "items": false,
            "$defs": {"T": {"oneOf": [{"type": "null"}, {"type": "object", "additionalProperties": {"type": "integer"}}]}}
        });
        let target = |r: &str| resolve_schema_ref(&root, r);
        assert_eq!(target("#/prefixItems/0"), Some(&json!({"type": "string"})));
        assert_eq!(
            target("#/$defs/T/oneOf/1/additionalProperties"),
            Some(&json!({"type": "integer"}))
        );
        for rejected in [
            "#/items",
            "#/$defs",
            "#/$defs/T/oneOf",
            "#/type",
            "#/prefixItems/00",
            "#/$defs/U",
        ] {
            assert_eq!(target(rejected), None, "{rejected}");
        }
    }
}
