//! Which OAuth scope each served tool needs.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

/// The scope a `tools/call` needs, per tool: a tool named in `tools` needs that scope, another
/// tool whose `readOnlyHint` is `true` needs `read_only`, every other tool `default`.
///
/// Without a map the defaults are `tools:read` for read-only tools and `tools:write` for the
/// rest. A token whose scopes lack a tool's scope can still list it (`tools/list` needs only a
/// valid token), and its `tools/call` is answered 403 `insufficient_scope` naming the scope, so
/// that a client can step up its authorization (`docs/CONTRACTS.md`, "MCP server
/// authorization").
///
/// A map file is JSON with these three optional fields:
///
/// ```
/// use dsh_tools_runtime::mcp::ScopeMap;
///
/// let map = ScopeMap::from_json(r#"{"readOnly": "files:read", "tools": {"bash": "shell"}}"#)
///     .unwrap();
/// assert_eq!(map.scope_for("bash", false), "shell");
/// assert_eq!(map.scope_for("read_file", true), "files:read");
/// assert_eq!(map.scope_for("write_file", false), "tools:write");
/// assert!(ScopeMap::from_json(r#"{"readonly": "x"}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScopeMap {
    #[serde(default = "read_scope")]
    read_only: String,
    #[serde(default = "write_scope")]
    default: String,
    #[serde(default)]
    tools: BTreeMap<String, String>,
}

fn read_scope() -> String {
    "tools:read".into()
}

fn write_scope() -> String {
    "tools:write".into()
}

impl Default for ScopeMap {
    fn default() -> Self {
        Self {
            read_only: read_scope(),
            default: write_scope(),
            tools: BTreeMap::new(),
        }
    }
}

impl ScopeMap {
    /// Reads a map file's JSON; the error names the field or value that is wrong.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The scope calling `tool` needs (`read_only`: the tool's `readOnlyHint` is `true`).
    pub fn scope_for(&self, tool: &str, read_only: bool) -> &str {
        match self.tools.get(tool) {
            Some(scope) => scope,
            None if read_only => &self.read_only,
            None => &self.default,
        }
    }

    /// Every scope the map names, sorted (the metadata's `scopes_supported`).
    pub fn all(&self) -> Vec<String> {
        let mut all: BTreeSet<&String> = self.tools.values().collect();
        all.insert(&self.read_only);
        all.insert(&self.default);
        all.into_iter().cloned().collect()
    }
}

/// The scopes a token grants: its `scope` claim (space-separated, RFC 9068) or its `scp` claim
/// (an array or a string, as some servers issue).
pub(super) fn granted(claims: &serde_json::Value) -> BTreeSet<String> {
    let words = |s: &str| {
        s.split_ascii_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut scopes = BTreeSet::new();
    for claim in ["scope", "scp"] {
        match claims.get(claim) {
            Some(serde_json::Value::String(s)) => scopes.extend(words(s)),
            Some(serde_json::Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(|v| v.as_str()).map(str::to_owned));
            }
            _ => {}
        }
    }
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_split_read_only_from_the_rest() {
        let map = ScopeMap::default();
        assert_eq!(map.scope_for("read_file", true), "tools:read");
        assert_eq!(map.scope_for("bash", false), "tools:write");
        assert_eq!(map.all(), ["tools:read", "tools:write"]);
    }

    #[test]
    fn granted_reads_scope_and_scp() {
        let claims = serde_json::json!({"scope": "a  b", "scp": ["c"]});
        assert_eq!(
            granted(&claims),
            BTreeSet::from(["a".into(), "b".into(), "c".into()])
        );
        assert!(granted(&serde_json::json!({"scope": 3})).is_empty());
    }
}
