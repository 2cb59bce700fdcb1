//! OpenAI's documented size limits of a strict schema, checked on the rendered schema.

use serde_json::Value;

use crate::dialect::issue::{IssueKind, Issues, child, item};

/// Properties in the whole schema.
const MAX_PROPERTIES: usize = 5_000;
/// Levels of object nesting (the root object is level 1).
const MAX_NESTING: usize = 10;
/// `enum` members in the whole schema.
const MAX_ENUM_VALUES: usize = 1_000;
/// Characters of property names, definition names and `enum`/`const` strings.
const MAX_STRING_CHARS: usize = 120_000;
/// A string `enum` with more members than this…
const LARGE_ENUM: usize = 250;
/// …may hold at most this many characters.
const LARGE_ENUM_CHARS: usize = 15_000;

#[derive(Default)]
struct Totals {
    properties: usize,
    enum_values: usize,
    chars: usize,
    too_deep: Option<String>,
}

/// Reports every exceeded limit as [`IssueKind::Unsupported`].
pub(crate) fn check_limits(schema: &Value, issues: &mut Issues) {
    let mut totals = Totals::default();
    walk(schema, "#", 0, &mut totals, issues);
    if totals.properties > MAX_PROPERTIES {
        issues.push(
            "#",
            IssueKind::Unsupported,
            format!(
                "{} properties; OpenAI allows {MAX_PROPERTIES}",
                totals.properties
            ),
        );
    }
    if totals.enum_values > MAX_ENUM_VALUES {
        issues.push(
            "#",
            IssueKind::Unsupported,
            format!(
                "{} enum values; OpenAI allows {MAX_ENUM_VALUES}",
                totals.enum_values
            ),
        );
    }
    if totals.chars > MAX_STRING_CHARS {
        issues.push(
            "#",
            IssueKind::Unsupported,
            format!(
                "{} characters of names and enum values; OpenAI allows {MAX_STRING_CHARS}",
                totals.chars
            ),
        );
    }
    if let Some(path) = totals.too_deep {
        issues.push(
            &path,
            IssueKind::Unsupported,
            format!("objects nested deeper than {MAX_NESTING} levels"),
        );
    }
}

/// The rendered schema is at most a few hundred levels deep (the renderer bounds it).
fn walk(node: &Value, path: &str, objects: usize, totals: &mut Totals, issues: &mut Issues) {
    let Value::Object(map) = node else {
        return;
    };
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => false,
    };
    let objects = objects + usize::from(is_object);
    if objects > MAX_NESTING && totals.too_deep.is_none() {
        totals.too_deep = Some(path.to_owned());
    }
    if let Some(Value::Array(members)) = map.get("enum") {
        totals.enum_values += members.len();
        let chars: usize = members
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        totals.chars += chars;
        if members.len() > LARGE_ENUM && chars > LARGE_ENUM_CHARS {
            issues.push(
                &child(path, "enum"),
                IssueKind::Unsupported,
                format!(
                    "a string enum of more than {LARGE_ENUM} values may hold {LARGE_ENUM_CHARS} characters, this one holds {chars}"
                ),
            );
        }
    }
    for keyword in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get(keyword) {
            let at = child(path, keyword);
            for (name, schema) in children {
                if keyword == "properties" {
                    totals.properties += 1;
                }
                totals.chars += name.chars().count();
                let depth = if keyword == "properties" { objects } else { 0 };
                walk(schema, &child(&at, name), depth, totals, issues);
            }
        }
    }
    if let Some(items) = map.get("items") {
        walk(items, &child(path, "items"), objects, totals, issues);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (i, branch) in branches.iter().enumerate() {
            walk(branch, &item(path, "anyOf", i), objects, totals, issues);
        }
    }
}
