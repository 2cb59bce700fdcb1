//! `$ref` resolution inside one schema document.

use serde_json::Value;

/// Resolves `reference` against the document `root`.
///
/// Supported: `#` (the root), JSON-pointer fragments `#/…` (so `#/$defs/X`, `#/definitions/X`,
/// `#/properties/a/items`, with `~0`/`~1` and percent escapes), and the same fragments behind the
/// root's own `$id` (`https://example.com/s.json#/$defs/X`). Anything else — anchors (`#name`),
/// other documents, URLs — is unresolvable (`None`), and the caller degrades it to `unknown`.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    dsh_tools::subset::resolve_ref(root, reference).map(|(node, _)| node)
}

/// The name hint of a recursive schema: its `title`, else the last token of the reference
/// (`#/$defs/TreeEntry` → `TreeEntry`), else `Root`.
pub(crate) fn alias_hint(target: &Value, reference: &str) -> String {
    let title = target
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let last = reference.rsplit('/').next().unwrap_or_default();
    let hint = if title.is_empty() {
        last.trim_start_matches('#')
    } else {
        title
    };
    if hint.is_empty() {
        String::from("Root")
    } else {
        hint.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_resolve() {
        let root = json!({
            "$id": "https://example.com/s.json",
            "$defs": {"A": {"type": "string"}, "a/b": {"type": "number"}, "c~d": {"type": "null"}, "é x": {"const": 1}},
            "properties": {"list": {"items": [{"type": "boolean"}]}}
        });
        assert_eq!(resolve(&root, "#"), Some(&root));
        assert_eq!(
            resolve(&root, "#/$defs/A"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            resolve(&root, "#/$defs/a~1b"),
            Some(&json!({"type": "number"}))
        );
        assert_eq!(
            resolve(&root, "#/$defs/c~0d"),
            Some(&json!({"type": "null"}))
        );
        assert_eq!(
            resolve(&root, "#/$defs/%C3%A9%20x"),
            Some(&json!({"const": 1}))
        );
        assert_eq!(
            resolve(&root, "#/properties/list/items/0"),
            Some(&json!({"type": "boolean"}))
        );
        assert_eq!(
            resolve(&root, "https://example.com/s.json#/$defs/A"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(resolve(&root, "https://example.com/s.json"), Some(&root));
        for missing in [
            "#/$defs/B",
            "#anchor",
            "other.json#/$defs/A",
            "#/properties/list/items/01",
            "#/$defs/%zz",
            "",
        ] {
            assert_eq!(resolve(&root, missing), None, "{missing}");
        }
    }
}
