//! A coding tool pack: read, write and edit files, list directories, find files, search their
//! contents and run shell commands.
//!
//! Every tool is an ordinary `async fn` under `#[tool]`, so each one can be called directly (the
//! tests do) or hosted through its definition: `read_file::definition()` for one tool,
//! [`coding_tools`] for the seven, or `dsh_tools::collected_tools()` for every `#[tool]` linked
//! into the binary.
//!
//! Conventions shared by the pack:
//!
//! - Relative paths resolve against the process's current directory.
//! - Failures are `Err(String)` messages written for the model: they say what went wrong and
//!   which tool or argument fixes it (`file not found: /x (use list_dir to see what exists)`).
//! - Each tool declares UI cards (`present_call` / `present_result`). The presenters are pure:
//!   a result card is rebuilt from the arguments and the durable result's `meta`, which every
//!   tool fills with its canonical output value (`presentation_meta`), so a replayed session log
//!   renders the same cards as the live session.
//!
//! ```no_run
//! # async fn demo() -> Result<(), String> {
//! use dsh_tools_examples::coding::{coding_tools, read_file};
//!
//! let tools = coding_tools().map_err(|e| e.to_string())?;
//! assert_eq!(tools.len(), 7);
//!
//! let out = read_file("Cargo.toml".into(), Some(1), Some(5)).await?;
//! assert!(out.lines.len() <= 5);
//! # Ok(())
//! # }
//! ```

mod edit;
mod find;
mod list;
mod process;
mod read;
mod search;
mod shell;
mod walk;
mod write;

use std::path::{Component, Path, PathBuf};

use dsh_tools::{DefinitionError, ToolDefinition, ToolResult};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use edit::{EditOutput, Hunk, edit_file};
pub use find::{GlobOutput, glob};
pub use list::{EntryKind, ListDirOutput, ListEntry, list_dir};
pub use read::{NumberedLine, ReadOutput, read_file};
pub use search::{GrepFile, GrepMatch, GrepOutput, grep};
pub use shell::{BashOutput, bash};
pub use write::{WriteOutput, write_file};

/// The seven tools of the pack, built explicitly (sorted by name), for hosts that do not collect
/// tools through `inventory`.
///
/// ```
/// let names: Vec<String> = dsh_tools_examples::coding::coding_tools()
///     .unwrap()
///     .iter()
///     .map(|tool| tool.name().to_owned())
///     .collect();
/// assert_eq!(
///     names,
///     ["bash", "edit_file", "glob", "grep", "list_dir", "read_file", "write_file"]
/// );
/// ```
pub fn coding_tools() -> Result<Vec<ToolDefinition>, DefinitionError> {
    Ok(vec![
        bash::definition()?,
        edit_file::definition()?,
        glob::definition()?,
        grep::definition()?,
        list_dir::definition()?,
        read_file::definition()?,
        write_file::definition()?,
    ])
}

/// Resolves a model-written path against the current directory, dropping `.` components.
fn resolve(path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err("path must not be empty".into());
    }
    let path = Path::new(path);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot resolve a relative path: no current directory ({e})"))?;
        cwd.join(path)
    };
    Ok(joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect())
}

/// A path as the model reads it.
fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// How many characters of an argument an error message quotes.
const QUOTED_CHARS: usize = 200;

/// A path as an error message quotes it: at most its first 200 characters.
fn named(path: &Path) -> String {
    excerpt(&path.to_string_lossy())
}

/// At most the first 200 characters of `text` (an argument quoted in an error), with `…` when
/// cut.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The message for a path that does not exist.
fn not_found(kind: &str, path: &Path) -> String {
    format!(
        "{kind} not found: {} (use list_dir to see what exists)",
        named(path)
    )
}

/// Describes an I/O failure on `path` for the model.
fn io_error(action: &str, path: &Path, error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => not_found("file", path),
        std::io::ErrorKind::PermissionDenied => {
            format!("permission denied: cannot {action} {}", named(path))
        }
        _ => format!("cannot {action} {}: {error}", named(path)),
    }
}

/// Whether the bytes look like a binary file (a NUL byte in the first 8 KiB, as git decides).
fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

/// Runs blocking filesystem work off the async executor.
async fn blocking<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, String> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the tool's worker thread failed: {e}"))?
}

/// The presentation payload of every tool in the pack: its canonical output value.
fn output_meta<T: Serialize>(output: &T) -> Value {
    serde_json::to_value(output).unwrap_or(Value::Null)
}

/// Reads the output back from a durable result's `meta`: `None` for a failure, a missing payload
/// or one that does not fit (an older log), so the UI falls back to the generic card.
fn meta_output<T: DeserializeOwned>(result: &ToolResult) -> Option<T> {
    if result.is_error {
        return None;
    }
    T::deserialize(result.meta.as_ref()?).ok()
}

/// `text` cut after `max_chars` characters (on a character boundary), with a marker.
fn cut_line(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}… [line cut]", &text[..at]),
        None => text.to_owned(),
    }
}

/// `1 line` / `2 lines`.
fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let cut = cut_line(&"é".repeat(12), 10);
        assert_eq!(cut, format!("{}… [line cut]", "é".repeat(10)));
        assert_eq!(cut_line("short", 10), "short");
        assert_eq!(cut_line(&"x".repeat(10), 10), "x".repeat(10));
    }

    #[test]
    fn relative_paths_resolve_against_the_current_directory() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(resolve("./a/./b").unwrap(), cwd.join("a/b"));
        assert_eq!(resolve("/x/./y").unwrap(), PathBuf::from("/x/y"));
        assert_eq!(resolve("").unwrap_err(), "path must not be empty");
    }
}
