//! `list_dir`: the entries of one directory.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use dsh_tools::present::{SearchView, ToolKind};
use dsh_tools::{ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolSchema, tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{blocking, meta_output, named, not_found, output_meta, plural, resolve, shown};

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A file (or anything else that is neither a directory nor a link).
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct ListEntry {
    /// The entry's file name.
    pub name: String,
    /// What the entry is.
    pub kind: EntryKind,
    /// The size in bytes, for files (null for directories and links).
    pub size: Option<u64>,
}

/// What `list_dir` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct ListDirOutput {
    /// The directory that was listed (absolute).
    pub path: String,
    /// Its entries, sorted by name.
    pub entries: Vec<ListEntry>,
}

/// List the entries of one directory (not recursive), sorted by name, with their kind and the
/// size of files. Use glob to find files in a whole tree.
#[tool(
    concurrency_safe = true,
    read_only,
    present_call = list_call_card,
    present_result = list_result_card,
    presentation_meta = list_meta,
    render = render_list
)]
pub async fn list_dir(
    /// The directory to list: absolute, or relative to the current directory (default: the
    /// current directory).
    #[schema(length(max = 4096))]
    path: Option<String>,
) -> Result<ListDirOutput, String> {
    let path = resolve(path.as_deref().unwrap_or("."))?;
    blocking(move || list(&path)).await
}

fn list(path: &Path) -> Result<ListDirOutput, String> {
    match fs::metadata(path) {
        Ok(metadata) if !metadata.is_dir() => {
            return Err(format!(
                "{} is a file, not a directory (use read_file to read it)",
                named(path)
            ));
        }
        Ok(_) => {}
        Err(_) => return Err(not_found("directory", path)),
    }
    let reader = fs::read_dir(path).map_err(|e| format!("cannot list {}: {e}", named(path)))?;
    let mut entries: Vec<ListEntry> = reader
        .filter_map(Result::ok)
        .map(|entry| {
            let file_type = entry.file_type().ok();
            let kind = match file_type {
                Some(t) if t.is_dir() => EntryKind::Dir,
                Some(t) if t.is_symlink() => EntryKind::Symlink,
                _ => EntryKind::File,
            };
            let size = match kind {
                EntryKind::File => entry.metadata().ok().map(|m| m.len()),
                EntryKind::Dir | EntryKind::Symlink => None,
            };
            ListEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
                size,
            }
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(ListDirOutput {
        path: shown(path),
        entries,
    })
}

/// `ls -F`-style names: `dir/`, `link@`, `file (N bytes)`.
fn render_list(_args: &list_dir::Args, out: &ListDirOutput) -> Vec<ContentBlock> {
    if out.entries.is_empty() {
        return vec![ContentBlock::text(format!("{} is empty", out.path))];
    }
    let mut text = String::new();
    for entry in &out.entries {
        let _ = match (entry.kind, entry.size) {
            (EntryKind::Dir, _) => writeln!(text, "{}/", entry.name),
            (EntryKind::Symlink, _) => writeln!(text, "{}@", entry.name),
            (EntryKind::File, Some(size)) => {
                writeln!(text, "{} ({})", entry.name, plural(size, "byte", "bytes"))
            }
            (EntryKind::File, None) => writeln!(text, "{}", entry.name),
        };
    }
    text.pop();
    vec![ContentBlock::text(text)]
}

fn list_meta(_args: &list_dir::Args, out: &ListDirOutput) -> Value {
    output_meta(out)
}

fn list_call_card(args: &list_dir::Args) -> Option<ToolCallView> {
    let path = args.path.as_deref().unwrap_or(".");
    Some(ToolCallView::generic(format!("List {path}")).with_kind(ToolKind::Read))
}

/// The entries as full paths, directories marked with a trailing `/`.
fn list_result_card(_args: &list_dir::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: ListDirOutput = meta_output(result)?;
    let base = out.path.trim_end_matches('/');
    let paths: Vec<String> = out
        .entries
        .iter()
        .map(|entry| match entry.kind {
            EntryKind::Dir => format!("{base}/{}/", entry.name),
            EntryKind::File | EntryKind::Symlink => format!("{base}/{}", entry.name),
        })
        .collect();
    let total = paths.len() as u64;
    Some(SearchView::paths(paths, false, total).into())
}
