//! Result cards: the completed state of a tool call.

use serde::{Deserialize, Serialize};

use super::FileDiff;
use crate::content::ContentBlock;

/// How a UI renders a completed call (`presentResult`), tagged by `card` on the wire.
///
/// The `search` and `web` cards carry a second tag (`shape` / `kind`) from their inner enum.
///
/// ```
/// use dsh_tools::present::{SearchView, ToolResultView};
///
/// let view = ToolResultView::terminal_output("ok\n").with_exit_code(0);
/// let json = r#"{"card":"terminal","output":"ok\n","exitCode":0}"#;
/// assert_eq!(serde_json::to_string(&view).unwrap(), json);
/// assert_eq!(serde_json::from_str::<ToolResultView>(json).unwrap(), view);
///
/// let view = ToolResultView::from(SearchView::paths(vec!["a.rs".into()], false, 1));
/// let json = r#"{"card":"search","shape":"paths","paths":["a.rs"],"truncated":false,"total":1}"#;
/// assert_eq!(serde_json::to_string(&view).unwrap(), json);
/// assert_eq!(serde_json::from_str::<ToolResultView>(json).unwrap(), view);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "card",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum ToolResultView {
    /// `{card:"generic", title?, content?}` — a replacement title and reformatted content.
    Generic {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Reformatted content (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
    },
    /// `{card:"terminal", title?, output?, exitCode?, signal?}` — captured output and exit status.
    Terminal {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The raw captured output; the UI bridge derives any fenced fallback (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The exit code (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The terminating signal, e.g. `SIGKILL` (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
    /// `{card:"diff", title?, diffs}` — a completed file mutation.
    Diff {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The applied changes.
        diffs: Vec<FileDiff>,
    },
    /// `{card:"search", shape:…, …}` — search hits.
    Search(SearchView),
    /// `{card:"read", title?, path, offset, lines, totalLines, lang?, content?}` — a file excerpt.
    Read {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The file path.
        path: String,
        /// The requested first line, 1-based (kept even when `lines` is empty).
        offset: u64,
        /// The lines returned.
        lines: Vec<ReadLine>,
        /// The number of lines in the whole file.
        total_lines: u64,
        /// A language hint for highlighting (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lang: Option<String>,
        /// Extra content blocks (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ContentBlock>>,
    },
    /// `{card:"web", kind:…, …}` — a web search or fetch.
    Web(WebView),
}

/// The `search` result card, tagged by `shape` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "shape",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum SearchView {
    /// `{shape:"matches", title?, files, truncated, total}` — matching lines grouped by file.
    Matches {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The files with matches.
        files: Vec<SearchFile>,
        /// Whether the listing was cut short.
        truncated: bool,
        /// The total number of matches found.
        total: u64,
    },
    /// `{shape:"paths", title?, paths, truncated, total}` — matching paths.
    Paths {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The matching paths.
        paths: Vec<String>,
        /// Whether the listing was cut short.
        truncated: bool,
        /// The total number of paths found.
        total: u64,
    },
}

/// One file's hits in a `matches` search card: `{path, matches}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SearchFile {
    /// The file path.
    pub path: String,
    /// The matching lines.
    pub matches: Vec<SearchMatch>,
}

/// One matching line: `{lineNumber, line}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// The 1-based line number.
    pub line_number: u64,
    /// The line's text.
    pub line: String,
}

/// One line of a `read` card: `{number, text}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadLine {
    /// The 1-based line number.
    pub number: u64,
    /// The line's text.
    pub text: String,
}

/// The `web` result card, tagged by `kind` on the wire.
///
/// ```
/// use dsh_tools::present::{ToolResultView, WebView};
/// let view = ToolResultView::from(WebView::fetch("https://example.com", 200, false));
/// assert_eq!(
///     serde_json::to_string(&view).unwrap(),
///     r#"{"card":"web","kind":"fetch","url":"https://example.com","statusCode":200,"truncated":false}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum WebView {
    /// `{kind:"search", title?, sources, answer?, truncated}` — web search results.
    Search {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The sources found.
        sources: Vec<WebSource>,
        /// A synthesized answer (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// Whether the listing was cut short.
        truncated: bool,
    },
    /// `{kind:"fetch", title?, url, statusCode, truncated}` — a fetched page.
    Fetch {
        /// A replacement title (omitted when `None`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The fetched URL.
        url: String,
        /// The HTTP status code.
        status_code: u16,
        /// Whether the body was cut short.
        truncated: bool,
    },
}

/// One web search source: `{url, title?, snippet?, publishedAt?}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSource {
    /// The source URL.
    pub url: String,
    /// The page title (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A text snippet (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// The publication date as reported by the provider (omitted when `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
}

impl SearchView {
    /// A `matches` card without a title.
    pub fn matches(files: Vec<SearchFile>, truncated: bool, total: u64) -> Self {
        Self::Matches {
            title: None,
            files,
            truncated,
            total,
        }
    }

    /// A `paths` card without a title.
    pub fn paths(paths: Vec<String>, truncated: bool, total: u64) -> Self {
        Self::Paths {
            title: None,
            paths,
            truncated,
            total,
        }
    }
}

impl WebView {
    /// A `search` card without a title or answer.
    pub fn search(sources: Vec<WebSource>, truncated: bool) -> Self {
        Self::Search {
            title: None,
            sources,
            answer: None,
            truncated,
        }
    }

    /// A `fetch` card without a title.
    pub fn fetch(url: impl Into<String>, status_code: u16, truncated: bool) -> Self {
        Self::Fetch {
            title: None,
            url: url.into(),
            status_code,
            truncated,
        }
    }
}

impl From<SearchView> for ToolResultView {
    fn from(view: SearchView) -> Self {
        Self::Search(view)
    }
}

impl From<WebView> for ToolResultView {
    fn from(view: WebView) -> Self {
        Self::Web(view)
    }
}

impl ToolResultView {
    /// A generic card replacing the result content.
    pub fn generic_content(content: Vec<ContentBlock>) -> Self {
        Self::Generic {
            title: None,
            content: Some(content),
        }
    }

    /// A terminal card with captured `output` (add the status with [`Self::with_exit_code`] /
    /// [`Self::with_signal`]).
    pub fn terminal_output(output: impl Into<String>) -> Self {
        Self::Terminal {
            title: None,
            output: Some(output.into()),
            exit_code: None,
            signal: None,
        }
    }

    /// A diff card of applied changes.
    pub fn diff(diffs: Vec<FileDiff>) -> Self {
        Self::Diff { title: None, diffs }
    }

    /// The wire `card` tag: `generic`, `terminal`, `diff`, `search`, `read` or `web`.
    pub fn card(&self) -> &'static str {
        match self {
            Self::Generic { .. } => "generic",
            Self::Terminal { .. } => "terminal",
            Self::Diff { .. } => "diff",
            Self::Search(_) => "search",
            Self::Read { .. } => "read",
            Self::Web(_) => "web",
        }
    }

    /// The replacement title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title_slot().as_deref()
    }

    /// Sets the replacement title (every card has one, including the nested search/web cards).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        *self.title_slot_mut() = Some(title.into());
        self
    }

    /// Sets `exitCode` on a terminal card; other cards are returned unchanged.
    pub fn with_exit_code(mut self, code: i32) -> Self {
        if let Self::Terminal { exit_code, .. } = &mut self {
            *exit_code = Some(code);
        }
        self
    }

    /// Sets `signal` on a terminal card; other cards are returned unchanged.
    pub fn with_signal(mut self, name: impl Into<String>) -> Self {
        if let Self::Terminal { signal, .. } = &mut self {
            *signal = Some(name.into());
        }
        self
    }

    fn title_slot(&self) -> &Option<String> {
        match self {
            Self::Generic { title, .. }
            | Self::Terminal { title, .. }
            | Self::Diff { title, .. }
            | Self::Read { title, .. }
            | Self::Search(SearchView::Matches { title, .. } | SearchView::Paths { title, .. })
            | Self::Web(WebView::Search { title, .. } | WebView::Fetch { title, .. }) => title,
        }
    }

    fn title_slot_mut(&mut self) -> &mut Option<String> {
        match self {
            Self::Generic { title, .. }
            | Self::Terminal { title, .. }
            | Self::Diff { title, .. }
            | Self::Read { title, .. }
            | Self::Search(SearchView::Matches { title, .. } | SearchView::Paths { title, .. })
            | Self::Web(WebView::Search { title, .. } | WebView::Fetch { title, .. }) => title,
        }
    }
}
