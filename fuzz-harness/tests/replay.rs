//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/*`) through its target's
//! harness on the stable toolchain: the seeds, and every input a fuzzing session saved
//! (new coverage, and each crash once fixed, as a regression).

use std::path::{Path, PathBuf};

use dsh_tools_fuzz_harness::TARGETS;

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_replays_through_its_harness() {
    let (mut counts, mut total) = (Vec::new(), 0);
    for (target, harness) in TARGETS {
        let dir = corpus_root().join(target);
        let files = files(&dir);
        assert!(!files.is_empty(), "no corpus for {target}");
        for file in &files {
            let data = std::fs::read(file).expect("readable corpus file");
            let outcome = std::panic::catch_unwind(|| harness(&data));
            assert!(outcome.is_ok(), "{target}: {} failed", file.display());
        }
        counts.push(format!("{target} {}", files.len()));
        total += files.len();
    }
    let known: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    for dir in std::fs::read_dir(corpus_root()).expect("the corpus root") {
        let name = dir.expect("an entry").file_name();
        let name = name.to_string_lossy();
        assert!(known.contains(&&*name), "a corpus without a target: {name}");
    }
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "fuzz-corpus",
        &format!(
            "fuzz corpus replayed on stable: {total} files, 0 failures ({})",
            counts.join(", ")
        ),
    );
}
