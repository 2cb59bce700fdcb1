//! `read_file`: a numbered excerpt of a text file.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use dsh_tools::present::{Location, ReadLine, ToolKind};
use dsh_tools::{ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolSchema, tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    blocking, cut_line, io_error, looks_binary, meta_output, named, output_meta, plural, resolve,
    shown,
};

/// How many lines `read_file` returns when the call gives no `limit`.
const DEFAULT_LIMIT: u64 = 2000;

/// Lines longer than this (in characters) are cut, so one minified line cannot flood the context.
const MAX_LINE_CHARS: usize = 2000;

/// One line of a file excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct NumberedLine {
    /// The 1-based line number.
    pub number: u64,
    /// The line's text without its line ending (cut after 2000 characters).
    pub text: String,
}

/// What `read_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct ReadOutput {
    /// The file that was read (absolute).
    pub path: String,
    /// The first line requested (1-based), kept even when it lies past the end of the file.
    pub offset: u64,
    /// The lines read.
    pub lines: Vec<NumberedLine>,
    /// The number of lines in the whole file.
    pub total_lines: u64,
}

/// Read a text file and return its lines numbered from 1, like `cat -n`. Returns at most 2000
/// lines by default: page through longer files with `offset` and `limit`. Lines longer than 2000
/// characters are cut. Use list_dir or glob to find files first.
#[tool(
    concurrency_safe = true,
    read_only,
    present_call = read_call_card,
    present_result = read_result_card,
    presentation_meta = read_meta,
    render = render_read
)]
pub async fn read_file(
    /// The file to read: absolute, or relative to the current directory.
    #[schema(length(max = 4096))]
    path: String,
    /// The first line to return, 1-based (default 1).
    #[schema(range(min = 1))]
    offset: Option<u64>,
    /// The maximum number of lines to return (default 2000).
    #[schema(range(min = 1))]
    limit: Option<u64>,
) -> Result<ReadOutput, String> {
    let offset = offset.unwrap_or(1);
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if offset == 0 {
        return Err("offset is 1-based: use 1 for the first line".into());
    }
    if limit == 0 {
        return Err("limit must be at least 1".into());
    }
    let path = resolve(&path)?;
    blocking(move || read_lines(&path, offset, limit)).await
}

fn read_lines(path: &Path, offset: u64, limit: u64) -> Result<ReadOutput, String> {
    let metadata = fs::metadata(path).map_err(|e| io_error("read", path, &e))?;
    if metadata.is_dir() {
        return Err(format!(
            "{} is a directory (use list_dir to see its entries)",
            named(path)
        ));
    }
    let bytes = fs::read(path).map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&bytes) {
        return Err(format!(
            "{} looks like a binary file; read_file reads text only (try bash with `file` or `xxd`)",
            named(path)
        ));
    }
    let end = offset.saturating_add(limit);
    let mut lines = Vec::new();
    let mut total_lines = 0;
    for (number, text) in (1..).zip(String::from_utf8_lossy(&bytes).lines()) {
        total_lines = number;
        if (offset..end).contains(&number) {
            lines.push(NumberedLine {
                number,
                text: cut_line(text, MAX_LINE_CHARS),
            });
        }
    }
    Ok(ReadOutput {
        path: shown(path),
        offset,
        lines,
        total_lines,
    })
}

/// `cat -n` lines, then a note on what lies beyond the excerpt.
fn render_read(_args: &read_file::Args, out: &ReadOutput) -> Vec<ContentBlock> {
    let mut text = String::new();
    for line in &out.lines {
        let _ = writeln!(text, "{:>6}\t{}", line.number, line.text);
    }
    match out.lines.last() {
        None if out.total_lines == 0 => text.push_str("(empty file)"),
        None => {
            let _ = write!(
                text,
                "(no lines: the file has {}; offset {} is past the end)",
                plural(out.total_lines, "line", "lines"),
                out.offset
            );
        }
        Some(last) if last.number < out.total_lines => {
            let _ = write!(
                text,
                "… {} (continue with offset {})",
                plural(out.total_lines - last.number, "more line", "more lines"),
                last.number + 1
            );
        }
        Some(_) => {
            text.pop();
        }
    }
    vec![ContentBlock::text(text)]
}

fn read_meta(_args: &read_file::Args, out: &ReadOutput) -> Value {
    output_meta(out)
}

fn read_call_card(args: &read_file::Args) -> Option<ToolCallView> {
    let mut location = Location::new(args.path.clone());
    if let Some(offset) = args.offset {
        location = location.at_line(offset);
    }
    Some(
        ToolCallView::generic(format!("Read {}", args.path))
            .with_kind(ToolKind::Read)
            .with_locations(vec![location]),
    )
}

fn read_result_card(_args: &read_file::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: ReadOutput = meta_output(result)?;
    Some(ToolResultView::Read {
        title: None,
        lang: language(&out.path).map(str::to_owned),
        lines: out
            .lines
            .into_iter()
            .map(|line| ReadLine {
                number: line.number,
                text: line.text,
            })
            .collect(),
        path: out.path,
        offset: out.offset,
        total_lines: out.total_lines,
        content: None,
    })
}

/// A highlighting hint guessed from the file name.
fn language(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name {
        "Dockerfile" => return Some("dockerfile"),
        "Makefile" | "GNUmakefile" => return Some("makefile"),
        _ => {}
    }
    let (_, ext) = name.rsplit_once('.')?;
    Some(match ext.to_ascii_lowercase().as_str() {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        "sh" | "bash" | "zsh" => "shell",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "rb" => "ruby",
        "swift" => "swift",
        "cs" => "csharp",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "sql" => "sql",
        "xml" => "xml",
        "lua" => "lua",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_from_file_names() {
        assert_eq!(language("/x/src/main.rs"), Some("rust"));
        assert_eq!(language("notes.MD"), Some("markdown"));
        assert_eq!(language("/x/Dockerfile"), Some("dockerfile"));
        assert_eq!(language("/x/LICENSE"), None);
        assert_eq!(language("/x/archive.xyz"), None);
    }
}
