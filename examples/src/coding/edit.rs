//! `edit_file`: exact-match text replacement, reported as applied hunks.

use std::fs;
use std::path::Path;

use dsh_tools::present::{FileDiff, Location};
use dsh_tools::{ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolSchema, tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    blocking, io_error, looks_binary, meta_output, named, output_meta, plural, resolve, shown,
};

/// Unchanged lines shown on each side of a changed region.
const CONTEXT_LINES: usize = 2;

/// One changed region of a file, with up to two unchanged lines of context on each side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct Hunk {
    /// The region before the edit.
    pub old_text: String,
    /// The same region after the edit.
    pub new_text: String,
}

/// What `edit_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct EditOutput {
    /// The file that was edited (absolute).
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
    /// The changed regions, in file order (nearby replacements share a hunk).
    pub hunks: Vec<Hunk>,
}

/// Replace exact text in a file. `old_string` must match the file exactly, whitespace and
/// indentation included, and (unless `replace_all` is true) occur exactly once: include enough
/// surrounding lines to make it unique. Read the file with read_file first.
#[tool(
    destructive,
    present_call = edit_call_card,
    present_result = edit_result_card,
    presentation_meta = edit_meta,
    render = render_edit
)]
pub async fn edit_file(
    /// The file to edit: absolute, or relative to the current directory.
    #[schema(length(max = 4096))]
    path: String,
    /// The exact text to replace.
    old_string: String,
    /// The text to put in its place (must differ from old_string).
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    replace_all: Option<bool>,
) -> Result<EditOutput, String> {
    if old_string.is_empty() {
        return Err(
            "old_string must not be empty (use write_file to create a file or replace all of it)"
                .into(),
        );
    }
    if old_string == new_string {
        return Err("old_string and new_string are identical: there is nothing to change".into());
    }
    let path = resolve(&path)?;
    let replace_all = replace_all.unwrap_or(false);
    blocking(move || edit(&path, &old_string, &new_string, replace_all)).await
}

fn edit(path: &Path, old: &str, new: &str, replace_all: bool) -> Result<EditOutput, String> {
    if path.is_dir() {
        return Err(format!("{} is a directory, not a file", named(path)));
    }
    let bytes = fs::read(path).map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&bytes) {
        return Err(format!(
            "{} looks like a binary file; edit_file edits text only",
            named(path)
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "{} is not UTF-8 text; edit_file edits UTF-8 files only",
            named(path)
        )
    })?;
    let starts: Vec<usize> = text.match_indices(old).map(|(at, _)| at).collect();
    match starts.len() {
        0 => {
            return Err(format!(
                "old_string was not found in {}; it must match the file exactly, whitespace and \
                 indentation included (read_file shows the current text)",
                named(path)
            ));
        }
        1 => {}
        n if !replace_all => {
            return Err(format!(
                "old_string occurs {n} times in {}; include more surrounding lines to make it \
                 unique, or set replace_all to true to replace every occurrence",
                named(path)
            ));
        }
        _ => {}
    }
    let updated = splice(&text, 0, &starts, old.len(), new);
    fs::write(path, updated).map_err(|e| io_error("write", path, &e))?;
    Ok(EditOutput {
        path: shown(path),
        replacements: starts.len() as u64,
        hunks: hunks(&text, &starts, old.len(), new),
    })
}

/// `text` (which starts at byte `base` of the file) with `old_len` bytes at each of `starts`
/// (file offsets, ascending, non-overlapping) replaced by `new`.
fn splice(text: &str, base: usize, starts: &[usize], old_len: usize, new: &str) -> String {
    let mut out = String::with_capacity(text.len() + starts.len() * new.len());
    let mut at = 0;
    for &start in starts {
        let start = start - base;
        out.push_str(&text[at..start]);
        out.push_str(new);
        at = start + old_len;
    }
    out.push_str(&text[at..]);
    out
}

/// The applied hunks: each replacement widened to whole lines plus [`CONTEXT_LINES`] on each side,
/// with regions that touch or overlap merged.
fn hunks(text: &str, starts: &[usize], old_len: usize, new: &str) -> Vec<Hunk> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let last_line = line_starts.len() - 1;
    let line_of = |offset: usize| line_starts.partition_point(|&start| start <= offset) - 1;
    let line_end = |line: usize| line_starts.get(line + 1).copied().unwrap_or(text.len());

    // (region start, region end, the replacements inside it)
    let mut regions: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for &start in starts {
        let first = line_of(start).saturating_sub(CONTEXT_LINES);
        let last = (line_of(start + old_len - 1) + CONTEXT_LINES).min(last_line);
        let (from, to) = (line_starts[first], line_end(last));
        match regions.last_mut() {
            Some((_, end, inside)) if from <= *end => {
                *end = to.max(*end);
                inside.push(start);
            }
            _ => regions.push((from, to, vec![start])),
        }
    }
    regions
        .into_iter()
        .map(|(from, to, inside)| {
            let old_text = &text[from..to];
            Hunk {
                new_text: splice(old_text, from, &inside, old_len, new),
                old_text: old_text.to_owned(),
            }
        })
        .collect()
}

fn render_edit(_args: &edit_file::Args, out: &EditOutput) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!(
        "Edited {}: replaced {}",
        out.path,
        plural(out.replacements, "occurrence", "occurrences")
    ))]
}

fn edit_meta(_args: &edit_file::Args, out: &EditOutput) -> Value {
    output_meta(out)
}

/// The proposed change as a snippet diff (no file read: presenters are pure).
fn edit_call_card(args: &edit_file::Args) -> Option<ToolCallView> {
    let diff = FileDiff::modified(
        args.path.clone(),
        args.old_string.clone(),
        args.new_string.clone(),
    );
    Some(
        ToolCallView::diff(args.path.clone(), vec![diff])
            .with_locations(vec![Location::new(args.path.clone())]),
    )
}

fn edit_result_card(_args: &edit_file::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: EditOutput = meta_output(result)?;
    let diffs = out
        .hunks
        .into_iter()
        .map(|hunk| FileDiff::modified(out.path.clone(), hunk.old_text, hunk.new_text))
        .collect();
    Some(ToolResultView::diff(diffs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, old: &str, new: &str) -> Vec<(String, String)> {
        let starts: Vec<usize> = text.match_indices(old).map(|(at, _)| at).collect();
        hunks(text, &starts, old.len(), new)
            .into_iter()
            .map(|h| (h.old_text, h.new_text))
            .collect()
    }

    #[test]
    fn a_hunk_has_two_lines_of_context() {
        let text = "1\n2\n3\n4\n5\n6\n7\n";
        assert_eq!(
            apply(text, "4", "four"),
            [("2\n3\n4\n5\n6\n".into(), "2\n3\nfour\n5\n6\n".into())]
        );
    }

    #[test]
    fn context_stops_at_the_file_edges() {
        assert_eq!(
            apply("a\nb\nc", "a", "A"),
            [("a\nb\nc".into(), "A\nb\nc".into())]
        );
        assert_eq!(apply("x", "x", "y"), [("x".into(), "y".into())]);
    }

    #[test]
    fn nearby_replacements_share_a_hunk_and_distant_ones_do_not() {
        let text = "x\n1\n2\nx\n3\n4\n5\n6\n7\n8\nx\n";
        let got = apply(text, "x", "y");
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0],
            ("x\n1\n2\nx\n3\n4\n".into(), "y\n1\n2\ny\n3\n4\n".into())
        );
        assert_eq!(got[1], ("7\n8\nx\n".into(), "7\n8\ny\n".into()));
    }

    #[test]
    fn multi_line_replacements_widen_to_whole_lines() {
        let text = "a\nb\nc\nd\ne\nf\ng\n";
        assert_eq!(
            apply(text, "c\nd", "C"),
            [("a\nb\nc\nd\ne\nf\n".into(), "a\nb\nC\ne\nf\n".into())]
        );
    }
}
