//! `grep`: search file contents with a regular expression.

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use dsh_tools::present::{SearchFile, SearchMatch, SearchView, ToolKind};
use dsh_tools::{
    ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolRunContext, ToolSchema, tool,
};
use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::walk::{PathFilter, SearchRoot, files_under, search_blocking};
use super::{cut_line, excerpt, looks_binary, meta_output, not_found, output_meta};

/// How many matching lines `grep` returns when the call gives no `max_matches`.
const DEFAULT_MAX_MATCHES: u32 = 200;

/// Matching lines longer than this (in characters) are cut.
const MAX_LINE_CHARS: usize = 500;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepMatch {
    /// The 1-based line number.
    pub line_number: u64,
    /// The line's text (cut after 500 characters).
    pub line: String,
}

/// The matching lines of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepFile {
    /// The file, written relative to `path` as it was given.
    pub path: String,
    /// Its matching lines, in line order.
    pub matches: Vec<GrepMatch>,
}

/// What `grep` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GrepOutput {
    /// The files with matches, sorted by path.
    pub files: Vec<GrepFile>,
    /// Whether more lines matched than were returned.
    pub truncated: bool,
    /// How many lines matched in all.
    pub total: u64,
}

/// Search file contents with a regular expression and return the matching lines grouped by file,
/// files sorted by path. Binary files and `.git` and `target` directories are skipped. Use glob
/// to find files by name.
#[tool(
    concurrency_safe = true,
    read_only,
    present_call = grep_call_card,
    present_result = grep_result_card,
    presentation_meta = grep_meta,
    render = render_grep
)]
pub async fn grep(
    /// The regular expression, in Rust `regex` syntax (`fn\s+main`; `(?i)todo` ignores case).
    #[schema(length(min = 1, max = 1024))]
    pattern: String,
    /// The file or directory to search (default: the current directory).
    #[schema(length(max = 4096))]
    path: Option<String>,
    /// Only search files matching this glob, as in the glob tool (`*.rs`, `src/**/*.ts`).
    #[schema(length(max = 1024))]
    glob: Option<String>,
    /// The maximum number of matching lines to return (default 200).
    #[schema(range(min = 1, max = 10000))]
    max_matches: Option<u32>,
    ctx: ToolRunContext,
) -> Result<GrepOutput, String> {
    let max_matches = max_matches.unwrap_or(DEFAULT_MAX_MATCHES);
    if max_matches == 0 {
        return Err("max_matches must be at least 1".into());
    }
    let root = SearchRoot::new(path.as_deref())?;
    // Compiling the patterns is CPU work: off the async threads, like the search.
    search_blocking(&ctx, move |stop| {
        let regex = compile(&pattern)?;
        let filter = glob.as_deref().map(PathFilter::new).transpose()?;
        search(&root, &regex, filter.as_ref(), max_matches as usize, stop)
    })
    .await
}

/// The compiled size a regex may reach (the `regex` crate's default): a larger one is an
/// error, never a panic.
const REGEX_SIZE_LIMIT: usize = 10 * 1024 * 1024;

fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            // A syntax error quotes the pattern: at most a prefix of it.
            let error = excerpt(&e.to_string());
            format!(
                "invalid regex (Rust regex syntax; escape literal `(`, `[`, `{{`, `.` with `\\`): {error}"
            )
        })
}

fn search(
    root: &SearchRoot,
    regex: &Regex,
    filter: Option<&PathFilter>,
    max_matches: usize,
    stop: &CancellationToken,
) -> Result<GrepOutput, String> {
    let metadata =
        fs::metadata(&root.path).map_err(|_| not_found("file or directory", &root.path))?;
    let candidates: Vec<(String, PathBuf)> = if metadata.is_dir() {
        files_under(&root.path, stop)?
            .into_iter()
            .filter(|(relative, _)| filter.is_none_or(|filter| filter.matches(relative)))
            .map(|(relative, path)| (root.show(&relative), path))
            .collect()
    } else {
        vec![(root.as_given().to_owned(), root.path.clone())]
    };
    let mut files = Vec::new();
    let mut total = 0;
    let mut kept = 0;
    for (shown, path) in candidates {
        if stop.is_cancelled() {
            return Err("search cancelled".into());
        }
        let Ok(bytes) = fs::read(&path) else { continue };
        if looks_binary(&bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut matches = Vec::new();
        for (line_number, line) in (1..).zip(text.lines()) {
            if regex.is_match(line) {
                total += 1;
                if kept < max_matches {
                    kept += 1;
                    matches.push(GrepMatch {
                        line_number,
                        line: cut_line(line, MAX_LINE_CHARS),
                    });
                }
            }
        }
        if !matches.is_empty() {
            files.push(GrepFile {
                path: shown,
                matches,
            });
        }
    }
    Ok(GrepOutput {
        files,
        truncated: total > kept as u64,
        total,
    })
}

/// ripgrep-style `path:line:text` lines.
fn render_grep(args: &grep::Args, out: &GrepOutput) -> Vec<ContentBlock> {
    if out.files.is_empty() {
        return vec![ContentBlock::text(format!(
            "No matches for {}",
            args.pattern
        ))];
    }
    let mut text = String::new();
    for file in &out.files {
        for hit in &file.matches {
            let _ = writeln!(text, "{}:{}:{}", file.path, hit.line_number, hit.line);
        }
    }
    if out.truncated {
        let shown: usize = out.files.iter().map(|f| f.matches.len()).sum();
        let _ = write!(
            text,
            "[showing the first {shown} of {} matching lines; narrow the pattern, path or glob, or raise max_matches]",
            out.total
        );
    } else {
        text.pop();
    }
    vec![ContentBlock::text(text)]
}

fn grep_meta(_args: &grep::Args, out: &GrepOutput) -> Value {
    output_meta(out)
}

fn grep_call_card(args: &grep::Args) -> Option<ToolCallView> {
    let title = match &args.path {
        Some(path) => format!("Grep {} in {path}", args.pattern),
        None => format!("Grep {}", args.pattern),
    };
    Some(ToolCallView::generic(title).with_kind(ToolKind::Search))
}

fn grep_result_card(_args: &grep::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: GrepOutput = meta_output(result)?;
    let files = out
        .files
        .into_iter()
        .map(|file| SearchFile {
            path: file.path,
            matches: file
                .matches
                .into_iter()
                .map(|hit| SearchMatch {
                    line_number: hit.line_number,
                    line: hit.line,
                })
                .collect(),
        })
        .collect();
    Some(SearchView::matches(files, out.truncated, out.total).into())
}
