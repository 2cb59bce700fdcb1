//! `glob`: find files by path pattern.

use std::path::Path;

use dsh_tools::present::{SearchView, ToolKind};
use dsh_tools::{
    ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolRunContext, ToolSchema, tool,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::walk::{PathFilter, SearchRoot, files_under, search_blocking};
use super::{meta_output, named, not_found, output_meta};

/// How many paths `glob` returns when the call gives no `limit`.
const DEFAULT_LIMIT: u32 = 500;

/// What `glob` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct GlobOutput {
    /// The matching files, sorted, written relative to `path` as it was given (at most `limit`).
    pub paths: Vec<String>,
    /// Whether more files matched than were returned.
    pub truncated: bool,
    /// How many files matched in all.
    pub total: u64,
}

/// Find files by glob pattern, sorted by path. `.git` and `target` directories are skipped.
/// Use grep to search file contents.
#[tool(
    concurrency_safe = true,
    read_only,
    present_call = glob_call_card,
    present_result = glob_result_card,
    presentation_meta = glob_meta,
    render = render_glob
)]
pub async fn glob(
    /// The pattern. Without a `/` it matches file names at any depth (`*.rs`); with one it
    /// matches paths relative to `path` (`src/**/*.rs`). `*` stays within a directory, `**`
    /// crosses directories, `{a,b}` and `[abc]` are supported.
    #[schema(length(max = 1024))]
    pattern: String,
    /// The directory to search (default: the current directory).
    #[schema(length(max = 4096))]
    path: Option<String>,
    /// The maximum number of paths to return (default 500).
    limit: Option<u32>,
    ctx: ToolRunContext,
) -> Result<GlobOutput, String> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return Err("limit must be at least 1".into());
    }
    let root = SearchRoot::new(path.as_deref())?;
    // Compiling a pattern is CPU work: off the async threads, like the walk.
    search_blocking(&ctx, move |stop| {
        let filter = PathFilter::new(&pattern)?;
        find(&root, &filter, limit as usize, stop)
    })
    .await
}

fn find(
    root: &SearchRoot,
    filter: &PathFilter,
    limit: usize,
    stop: &CancellationToken,
) -> Result<GlobOutput, String> {
    check_directory(&root.path)?;
    let mut paths: Vec<String> = files_under(&root.path, stop)?
        .into_iter()
        .filter(|(relative, _)| filter.matches(relative))
        .map(|(relative, _)| root.show(&relative))
        .collect();
    let total = paths.len();
    paths.truncate(limit);
    Ok(GlobOutput {
        truncated: total > paths.len(),
        total: total as u64,
        paths,
    })
}

fn check_directory(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "{} is a file, not a directory (use read_file to read it)",
            named(path)
        )),
        Err(_) => Err(not_found("directory", path)),
    }
}

fn render_glob(args: &glob::Args, out: &GlobOutput) -> Vec<ContentBlock> {
    if out.paths.is_empty() {
        let root = args.path.as_deref().unwrap_or(".");
        return vec![ContentBlock::text(format!(
            "No files match {} under {root}",
            args.pattern
        ))];
    }
    let mut text = out.paths.join("\n");
    if out.truncated {
        text.push_str(&format!(
            "\n[showing the first {} of {} matches; narrow the pattern or raise limit]",
            out.paths.len(),
            out.total
        ));
    }
    vec![ContentBlock::text(text)]
}

fn glob_meta(_args: &glob::Args, out: &GlobOutput) -> Value {
    output_meta(out)
}

fn glob_call_card(args: &glob::Args) -> Option<ToolCallView> {
    let title = match &args.path {
        Some(path) => format!("Find {} in {path}", args.pattern),
        None => format!("Find {}", args.pattern),
    };
    Some(ToolCallView::generic(title).with_kind(ToolKind::Search))
}

fn glob_result_card(_args: &glob::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: GlobOutput = meta_output(result)?;
    Some(SearchView::paths(out.paths, out.truncated, out.total).into())
}
