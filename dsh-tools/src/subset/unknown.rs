//! The violation of a key a closed object does not declare (`docs/CONTRACTS.md`, "Validating a
//! value", rule 3): it names the key, where it is, and what the object takes instead — the
//! closest declared name when one is close, else the declared names.

use serde_json::{Map, Value};

use super::compiled::ObjectNode;
use super::messages::display;

/// The violations of the keys of `map` that the closed object `node` at `path` does not
/// declare, in the value's key order.
pub(crate) fn violations(
    node: &ObjectNode,
    map: &Map<String, Value>,
    path: &str,
    tool: Option<&str>,
) -> Vec<String> {
    let mut unknown = map
        .keys()
        .filter(|key| node.lookup(key).is_none())
        .peekable();
    if unknown.peek().is_none() {
        return Vec::new();
    }
    let declared: Vec<&str> = node.props.iter().map(|p| &*p.name).collect();
    let tool = if path.is_empty() { tool } else { None };
    unknown
        .map(|key| unknown_key_violation(tool, path, key, &declared))
        .collect()
}

/// The declared name closest to `key`, when it is close enough to be the one meant.
///
/// Names are compared as written and with case, `_` and `-` ignored (so `maxMatches` finds
/// `max_matches`), by Jaro-Winkler similarity between names at most twice as long as each
/// other; an abbreviation (`cmd` for `command`) counts as close; below 0.8 nothing is close.
///
/// ```
/// use dsh_tools::subset::closest_name;
/// let declared = ["pattern", "path", "glob", "max_matches"];
/// assert_eq!(closest_name("maxMatches", declared.iter().copied()), Some("max_matches"));
/// assert_eq!(closest_name("pth", declared.iter().copied()), Some("path"));
/// assert_eq!(closest_name("cwd", declared.iter().copied()), None);
/// ```
pub fn closest_name<'a>(key: &str, declared: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let folded = fold(key);
    declared
        .map(|name| {
            let other = fold(name);
            let (a, b) = (folded.chars().count(), other.chars().count());
            // Jaro-Winkler rewards a shared prefix: `constructor` is not `count`.
            let mut score = if 2 * a.min(b) >= a.max(b) {
                strsim::jaro_winkler(key, name).max(strsim::jaro_winkler(&folded, &other))
            } else {
                0.0
            };
            if abbreviates(&folded, &other) {
                score = score.max(ABBREVIATION);
            }
            (score, name)
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// The score of a key that abbreviates a declared name: close, but below a near-exact match.
const ABBREVIATION: f64 = 0.85;

/// Whether `short` abbreviates `long`: at least 3 characters, the same first character, and
/// its characters in order within `long` (`cmd` for `command`, `desc` for `description`).
fn abbreviates(short: &str, long: &str) -> bool {
    if short.chars().count() < 3 || short.chars().next() != long.chars().next() {
        return false;
    }
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// `name` lowercased, without `_` and `-`.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The violation of key `key` of the object at `object` (a value path; `""` is the arguments
/// object), whose declared names are `declared`. `tool` names the tool whose arguments these
/// are (for the arguments object only).
///
/// ```
/// use dsh_tools::subset::unknown_key_violation;
/// let params = ["command", "description", "timeout_ms"];
/// assert_eq!(
///     unknown_key_violation(Some("bash"), "", "cmd", &params),
///     "\"cmd\" is not a parameter of bash; did you mean \"command\"?"
/// );
/// assert_eq!(
///     unknown_key_violation(Some("bash"), "", "cwd", &params),
///     "\"cwd\" is not a parameter of bash; its parameters are \"command\", \"description\", \"timeout_ms\""
/// );
/// assert_eq!(
///     unknown_key_violation(None, "opts", "x", &[]),
///     "\"opts.x\" is not a property of \"opts\", which has none"
/// );
/// ```
pub fn unknown_key_violation(
    tool: Option<&str>,
    object: &str,
    key: &str,
    declared: &[&str],
) -> String {
    let mut out = String::from("\"");
    if !object.is_empty() {
        out.push_str(object);
        out.push('.');
    }
    out.push_str(key);
    let (noun, plural) = if object.is_empty() {
        out.push_str("\" is not a parameter");
        if let Some(tool) = tool {
            out.push_str(" of ");
            out.push_str(tool);
        }
        ("parameters", "takes")
    } else {
        out.push_str("\" is not a property of \"");
        out.push_str(display(object));
        out.push('"');
        ("properties", "has")
    };
    if declared.is_empty() {
        out.push_str(", which ");
        out.push_str(plural);
        out.push_str(" none");
    } else if let Some(near) = closest_name(key, declared.iter().copied()) {
        out.push_str("; did you mean \"");
        out.push_str(near);
        out.push_str("\"?");
    } else {
        out.push_str("; its ");
        out.push_str(noun);
        out.push_str(" are ");
        for (i, name) in declared.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push('"');
            out.push_str(name);
            out.push('"');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_of_the_violation() {
        assert_eq!(
            unknown_key_violation(None, "", "pth", &["path"]),
            "\"pth\" is not a parameter; did you mean \"path\"?"
        );
        assert_eq!(
            unknown_key_violation(Some("ping"), "", "x", &[]),
            "\"x\" is not a parameter of ping, which takes none"
        );
        assert_eq!(
            unknown_key_violation(None, "servers[1]", "hots", &["host", "port"]),
            "\"servers[1].hots\" is not a property of \"servers[1]\"; did you mean \"host\"?"
        );
        assert_eq!(
            unknown_key_violation(None, "opts", "zzz", &["limit", "offset"]),
            "\"opts.zzz\" is not a property of \"opts\"; its properties are \"limit\", \"offset\""
        );
    }

    #[test]
    fn case_and_separators_do_not_hide_the_name_meant() {
        let declared = ["file_path", "old_text", "new_text"];
        assert_eq!(
            closest_name("filePath", declared.iter().copied()),
            Some("file_path")
        );
        assert_eq!(
            closest_name("NEW-TEXT", declared.iter().copied()),
            Some("new_text")
        );
        assert_eq!(closest_name("content", declared.iter().copied()), None);
        let declared = ["path", "count", "options"];
        assert_eq!(closest_name("constructor", declared.iter().copied()), None);
    }
}
