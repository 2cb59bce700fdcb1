//! Tool-owned UI presentation: card-tagged render intents.
//!
//! A tool describes how a UI should render its calls with a [`ToolCallView`] (the pending state,
//! from `presentCall(args)`) and a [`ToolResultView`] (the completed state, from
//! `presentResult(args, result)`). Both are provider-neutral, tagged by `card` on the wire; a UI
//! bridge switches on the card and maps it to its own protocol. When a tool declares no presenter
//! (or its presenter returns `None`) a UI uses [`fallback_call_view`] / [`fallback_result_view`].
//!
//! Presenters must be pure: UIs call them during live streaming *and* during a session-log replay,
//! so a view may depend only on the arguments and the durable [`ToolResult`].

mod call;
mod result;

pub use call::{ToolCallView, ToolKind};
pub use result::{
    ReadLine, SearchFile, SearchMatch, SearchView, ToolResultView, WebSource, WebView,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ToolResult;

/// A file location a call reads or modifies: `{path, line?}`.
///
/// ```
/// use dsh_tools::present::Location;
/// let loc = Location::new("src/main.rs").at_line(7);
/// assert_eq!(serde_json::to_string(&loc).unwrap(), r#"{"path":"src/main.rs","line":7}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    /// The file path.
    pub path: String,
    /// The 1-based line (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl Location {
    /// A location naming a whole file.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line: None,
        }
    }

    /// The same location at `line` (1-based).
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }
}

/// One file's change for a diff card: `{path, oldText, newText}`.
///
/// `oldText` is always written; `null` (`None`) means the file is new.
///
/// ```
/// use dsh_tools::present::FileDiff;
/// let diff = FileDiff::created("a.txt", "hi\n");
/// assert_eq!(
///     serde_json::to_string(&diff).unwrap(),
///     r#"{"path":"a.txt","oldText":null,"newText":"hi\n"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The file path.
    pub path: String,
    /// The text before the change; `None` (wire `null`) for a new file.
    pub old_text: Option<String>,
    /// The text after the change.
    pub new_text: String,
}

impl FileDiff {
    /// A change of an existing file from `old_text` to `new_text`.
    pub fn modified(
        path: impl Into<String>,
        old_text: impl Into<String>,
        new_text: impl Into<String>,
    ) -> Self {
        Self {
            path: path.into(),
            old_text: Some(old_text.into()),
            new_text: new_text.into(),
        }
    }

    /// The creation of a new file (`oldText: null`).
    pub fn created(path: impl Into<String>, new_text: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            old_text: None,
            new_text: new_text.into(),
        }
    }
}

/// The generic call card a UI shows when a tool has no call presenter (or it returned `None`):
/// the title is the tool name and the raw input is the whole argument value.
///
/// ```
/// use dsh_tools::present::fallback_call_view;
/// let view = fallback_call_view("grep", &serde_json::json!({"pattern": "fn"}));
/// assert_eq!(
///     serde_json::to_string(&view).unwrap(),
///     r#"{"card":"generic","title":"grep","rawInput":{"pattern":"fn"}}"#
/// );
/// ```
pub fn fallback_call_view(tool_name: &str, args: &Value) -> ToolCallView {
    ToolCallView::generic(tool_name).with_raw_input(args.clone())
}

/// The generic result card a UI shows when a tool has no result presenter (or it returned
/// `None`): the raw result content, no replacement title.
///
/// ```
/// use dsh_tools::{ContentBlock, ToolResult, present::fallback_result_view};
/// let result = ToolResult { content: vec![ContentBlock::text("ok")], is_error: false, meta: None };
/// assert_eq!(
///     serde_json::to_string(&fallback_result_view(&result)).unwrap(),
///     r#"{"card":"generic","content":[{"type":"text","text":"ok"}]}"#
/// );
/// ```
pub fn fallback_result_view(result: &ToolResult) -> ToolResultView {
    ToolResultView::generic_content(result.content.clone())
}
