//! Walking a directory tree for `glob` and `grep`.

use std::path::{Path, PathBuf};

use dsh_tools::ToolRunContext;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use tokio_util::sync::CancellationToken;
use walkdir::WalkDir;

use super::{blocking, excerpt, resolve};

/// Directories never descended into (below the search root).
const SKIPPED_DIRS: [&str; 2] = [".git", "target"];

/// Where a search starts, and how its results are shown.
pub(super) struct SearchRoot {
    /// The resolved root.
    pub(super) path: PathBuf,
    /// Prepended to a relative result so it reads like the `path` argument the model gave
    /// (empty for the current directory).
    prefix: String,
}

impl SearchRoot {
    /// The root named by a tool's optional `path` argument (default: the current directory).
    pub(super) fn new(path: Option<&str>) -> Result<Self, String> {
        let given = path.unwrap_or(".");
        let trimmed = given.trim_end_matches('/');
        let prefix = match trimmed {
            "" if given.starts_with('/') => "/".to_owned(),
            "" | "." => String::new(),
            _ => format!("{trimmed}/"),
        };
        Ok(Self {
            path: resolve(given)?,
            prefix,
        })
    }

    /// A path below the root as the model should pass it back to another tool.
    pub(super) fn show(&self, relative: &str) -> String {
        format!("{}{relative}", self.prefix)
    }

    /// The root itself as the model gave it (`.` for the current directory).
    pub(super) fn as_given(&self) -> &str {
        match self.prefix.as_str() {
            "" => ".",
            "/" => "/",
            prefix => prefix.trim_end_matches('/'),
        }
    }
}

/// Every file below `root`, as `(path relative to root with '/' separators, full path)`, sorted
/// by relative path. `.git` and `target` directories are skipped; unreadable entries are too.
pub(super) fn files_under(
    root: &Path,
    stop: &CancellationToken,
) -> Result<Vec<(String, PathBuf)>, String> {
    let walker = WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| {
            entry.depth() == 0
                || !(entry.file_type().is_dir()
                    && SKIPPED_DIRS
                        .iter()
                        .any(|dir| entry.file_name() == std::ffi::OsStr::new(dir)))
        });
    let mut files = Vec::new();
    for entry in walker {
        if stop.is_cancelled() {
            return Err("search cancelled".into());
        }
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() || (entry.path_is_symlink() && entry.path().is_dir()) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        files.push((relative, entry.into_path()));
    }
    files.sort();
    Ok(files)
}

/// A glob over relative paths. A pattern without `/` matches file names at any depth (`*.rs`);
/// one with `/` matches the whole relative path (`src/**/*.rs`), where `*` stays within one
/// directory and `**` crosses any number.
pub(super) struct PathFilter {
    matcher: GlobSet,
    by_name: bool,
}

impl PathFilter {
    pub(super) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err("the glob pattern must not be empty".into());
        }
        if pattern.starts_with('/') {
            return Err(format!(
                "glob patterns are relative to the searched directory: pass the directory as \
                 `path` and a relative pattern (got {:?})",
                excerpt(pattern)
            ));
        }
        // The error's kind, not its display: that quotes the whole pattern.
        let invalid = |e: globset::Error| format!("invalid glob pattern: {}", e.kind());
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(invalid)?;
        // A set compiles its regex fallibly (`Glob::compile_matcher` panics on one too large).
        let matcher = GlobSetBuilder::new().add(glob).build().map_err(invalid)?;
        Ok(Self {
            matcher,
            by_name: !pattern.contains('/'),
        })
    }

    pub(super) fn matches(&self, relative: &str) -> bool {
        if self.by_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Runs a blocking search off the executor. The search sees a token that fires when the call is
/// cancelled *or* its future is dropped (a host deadline), so an abandoned walk stops early.
pub(super) async fn search_blocking<T, F>(ctx: &ToolRunContext, work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(&CancellationToken) -> Result<T, String> + Send + 'static,
{
    let stop = ctx.cancellation().child_token();
    let _stop_when_dropped = stop.clone().drop_guard();
    blocking(move || work(&stop)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_without_a_slash_matches_names_at_any_depth() {
        let filter = PathFilter::new("*.rs").unwrap();
        assert!(filter.matches("main.rs"));
        assert!(filter.matches("src/deep/lib.rs"));
        assert!(!filter.matches("src/lib.rsx"));
    }

    #[test]
    fn a_pattern_with_a_slash_matches_the_relative_path() {
        let filter = PathFilter::new("src/*.rs").unwrap();
        assert!(filter.matches("src/lib.rs"));
        assert!(!filter.matches("src/a/lib.rs"));
        let deep = PathFilter::new("./src/**/*.rs").unwrap();
        assert!(deep.matches("src/lib.rs"));
        assert!(deep.matches("src/a/b/lib.rs"));
    }

    #[test]
    fn results_read_like_the_given_root() {
        let show = |root: Option<&str>| SearchRoot::new(root).unwrap().show("a/b.rs");
        assert_eq!(show(None), "a/b.rs");
        assert_eq!(show(Some(".")), "a/b.rs");
        assert_eq!(show(Some("./")), "a/b.rs");
        assert_eq!(show(Some("src/")), "src/a/b.rs");
        assert_eq!(show(Some("/")), "/a/b.rs");
        assert_eq!(show(Some("/tmp/x")), "/tmp/x/a/b.rs");
        let given = |root: Option<&str>| SearchRoot::new(root).unwrap().as_given().to_owned();
        assert_eq!(given(None), ".");
        assert_eq!(given(Some("src/main.rs")), "src/main.rs");
        assert_eq!(given(Some("/")), "/");
    }

    #[test]
    fn bad_patterns_are_explained() {
        let err = PathFilter::new("[").err().unwrap();
        assert!(err.starts_with("invalid glob pattern: "), "{err}");
        assert_eq!(
            PathFilter::new("").err().unwrap(),
            "the glob pattern must not be empty"
        );
        assert_eq!(
            PathFilter::new("/src/*.rs").err().unwrap(),
            "glob patterns are relative to the searched directory: pass the directory as `path` \
             and a relative pattern (got \"/src/*.rs\")"
        );
    }
}
