//! What the tests of the examples share.

use std::path::PathBuf;
use std::process::Command;

/// The built example `name` (building the examples first when this test binary was built
/// without them, e.g. by `cargo test --test examples_run`).
pub(crate) fn example_binary(name: &str) -> PathBuf {
    let profile_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .expect("the test binary lives in <target>/<profile>/deps");
    let binary: PathBuf = profile_dir.join("examples").join(name);
    if !binary.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "dsh-tools-examples", "--examples"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the examples failed");
    }
    binary
}
