//! Call cards: the pending state of a tool call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{FileDiff, Location};
use crate::content::{ContentBlock, present_json};

/// The icon/treatment class of a generic call card; lowercase on the wire, default `other`.
///
/// ```
/// use dsh_tools::present::ToolKind;
/// assert_eq!(serde_json::to_string(&ToolKind::Execute).unwrap(), r#""execute""#);
/// assert_eq!(ToolKind::default(), ToolKind::Other);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Modifies files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches files or data.
    Search,
    /// Runs a command or program.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

/// How a UI renders a pending call (`presentCall`), tagged by `card` on the wire.
///
/// ```
/// use dsh_tools::present::{Location, ToolCallView, ToolKind};
///
/// let view = ToolCallView::generic("Read notes.md")
///     .with_kind(ToolKind::Read)
///     .with_locations(vec![Location::new("notes.md").at_line(3)]);
/// let json = r#"{"card":"generic","title":"Read notes.md","kind":"read","locations":[{"path":"notes.md","line":3}]}"#;
/// assert_eq!(serde_json::to_string(&view).unwrap(), json);
/// assert_eq!(serde_json::from_str::<ToolCallView>(json).unwrap(), view);
///
/// let view = ToolCallView::terminal("cargo test").with_description("Run the tests");
/// assert_eq!(
///     serde_json::to_string(&view).unwrap(),
///     r#"{"card":"terminal","title":"cargo test","description":"Run the tests"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "card",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum ToolCallView {
    /// The default card: `{card:"generic", title, kind?, rawInput?, content?, locations?}`.
    Generic {
        /// A human-readable title.
        title: String,
        /// The icon/treatment class (omitted when `None`; UIs treat absence as `other`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<ToolKind>,
        /// The salient input to show in a detail view (omitted when `None`; a present `null` is
        /// kept as `Some(Null)`).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "present_json"
        )]
        raw_input: Option<Value>,
        /// Extra UI content blocks (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
        /// Files the call reads or modifies (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<Location>>,
    },
    /// A shell command: `{card:"terminal", title, description?, cwd?}`.
    Terminal {
        /// The command.
        title: String,
        /// A one-line summary rendered above the command (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The working directory heading the card (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// A file create/modify: `{card:"diff", title, diffs, locations?}`.
    Diff {
        /// A human-readable title.
        title: String,
        /// The proposed changes.
        diffs: Vec<FileDiff>,
        /// Files the call modifies (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<Location>>,
    },
}

impl ToolCallView {
    /// A generic card with only a title.
    pub fn generic(title: impl Into<String>) -> Self {
        Self::Generic {
            title: title.into(),
            kind: None,
            raw_input: None,
            content: None,
            locations: None,
        }
    }

    /// A terminal card whose title is `command`.
    pub fn terminal(command: impl Into<String>) -> Self {
        Self::Terminal {
            title: command.into(),
            description: None,
            cwd: None,
        }
    }

    /// A diff card.
    pub fn diff(title: impl Into<String>, diffs: Vec<FileDiff>) -> Self {
        Self::Diff {
            title: title.into(),
            diffs,
            locations: None,
        }
    }

    /// The wire `card` tag: `generic`, `terminal` or `diff`.
    pub fn card(&self) -> &'static str {
        match self {
            Self::Generic { .. } => "generic",
            Self::Terminal { .. } => "terminal",
            Self::Diff { .. } => "diff",
        }
    }

    /// The card's title (the command, for a terminal card).
    pub fn title(&self) -> &str {
        match self {
            Self::Generic { title, .. }
            | Self::Terminal { title, .. }
            | Self::Diff { title, .. } => title,
        }
    }

    /// Sets `kind` on a generic card; other cards are returned unchanged.
    pub fn with_kind(mut self, new: ToolKind) -> Self {
        if let Self::Generic { kind, .. } = &mut self {
            *kind = Some(new);
        }
        self
    }

    /// Sets `rawInput` on a generic card; other cards are returned unchanged.
    pub fn with_raw_input(mut self, input: Value) -> Self {
        if let Self::Generic { raw_input, .. } = &mut self {
            *raw_input = Some(input);
        }
        self
    }

    /// Sets `content` on a generic card; other cards are returned unchanged.
    pub fn with_content(mut self, blocks: Vec<ContentBlock>) -> Self {
        if let Self::Generic { content, .. } = &mut self {
            *content = Some(blocks);
        }
        self
    }

    /// Sets `locations` on a generic or diff card; a terminal card is returned unchanged.
    pub fn with_locations(mut self, new: Vec<Location>) -> Self {
        match &mut self {
            Self::Generic { locations, .. } | Self::Diff { locations, .. } => {
                *locations = Some(new)
            }
            Self::Terminal { .. } => {}
        }
        self
    }

    /// Sets `description` on a terminal card; other cards are returned unchanged.
    pub fn with_description(mut self, text: impl Into<String>) -> Self {
        if let Self::Terminal { description, .. } = &mut self {
            *description = Some(text.into());
        }
        self
    }

    /// Sets `cwd` on a terminal card; other cards are returned unchanged.
    pub fn with_cwd(mut self, dir: impl Into<String>) -> Self {
        if let Self::Terminal { cwd, .. } = &mut self {
            *cwd = Some(dir.into());
        }
        self
    }
}
