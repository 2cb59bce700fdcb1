//! Provider schema dialects: one canonical parameter schema, rendered for MCP, OpenAI strict
//! mode, Gemini and Anthropic.
//!
//! The canonical schema is whatever a tool declares: the schemas `#[tool]` derives from Rust
//! types (`Option<T>` as `oneOf: [T, {"type": "null"}]`, maps as a schema-valued
//! `additionalProperties`, serde-tagged enums as `oneOf`), or an imported schema as MCP servers
//! send it (`$ref`/`$defs`, `anyOf`, type arrays, OpenAPI `nullable`, old drafts).
//! [`render_schema`] turns it into what one provider accepts and reports, with a JSON path,
//! every place where the rendering had to change its meaning ([`Issue`]).
//! [`render_tool`] wraps a whole tool in the provider's wire shape, and
//! [`ToolRegistry::schemas_in`](crate::ToolRegistry::schemas_in) renders a scope's tools.
//!
//! | dialect | parameters | tool wire shape |
//! |---|---|---|
//! | [`Dialect::Mcp`] | JSON Schema 2020-12 | `{name, description, inputSchema, outputSchema?, annotations?}` |
//! | [`Dialect::OpenAiStrict`] | the strict subset (below) | `{type: "function", function: {name, description, parameters, strict}}` |
//! | [`Dialect::Gemini`] | the OpenAPI 3.0 subset | `{name, description, parameters?}` |
//! | [`Dialect::Anthropic`] | JSON Schema 2020-12, no root combinator | `{name, description, input_schema}` |
//!
//! Every dialect first normalises the schema to plain 2020-12 (`$schema` removed, `nullable`
//! folded into the type, draft-04/07 spellings updated) and requires an object root (a missing
//! root `type` is added; a root `title` is removed). All but MCP also merge root
//! `allOf`/`anyOf`/`oneOf` into one object, which the three APIs require. Then:
//!
//! - **MCP** and **Anthropic** send the normalised schema.
//! - **OpenAI strict** makes every property required (optional ones nullable), closes every
//!   object, and drops or rejects what strict mode lacks; see [`OnUnsupported`] for what
//!   happens when a shape cannot be strict, and [`restore_omitted`] for the arguments that come
//!   back.
//! - **Gemini** inlines `$ref`s, turns `null` unions into `nullable`, keeps one `type` per
//!   node and nothing beside `anyOf`.
//!
//! Rendering never panics, whatever the input, and needs little stack: values nested deeper
//! than 128 JSON levels are cut ([`IssueKind::Degraded`]); the OpenAI and Gemini renderers
//! follow at most 32 schema levels (nested properties, items, branches and inlined `$ref`s —
//! deeper nodes are unsupported for OpenAI and empty schemas for Gemini) and at most 10,000
//! nodes; every other traversal is bounded by those.
//!
//! ```
//! use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_schema};
//! use serde_json::json;
//!
//! let canonical = json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string"},
//!         "limit": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
//!     },
//!     "required": ["path"]
//! });
//! let openai = render_schema(&canonical, Dialect::OpenAiStrict, &DialectOptions::default()).unwrap();
//! assert!(openai.strict);
//! assert_eq!(openai.schema, json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string"},
//!         "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
//!     },
//!     "required": ["path", "limit"],
//!     "additionalProperties": false
//! }));
//!
//! let gemini = render_schema(&canonical, Dialect::Gemini, &DialectOptions::default()).unwrap();
//! assert_eq!(gemini.schema, json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string"},
//!         "limit": {"type": "integer", "nullable": true, "minimum": 1}
//!     },
//!     "required": ["path"]
//! }));
//! ```

mod args;
mod bounded;
mod gemini;
mod issue;
mod merge;
mod normalize;
mod openai;
pub(crate) mod refs;
mod root;
mod tool;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

pub use args::restore_omitted;
pub use issue::{DialectError, Issue, IssueKind};
pub use tool::{RenderedTool, ToolInfo, render_tool};

use issue::Issues;

/// A provider's schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Model Context Protocol tools (`inputSchema`, JSON Schema 2020-12).
    Mcp,
    /// OpenAI function calling with `"strict": true` (Structured Outputs).
    OpenAiStrict,
    /// Gemini function declarations (an OpenAPI 3.0 schema subset).
    Gemini,
    /// Anthropic tools (`input_schema`).
    Anthropic,
}

impl Dialect {
    /// Every dialect, in the order of their names in messages.
    pub const ALL: [Dialect; 4] = [
        Dialect::Mcp,
        Dialect::OpenAiStrict,
        Dialect::Gemini,
        Dialect::Anthropic,
    ];

    /// The name: `mcp`, `openai-strict`, `gemini` or `anthropic`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::OpenAiStrict => "openai-strict",
            Self::Gemini => "gemini",
            Self::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses `mcp`, `openai-strict`, `gemini` or `anthropic`.
///
/// ```
/// use dsh_tools_runtime::dialect::Dialect;
/// assert_eq!("openai-strict".parse::<Dialect>().unwrap(), Dialect::OpenAiStrict);
/// assert!("OpenAI".parse::<Dialect>().is_err());
/// ```
impl FromStr for Dialect {
    type Err = DialectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| DialectError::UnknownDialect(s.to_owned()))
    }
}

/// What OpenAI strict rendering does when a schema has a shape strict mode cannot express
/// ([`IssueKind::Unsupported`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnUnsupported {
    /// Send the tool non-strict (`"strict": false`) with the normalised schema; the issues
    /// explain why. The model may then send arguments that do not match, which the tool's own
    /// validation catches.
    #[default]
    NonStrict,
    /// Fail with [`DialectError::Unsupported`], listing every unsupported place.
    Error,
}

/// Rendering options.
///
/// ```
/// use dsh_tools_runtime::dialect::{DialectOptions, OnUnsupported};
/// let options = DialectOptions::default().on_unsupported(OnUnsupported::Error);
/// assert_eq!(options.on_unsupported, OnUnsupported::Error);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct DialectOptions {
    /// OpenAI strict mode: non-strict fallback or an error (default: fallback).
    pub on_unsupported: OnUnsupported,
}

impl DialectOptions {
    /// Sets [`DialectOptions::on_unsupported`].
    #[must_use]
    pub fn on_unsupported(mut self, on_unsupported: OnUnsupported) -> Self {
        self.on_unsupported = on_unsupported;
        self
    }
}

/// A rendered parameter schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The schema in the dialect.
    pub schema: Value,
    /// OpenAI strict mode: whether the schema is strict (`false` after a non-strict
    /// fallback). Always `false` for the other dialects.
    pub strict: bool,
    /// Every place the rendering changed, in document order.
    pub issues: Vec<Issue>,
}

/// Renders a tool's parameter schema in `dialect`.
///
/// Fails when the schema is not a schema object ([`DialectError::NotASchema`]), does not
/// describe an object ([`DialectError::RootNotObject`]), or — for OpenAI strict mode with
/// [`OnUnsupported::Error`] — cannot be strict ([`DialectError::Unsupported`]).
///
/// ```
/// use dsh_tools_runtime::dialect::{Dialect, DialectOptions, IssueKind, OnUnsupported, render_schema};
/// use serde_json::json;
///
/// // A map (`HashMap<String, u32>`) has open keys: OpenAI strict mode cannot say that.
/// let schema = json!({
///     "type": "object",
///     "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"}}}
/// });
/// let lenient = render_schema(&schema, Dialect::OpenAiStrict, &DialectOptions::default()).unwrap();
/// assert!(!lenient.strict);
/// assert_eq!(lenient.schema, schema);
/// assert_eq!(lenient.issues[0].path, "#/properties/counts/additionalProperties");
/// assert_eq!(lenient.issues[0].kind, IssueKind::Unsupported);
///
/// let options = DialectOptions::default().on_unsupported(OnUnsupported::Error);
/// let err = render_schema(&schema, Dialect::OpenAiStrict, &options).unwrap_err();
/// assert_eq!(err.code(), "UNSUPPORTED_SCHEMA");
/// ```
pub fn render_schema(
    schema: &Value,
    dialect: Dialect,
    options: &DialectOptions,
) -> Result<Rendered, DialectError> {
    root::check_schema(schema)?;
    let mut issues = Issues::default();
    let bounded = bounded::bounded_copy(schema, &mut issues);
    let doc = normalize::normalize(&bounded, "#", &mut issues);
    let mut root = root::object_root(&doc, dialect != Dialect::Mcp, &mut issues)?;
    root.shift_remove("title");
    let root = Value::Object(root);
    let (schema, strict) = match dialect {
        Dialect::Mcp | Dialect::Anthropic => (root, false),
        Dialect::Gemini => {
            let mut gemini = gemini::Gemini::new(&root);
            let schema = gemini.node(&root, "#", 0);
            issues.extend(gemini.issues);
            (Value::Object(schema), false)
        }
        Dialect::OpenAiStrict => {
            let mut strict = openai::Strict::new(&root);
            let schema = strict.node(&root, "#", 0);
            openai::check_limits(&schema, &mut strict.issues);
            let unsupported = strict.issues.of(IssueKind::Unsupported);
            if unsupported.is_empty() {
                issues.extend(strict.issues);
                (schema, true)
            } else if options.on_unsupported == OnUnsupported::Error {
                return Err(DialectError::Unsupported {
                    dialect,
                    issues: unsupported,
                });
            } else {
                for issue in unsupported {
                    issues.push(&issue.path, issue.kind, issue.message);
                }
                (root, false)
            }
        }
    };
    Ok(Rendered {
        schema,
        strict,
        issues: issues.into_vec(),
    })
}
