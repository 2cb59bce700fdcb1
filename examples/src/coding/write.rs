//! `write_file`: create or replace a whole file.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use dsh_tools::present::{FileDiff, Location};
use dsh_tools::{ContentBlock, ToolCallView, ToolResult, ToolResultView, ToolSchema, tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{blocking, io_error, meta_output, named, output_meta, plural, resolve, shown};

/// What `write_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToolSchema)]
pub struct WriteOutput {
    /// The file that was written (absolute).
    pub path: String,
    /// Whether the file did not exist before.
    pub created: bool,
    /// The number of bytes written.
    pub bytes_written: u64,
    /// The file's previous content, when it existed.
    pub previous: Option<String>,
}

/// Write a whole file: create it (and any missing parent directories) or replace its content.
/// To change part of an existing file, prefer edit_file.
#[tool(
    destructive,
    idempotent,
    present_call = write_call_card,
    present_result = write_result_card,
    presentation_meta = write_meta,
    render = render_write
)]
pub async fn write_file(
    /// The file to write: absolute, or relative to the current directory.
    #[schema(length(max = 4096))]
    path: String,
    /// The complete new content of the file.
    content: String,
) -> Result<WriteOutput, String> {
    let path = resolve(&path)?;
    blocking(move || write(&path, content)).await
}

fn write(path: &Path, content: String) -> Result<WriteOutput, String> {
    let previous = match fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(format!(
                "{} is a directory; write_file writes files",
                named(path)
            ));
        }
        Ok(_) => {
            let bytes = fs::read(path).map_err(|e| io_error("read", path, &e))?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(io_error("write", path, &e)),
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error("create the directory", parent, &e))?;
    }
    fs::write(path, &content).map_err(|e| io_error("write", path, &e))?;
    Ok(WriteOutput {
        path: shown(path),
        created: previous.is_none(),
        bytes_written: content.len() as u64,
        previous,
    })
}

fn render_write(_args: &write_file::Args, out: &WriteOutput) -> Vec<ContentBlock> {
    let written = plural(out.bytes_written, "byte", "bytes");
    let text = match &out.previous {
        None => format!("Created {} ({written})", out.path),
        Some(previous) => format!(
            "Wrote {} ({written}; replaced {})",
            out.path,
            plural(previous.len() as u64, "byte", "bytes")
        ),
    };
    vec![ContentBlock::text(text)]
}

fn write_meta(_args: &write_file::Args, out: &WriteOutput) -> Value {
    output_meta(out)
}

fn write_call_card(args: &write_file::Args) -> Option<ToolCallView> {
    let diff = FileDiff::created(args.path.clone(), args.content.clone());
    Some(
        ToolCallView::diff(args.path.clone(), vec![diff])
            .with_locations(vec![Location::new(args.path.clone())]),
    )
}

/// The whole-file diff: the before-image from the output, `oldText: null` for a new file.
fn write_result_card(args: &write_file::Args, result: &ToolResult) -> Option<ToolResultView> {
    let out: WriteOutput = meta_output(result)?;
    Some(ToolResultView::diff(vec![FileDiff {
        path: out.path,
        old_text: out.previous,
        new_text: args.content.clone(),
    }]))
}
