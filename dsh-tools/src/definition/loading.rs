//! Whether a tool's definition is sent to the model up front (`docs/CONTRACTS.md`, "Tool search
//! and deferred loading").

use serde::{Deserialize, Serialize};

/// Whether a tool is loaded into the model's context up front or found on demand
/// (`#[tool(deferred)]`, `#[tool(pinned)]`, [`ToolBuilder::loading`](super::ToolBuilder::loading)).
///
/// - [`Loading::Auto`] (the default): loaded, unless the registry defers everything beyond a
///   number of tools (`ToolRegistry::defer_beyond` in `dsh-tools-runtime`).
/// - [`Loading::Deferred`]: not on the wire list nor in the Code Mode SDK until the model finds
///   it with tool search; it stays executable all along.
/// - [`Loading::Pinned`]: always loaded, whatever the registry's threshold.
///
/// ```
/// use dsh_tools::{Loading, ToolDefinition};
///
/// let archive = ToolDefinition::builder("archive_issue")
///     .description("Archive an issue.")
///     .loading(Loading::Deferred)
///     .execute(|_, _| async { Ok(serde_json::Value::Null) })
///     .build()
///     .unwrap();
/// assert_eq!(archive.loading(), Loading::Deferred);
/// // Any definition can be re-marked (an imported server's tools, for instance).
/// assert_eq!(archive.with_loading(Loading::Pinned).loading(), Loading::Pinned);
/// assert_eq!(serde_json::to_string(&Loading::Deferred).unwrap(), "\"deferred\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Loading {
    /// Loaded up front unless the registry's threshold defers it (the default).
    #[default]
    Auto,
    /// Found on demand through tool search.
    Deferred,
    /// Always loaded.
    Pinned,
}

impl Loading {
    /// The wire name: `auto`, `deferred` or `pinned`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Deferred => "deferred",
            Self::Pinned => "pinned",
        }
    }
}
