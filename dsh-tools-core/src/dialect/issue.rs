//! What a rendering changed or could not express ([`Issue`]), and why it failed
//! ([`DialectError`]).

use std::fmt;

use super::Dialect;

/// How a rendered schema differs from the canonical one at one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum IssueKind {
    /// A constraint keyword was removed: the rendered schema accepts more than the canonical one.
    /// The tool's own argument validation still enforces it, so a model that sends a value the
    /// keyword forbids gets an `INVALID_ARGS` result and can retry.
    Dropped,
    /// A node was replaced by a looser one (a `$ref` cycle Gemini cannot inline, a root union
    /// merged into one object, a node nested too deeply, a node that is not a schema).
    Degraded,
    /// The dialect cannot express the node at all (OpenAI strict mode: an open map, a node that
    /// accepts any value, an unresolvable `$ref`, a limit exceeded). With
    /// [`OnUnsupported::Error`](super::OnUnsupported::Error) these fail the rendering; with
    /// [`OnUnsupported::NonStrict`](super::OnUnsupported::NonStrict) the tool is sent
    /// non-strict.
    Unsupported,
}

impl IssueKind {
    /// The stable code: `DROPPED_KEYWORD`, `DEGRADED_NODE` or `UNSUPPORTED_NODE`.
    ///
    /// ```
    /// use dsh_tools_runtime::dialect::IssueKind;
    /// assert_eq!(IssueKind::Dropped.code(), "DROPPED_KEYWORD");
    /// ```
    pub const fn code(self) -> &'static str {
        match self {
            Self::Dropped => "DROPPED_KEYWORD",
            Self::Degraded => "DEGRADED_NODE",
            Self::Unsupported => "UNSUPPORTED_NODE",
        }
    }
}

/// One difference between the canonical schema and its rendering.
///
/// `path` is a JSON Pointer into the canonical schema written as a URI fragment: `#` is the
/// root, `#/properties/tags/items` a node below it (`~` and `/` inside keys escaped as `~0` and
/// `~1`). Nodes reached through a `$ref` are named by their place in the canonical document
/// (`#/$defs/Node/properties/next`); nodes of a root union merged into one object by the path
/// of the merged root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Issue {
    /// Where, in the canonical schema.
    pub path: String,
    /// What kind of difference.
    pub kind: IssueKind,
    /// What happened, for a developer (lowercase, no trailing period).
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Why a schema or a tool could not be rendered.
///
/// ```
/// use dsh_tools_runtime::dialect::{Dialect, DialectError};
/// let err = "openai".parse::<Dialect>().unwrap_err();
/// assert_eq!(err.code(), "UNKNOWN_DIALECT");
/// assert_eq!(
///     err.to_string(),
///     "unknown dialect \"openai\" (expected one of: mcp, openai-strict, gemini, anthropic)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DialectError {
    /// A dialect name that is not one of `mcp`, `openai-strict`, `gemini`, `anthropic`.
    #[error("unknown dialect \"{0}\" (expected one of: mcp, openai-strict, gemini, anthropic)")]
    UnknownDialect(String),
    /// The parameter schema is not a JSON Schema (a number, a string, an array, `null`, or the
    /// `false` schema).
    #[error("the parameter schema is not a JSON schema object (found {found})")]
    NotASchema {
        /// What was found, e.g. `a number`.
        found: &'static str,
    },
    /// The parameter schema's root does not describe an object (tool arguments are objects).
    #[error("the parameter schema must describe an object (its root has type {found})")]
    RootNotObject {
        /// The root's `type`, as JSON.
        found: String,
    },
    /// OpenAI strict mode cannot express the schema and the caller asked for an error rather
    /// than a non-strict tool.
    #[error("{dialect} cannot express the schema: {}", join(issues))]
    Unsupported {
        /// The dialect.
        dialect: Dialect,
        /// Every [`IssueKind::Unsupported`] issue, in document order.
        issues: Vec<Issue>,
    },
    /// The provider rejects the tool's name.
    #[error("{dialect} rejects the tool name \"{name}\": {rule}")]
    InvalidToolName {
        /// The dialect.
        dialect: Dialect,
        /// The name.
        name: String,
        /// The provider's rule.
        rule: &'static str,
    },
    /// Rendering one tool failed.
    #[error("tool \"{tool}\": {source}")]
    Tool {
        /// The tool's name.
        tool: String,
        /// Why.
        source: Box<DialectError>,
    },
}

fn join(issues: &[Issue]) -> String {
    let parts: Vec<String> = issues.iter().map(Issue::to_string).collect();
    parts.join("; ")
}

impl DialectError {
    /// The stable code: `UNKNOWN_DIALECT`, `NOT_A_SCHEMA`, `ROOT_NOT_OBJECT`,
    /// `UNSUPPORTED_SCHEMA`, `INVALID_TOOL_NAME`, or the code of the source for
    /// [`DialectError::Tool`].
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownDialect(_) => "UNKNOWN_DIALECT",
            Self::NotASchema { .. } => "NOT_A_SCHEMA",
            Self::RootNotObject { .. } => "ROOT_NOT_OBJECT",
            Self::Unsupported { .. } => "UNSUPPORTED_SCHEMA",
            Self::InvalidToolName { .. } => "INVALID_TOOL_NAME",
            Self::Tool { source, .. } => source.code(),
        }
    }
}

/// The issues of one rendering, deduplicated (a `$defs` entry inlined at several places reports
/// once), in the order they were found.
#[derive(Debug, Default)]
pub(crate) struct Issues {
    list: Vec<Issue>,
}

impl Issues {
    pub(crate) fn push(&mut self, path: &str, kind: IssueKind, message: impl Into<String>) {
        let message = message.into();
        if self
            .list
            .iter()
            .any(|i| i.kind == kind && i.path == path && i.message == message)
        {
            return;
        }
        self.list.push(Issue {
            path: path.to_owned(),
            kind,
            message,
        });
    }

    pub(crate) fn dropped(&mut self, path: &str, keyword: &str, why: &str) {
        self.push(
            &child(path, keyword),
            IssueKind::Dropped,
            format!("`{keyword}` dropped: {why}"),
        );
    }

    pub(crate) fn of(&self, kind: IssueKind) -> Vec<Issue> {
        self.list
            .iter()
            .filter(|i| i.kind == kind)
            .cloned()
            .collect()
    }

    pub(crate) fn into_vec(self) -> Vec<Issue> {
        self.list
    }

    pub(crate) fn extend(&mut self, other: Issues) {
        for issue in other.list {
            self.push(&issue.path, issue.kind, issue.message);
        }
    }
}

/// The pointer of `key` below `path` (`~` → `~0`, `/` → `~1`).
pub(crate) fn child(path: &str, key: &str) -> String {
    let mut out = String::with_capacity(path.len() + key.len() + 1);
    out.push_str(path);
    out.push('/');
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// The pointer of item `index` below `path`.
pub(crate) fn item(path: &str, key: &str, index: usize) -> String {
    format!("{}/{index}", child(path, key))
}
