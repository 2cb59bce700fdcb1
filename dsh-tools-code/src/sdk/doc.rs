//! JSDoc text: descriptions (`docs/CONTRACTS.md`, "The SDK") and, beyond the reference subset, the
//! validation keywords of wide schemas as JSDoc tags (`@format uri`, `@minimum 0`).

use std::borrow::Cow;

use dsh_tools::json::{collapse_js_whitespace, write_js_number_of};
use serde_json::{Map, Value};

use super::refs::resolve;

/// The keywords that become tags, in the order they are printed. None of them is in the
/// reference subset, so a schema inside it never gets a tag (its text stays the reference's).
const TAG_KEYWORDS: &[&str] = &[
    "format",
    "pattern",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contentMediaType",
    "contentEncoding",
    "deprecated",
];

/// The text of a doc comment for `description`: JS whitespace runs collapsed to one space (line
/// terminators included, so the text is one line), trimmed.
///
/// A whitespace-only description gives the empty text (printed `/**  */` by the text printer, as
/// the reference does).
pub(crate) fn doc_text(description: &str) -> String {
    collapse_js_whitespace(description)
}

/// `text` with every `*/` replaced by `*\/`, so it can never close a block comment (the text
/// printer's `/** … */`; the SDK's `//` line comments need no escape).
pub(crate) fn escape_comment_end(text: &str) -> Cow<'_, str> {
    if text.as_bytes().windows(2).any(|w| w == b"*/") {
        Cow::Owned(text.replace("*/", "*\\/"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The doc of an object member whose schema is `schema`, or `None` for no doc line.
///
/// The description is the member schema's own `description` when it is a non-empty string (the
/// reference rule); beyond the reference, a `$ref` member without one borrows its target's. Tags
/// come from the member schema's validation keywords, and from the single non-`null` branch of
/// an `anyOf`/`oneOf` (the `Optional[…]` shape of many generators).
pub(crate) fn member_doc(schema: &Value, root: &Value) -> Option<String> {
    let own = Scan::of(schema.as_object()?);
    let description = own
        .description
        .or_else(|| ref_description(own.reference?, root));
    let mut text = description.map(collapse_js_whitespace).unwrap_or_default();
    for branch in own.branches.and_then(Value::as_array).into_iter().flatten() {
        push_branch_description(&mut text, branch);
    }
    // The tags follow, space-separated (`write_tags` puts a space before each but a first).
    own.write_tags(&mut text);
    if let Some(branch) = own.branches.and_then(single_non_null_branch) {
        Scan::of(branch).write_tags(&mut text);
    }
    if text.is_empty() {
        return None;
    }
    Some(text)
}

/// What a member doc reads from one schema node, found in one pass over its keys.
struct Scan<'a> {
    description: Option<&'a str>,
    reference: Option<&'a Value>,
    branches: Option<&'a Value>,
    tags: [Option<&'a Value>; TAG_KEYWORDS.len()],
}

impl<'a> Scan<'a> {
    fn of(map: &'a Map<String, Value>) -> Self {
        let mut scan = Scan {
            description: None,
            reference: None,
            branches: None,
            tags: [None; TAG_KEYWORDS.len()],
        };
        for (key, value) in map {
            match key.as_str() {
                "description" => scan.description = value.as_str().filter(|s| !s.is_empty()),
                "$ref" => scan.reference = Some(value),
                "anyOf" => scan.branches = Some(value),
                "oneOf" => scan.branches = scan.branches.or(Some(value)),
                key => {
                    if let Some(slot) = TAG_KEYWORDS.iter().position(|k| *k == key) {
                        scan.tags[slot] = Some(value);
                    }
                }
            }
        }
        scan
    }

    /// Appends the tags, space-separated (values of the wrong shape are skipped).
    fn write_tags(&self, out: &mut String) {
        for (keyword, value) in TAG_KEYWORDS.iter().zip(self.tags) {
            let Some(value) = value else {
                continue;
            };
            let tag = |out: &mut String| {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push('@');
                out.push_str(keyword);
            };
            match (*keyword, value) {
                ("uniqueItems" | "deprecated", Value::Bool(true)) => tag(out),
                ("uniqueItems" | "deprecated", _) => {}
                (_, Value::Number(n)) => {
                    tag(out);
                    out.push(' ');
                    write_js_number_of(out, n);
                }
                (_, Value::Bool(b)) => {
                    tag(out);
                    out.push_str(if *b { " true" } else { " false" });
                }
                (_, Value::String(s)) => {
                    let s = collapse_js_whitespace(s);
                    if !s.is_empty() {
                        tag(out);
                        out.push(' ');
                        out.push_str(&s);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Appends the description of one `anyOf`/`oneOf` branch of a member (a branch type has no doc
/// line of its own, so its description joins the member's), unless the text already holds it.
fn push_branch_description(text: &mut String, branch: &Value) {
    let Some(description) = branch.get("description").and_then(Value::as_str) else {
        return;
    };
    let description = collapse_js_whitespace(description);
    if description.is_empty() || text.contains(&description) {
        return;
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(&description);
}

/// The description of a `$ref` target, following up to [`REF_HOPS`] references.
fn ref_description<'a>(reference: &'a Value, root: &'a Value) -> Option<&'a str> {
    let mut reference = reference;
    for _ in 0..REF_HOPS {
        let map = resolve(root, reference.as_str()?)?.as_object()?;
        if let Some(description) = map
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
        {
            return Some(description);
        }
        reference = map.get("$ref")?;
    }
    None
}

/// How many `$ref` hops a member's description is looked up through.
const REF_HOPS: usize = 8;

/// The only branch of `anyOf`/`oneOf` that is not `{"type": "null"}`, if there is exactly one.
fn single_non_null_branch(branches: &Value) -> Option<&Map<String, Value>> {
    let mut others = branches
        .as_array()?
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
    let only = others.next()?;
    if others.next().is_some() {
        return None;
    }
    only.as_object()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions_collapse_and_escape() {
        assert_eq!(
            doc_text(" a\u{a0}\u{feff}b */ c\u{85}\u{2028}d "),
            "a b */ c\u{85} d"
        );
        assert_eq!(doc_text(" \n "), "");
        assert_eq!(escape_comment_end("a */ b */"), "a *\\/ b *\\/");
        assert!(matches!(escape_comment_end("a * / b"), Cow::Borrowed(_)));
    }

    #[test]
    fn tags_follow_the_description() {
        let root = json!({});
        let schema =
            json!({"type": "string", "format": "uri", "description": "The URL.", "minLength": 1});
        assert_eq!(
            member_doc(&schema, &root).as_deref(),
            Some("The URL. @format uri @minLength 1")
        );
        let optional = json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]});
        assert_eq!(member_doc(&optional, &root).as_deref(), Some("@minimum 0"));
        assert_eq!(member_doc(&json!({"type": "string"}), &root), None);
        assert_eq!(
            member_doc(&json!({"pattern": "^a.*/$"}), &root).as_deref(),
            Some("@pattern ^a.*/$")
        );
    }

    #[test]
    fn branch_descriptions_join_the_member_doc() {
        let root = json!({});
        let member = json!({"anyOf": [
            {"type": "object", "description": "Sort criteria."},
            {"type": "string", "description": "The same, as JSON text."},
            {"type": "null", "description": "Sort criteria."}
        ]});
        assert_eq!(
            member_doc(&member, &root).as_deref(),
            Some("Sort criteria. The same, as JSON text.")
        );
        let own =
            json!({"description": "How to sort.", "oneOf": [{"description": "Sort criteria."}]});
        assert_eq!(
            member_doc(&own, &root).as_deref(),
            Some("How to sort. Sort criteria.")
        );
    }

    #[test]
    fn refs_lend_their_description() {
        let root = json!({"$defs": {"A": {"description": "An A."}}});
        assert_eq!(
            member_doc(&json!({"$ref": "#/$defs/A"}), &root).as_deref(),
            Some("An A.")
        );
    }
}
