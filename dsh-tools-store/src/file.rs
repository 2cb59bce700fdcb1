//! The store in a directory, shared by every process that opens the same directory.
//!
//! Layout: one file per record, named by the SHA-256 of its id (any id is a safe file name):
//! `run/<h>`, `spent/<h>`, `approval/<h>`, `task/<h>`, `entry/<h(run)>/<h(index)>`,
//! `intent/<h(run)>/<h(call)>`, `checkpoint/<h(run)>/<h("latest")>`, and `open/<h(run)>` while
//! a run is unfinished. A file holds `<expiry ms or ->\n<id as a JSON string>\n<sealed
//! record>`. Every change holds an exclusive lock on `.lock` while it checks and writes, and
//! writes by rename of a synced temporary file: a crash leaves the old record or the new one,
//! never half of one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;

use crate::StoreError;
use crate::backend::{Backend, Child, ChildInsert, Coll, Pair};
use crate::core::Core;
use crate::digest::sha256_hex;
use crate::forward::forward_store;
use crate::seal::StoreKey;

/// The store in a directory (created 0700 if missing), safe across processes through a file
/// lock, durable through `fsync` of each record and of its directory.
///
/// ```
/// use dsh_tools_store::{DurableStore, FileStore, StoreKey};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let key = StoreKey::generate();
/// let store = FileStore::open(dir.path(), key.clone()).unwrap();
/// assert!(store.spend("c1").await.unwrap());
/// // Another process (another store on the same directory, same key) sees it spent.
/// assert!(!FileStore::open(dir.path(), key).unwrap().spend("c1").await.unwrap());
/// # });
/// ```
#[derive(Debug)]
pub struct FileStore {
    core: Core<FileBackend>,
}

impl FileStore {
    /// The store in `dir`, whose records `key` authenticates.
    pub fn open(dir: impl Into<PathBuf>, key: StoreKey) -> Result<Self, StoreError> {
        let dir = dir.into();
        create_private_dir(&dir).map_err(|e| io_error(&dir, e))?;
        let tmp = dir.join("tmp");
        fs::create_dir_all(&tmp).map_err(|e| io_error(&tmp, e))?;
        Ok(Self {
            core: Core {
                key,
                backend: FileBackend {
                    dir: Arc::new(Dir { root: dir }),
                },
            },
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.core.backend.dir.root
    }
}

forward_store!(FileStore, "file");

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn io_error(path: &Path, error: io::Error) -> StoreError {
    StoreError::unavailable("file", format!("{}: {error}", path.display()))
}

#[derive(Debug)]
struct Dir {
    root: PathBuf,
}

/// One record file's contents.
struct Record {
    expires: Option<i64>,
    id: String,
    value: String,
}

impl Dir {
    fn coll(&self, coll: Coll, id: &str) -> PathBuf {
        self.root.join(coll.name()).join(sha256_hex(id.as_bytes()))
    }

    fn children_dir(&self, child: Child, run: &str) -> PathBuf {
        self.root
            .join(child.name())
            .join(sha256_hex(run.as_bytes()))
    }

    fn child(&self, child: Child, run: &str, id: &str) -> PathBuf {
        self.children_dir(child, run)
            .join(sha256_hex(id.as_bytes()))
    }

    fn open_marker(&self, run: &str) -> PathBuf {
        self.root.join("open").join(sha256_hex(run.as_bytes()))
    }

    /// Runs `f` holding the directory's exclusive lock.
    fn locked<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.root.join(".lock"))?;
        lock.lock()?;
        let result = f();
        lock.unlock()?;
        result
    }

    fn read(&self, path: &Path) -> io::Result<Option<Record>> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut parts = text.splitn(3, '\n');
        let (Some(expires), Some(id), Some(value)) = (parts.next(), parts.next(), parts.next())
        else {
            // Not a record: the authentication of its (empty) value refuses it.
            return Ok(Some(Record {
                expires: None,
                id: String::new(),
                value: String::new(),
            }));
        };
        Ok(Some(Record {
            expires: expires.parse().ok(),
            id: serde_json::from_str(id).unwrap_or_default(),
            value: value.to_owned(),
        }))
    }

    fn read_live(&self, path: &Path, now: i64) -> io::Result<Option<Record>> {
        Ok(self
            .read(path)?
            .filter(|record| record.expires.is_none_or(|expires| expires > now)))
    }

    /// Writes `path` whole or not at all: a synced temporary file renamed over it.
    fn write(&self, path: &Path, id: &str, value: &str, expires: Option<i64>) -> io::Result<()> {
        let parent = path.parent().expect("record paths have a directory");
        fs::create_dir_all(parent)?;
        let expires = expires.map_or_else(|| "-".to_owned(), |ms| ms.to_string());
        let mut tmp = tempfile_in(&self.root.join("tmp"))?;
        let id = serde_json::to_string(id).map_err(io::Error::other)?;
        tmp.1
            .write_all(format!("{expires}\n{id}\n{value}").as_bytes())?;
        tmp.1.sync_all()?;
        fs::rename(&tmp.0, path)?;
        File::open(parent)?.sync_all()
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<Record>> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut records = Vec::new();
        for entry in entries {
            if let Some(record) = self.read(&entry?.path())? {
                records.push(record);
            }
        }
        Ok(records)
    }
}

/// A new temporary file in `dir` (0600), with its path.
fn tempfile_in(dir: &Path) -> io::Result<(PathBuf, File)> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    let path = dir.join(sha256_hex(&bytes));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    Ok((path.clone(), options.open(path)?))
}

#[derive(Debug)]
pub(crate) struct FileBackend {
    dir: Arc<Dir>,
}

impl FileBackend {
    /// Runs blocking file work off the async threads.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Dir) -> io::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let dir = Arc::clone(&self.dir);
        tokio::task::spawn_blocking(move || f(&dir).map_err(|e| io_error(&dir.root, e)))
            .await
            .map_err(|e| StoreError::unavailable("file", e))?
    }
}

/// Owned copies of string arguments, for the blocking closures.
fn owned<const N: usize>(parts: [&str; N]) -> [String; N] {
    parts.map(str::to_owned)
}

#[async_trait]
impl Backend for FileBackend {
    fn name(&self) -> &'static str {
        "file"
    }

    async fn insert(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let [id, value] = owned([id, value]);
        self.run(move |dir| {
            let path = dir.coll(coll, &id);
            dir.locked(|| {
                if dir.read_live(&path, now)?.is_some() {
                    return Ok(false);
                }
                dir.write(&path, &id, &value, expires)?;
                Ok(true)
            })
        })
        .await
    }

    async fn put(
        &self,
        coll: Coll,
        id: &str,
        value: &str,
        expires: Option<i64>,
    ) -> Result<(), StoreError> {
        let [id, value] = owned([id, value]);
        self.run(move |dir| {
            let path = dir.coll(coll, &id);
            dir.locked(|| dir.write(&path, &id, &value, expires))
        })
        .await
    }

    async fn get(&self, coll: Coll, id: &str, now: i64) -> Result<Option<String>, StoreError> {
        let [id] = owned([id]);
        self.run(move |dir| {
            Ok(dir
                .read_live(&dir.coll(coll, &id), now)?
                .map(|record| record.value))
        })
        .await
    }

    async fn swap(
        &self,
        coll: Coll,
        id: &str,
        old: &str,
        new: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let [id, old, new] = owned([id, old, new]);
        self.run(move |dir| {
            let path = dir.coll(coll, &id);
            dir.locked(|| match dir.read_live(&path, now)? {
                Some(record) if record.value == old => {
                    dir.write(&path, &id, &new, record.expires)?;
                    Ok(true)
                }
                _ => Ok(false),
            })
        })
        .await
    }

    async fn begin_run(&self, run: &str, value: &str) -> Result<bool, StoreError> {
        let [run, value] = owned([run, value]);
        self.run(move |dir| {
            let path = dir.coll(Coll::Run, &run);
            dir.locked(|| {
                if dir.read(&path)?.is_some() {
                    return Ok(false);
                }
                // The marker first: a crash between the two leaves a marker without a run,
                // which `open_runs` skips, never a run that recovery cannot find.
                dir.write(&dir.open_marker(&run), &run, "", None)?;
                dir.write(&path, &run, &value, None)?;
                Ok(true)
            })
        })
        .await
    }

    async fn finish_run(&self, run: &str, old: &str, new: &str) -> Result<bool, StoreError> {
        let [run, old, new] = owned([run, old, new]);
        self.run(move |dir| {
            let path = dir.coll(Coll::Run, &run);
            dir.locked(|| match dir.read(&path)? {
                Some(record) if record.value == old => {
                    dir.write(&path, &run, &new, None)?;
                    dir.remove(&dir.open_marker(&run))?;
                    Ok(true)
                }
                _ => Ok(false),
            })
        })
        .await
    }

    async fn open_runs(&self) -> Result<Vec<Pair>, StoreError> {
        self.run(move |dir| {
            let mut runs = Vec::new();
            for marker in dir.list(&dir.root.join("open"))? {
                if let Some(record) = dir.read(&dir.coll(Coll::Run, &marker.id))? {
                    runs.push((marker.id, record.value));
                }
            }
            Ok(runs)
        })
        .await
    }

    async fn insert_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        value: &str,
    ) -> Result<ChildInsert, StoreError> {
        let [run, id, value] = owned([run, id, value]);
        self.run(move |dir| {
            let path = dir.child(child, &run, &id);
            dir.locked(|| {
                if dir.read(&dir.coll(Coll::Run, &run))?.is_none() {
                    return Ok(ChildInsert::NoRun);
                }
                if !dir.open_marker(&run).exists() {
                    return Ok(ChildInsert::Finished);
                }
                if dir.read(&path)?.is_some() {
                    return Ok(ChildInsert::Exists);
                }
                dir.write(&path, &id, &value, None)?;
                Ok(ChildInsert::Inserted)
            })
        })
        .await
    }

    async fn get_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        let [run, id] = owned([run, id]);
        self.run(move |dir| {
            Ok(dir
                .read(&dir.child(child, &run, &id))?
                .map(|record| record.value))
        })
        .await
    }

    async fn swap_child(
        &self,
        child: Child,
        run: &str,
        id: &str,
        old: &str,
        new: &str,
    ) -> Result<bool, StoreError> {
        let [run, id, old, new] = owned([run, id, old, new]);
        self.run(move |dir| {
            let path = dir.child(child, &run, &id);
            dir.locked(|| match dir.read(&path)? {
                Some(record) if record.value == old => {
                    dir.write(&path, &id, &new, None)?;
                    Ok(true)
                }
                _ => Ok(false),
            })
        })
        .await
    }

    async fn children(&self, child: Child, run: &str) -> Result<Vec<Pair>, StoreError> {
        let [run] = owned([run]);
        self.run(move |dir| {
            Ok(dir
                .list(&dir.children_dir(child, &run))?
                .into_iter()
                .map(|record| (record.id, record.value))
                .collect())
        })
        .await
    }
}
