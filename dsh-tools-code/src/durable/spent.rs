//! Spent continuation ids: a continuation resumes once. The host provides the store.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where the ids of resumed continuations are kept. `spend` must be atomic: of two resumes of
/// one continuation (two tasks, two processes), exactly one may see `Ok(true)`.
pub trait SpentStore: Send + Sync {
    /// Marks `id` spent: `Ok(true)` when it was not spent before (the caller may resume),
    /// `Ok(false)` when it was.
    fn spend(&self, id: &str) -> std::io::Result<bool>;
}

/// Spent ids in memory (one process).
///
/// ```
/// use dsh_tools_runtime::code::durable::{MemorySpentStore, SpentStore};
/// let store = MemorySpentStore::default();
/// assert!(store.spend("a").unwrap());
/// assert!(!store.spend("a").unwrap());
/// ```
#[derive(Debug, Default)]
pub struct MemorySpentStore {
    ids: Mutex<HashSet<String>>,
}

impl SpentStore for MemorySpentStore {
    fn spend(&self, id: &str) -> std::io::Result<bool> {
        Ok(self
            .ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned()))
    }
}

/// Spent ids in a file, one per line, shared by every process that names the same file: each
/// `spend` holds an exclusive lock on the file while it reads and appends, and syncs the
/// append before answering.
///
/// ```
/// use dsh_tools_runtime::code::durable::{FileSpentStore, SpentStore};
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileSpentStore::new(dir.path().join("spent"));
/// assert!(store.spend("a").unwrap());
/// // Another process (another store on the same file) sees it spent.
/// assert!(!FileSpentStore::new(dir.path().join("spent")).spend("a").unwrap());
/// ```
#[derive(Debug, Clone)]
pub struct FileSpentStore {
    path: PathBuf,
}

impl FileSpentStore {
    /// A store in the file at `path` (created on the first `spend`; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl SpentStore for FileSpentStore {
    fn spend(&self, id: &str) -> std::io::Result<bool> {
        if id.is_empty() || id.contains(['\n', '\r']) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a continuation id is one non-empty line",
            ));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.path)?;
        file.lock()?;
        let spent = contains(&file, id)?;
        if !spent {
            file.seek(SeekFrom::End(0))?;
            file.write_all(format!("{id}\n").as_bytes())?;
            file.sync_data()?;
        }
        file.unlock()?;
        Ok(!spent)
    }
}

fn contains(file: &File, id: &str) -> std::io::Result<bool> {
    for line in BufReader::new(file).lines() {
        if line? == id {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn of_many_threads_spending_one_id_exactly_one_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spent");
        let wins: usize = (0..8)
            .map(|_| {
                let store = Arc::new(FileSpentStore::new(&path));
                std::thread::spawn(move || store.spend("the-id").unwrap())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| usize::from(t.join().unwrap()))
            .sum();
        assert_eq!(wins, 1);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "the-id\n");
    }

    #[test]
    fn ids_are_single_lines() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileSpentStore::new(dir.path().join("spent"));
        assert!(store.spend("a\nb").is_err());
        assert!(store.spend("").is_err());
        assert!(store.spend("b").unwrap());
        assert!(store.spend("a").unwrap(), "a prefix line is another id");
    }
}
