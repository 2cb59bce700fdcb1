//! glob and grep.

use std::fs;

use dsh_tools::ToolResultView;
use dsh_tools::present::{SearchFile, SearchMatch, SearchView};
use dsh_tools_examples::coding::*;
use serde_json::json;
use tempfile::TempDir;

use super::{card, ctx, host_call, text, tmp, tool};

// --- glob ------------------------------------------------------------------------------------

fn tree() -> TempDir {
    let dir = tmp();
    for (name, text) in [
        ("src/lib.rs", "pub fn lib() {}\n// TODO: more\n"),
        ("src/main.rs", "fn main() {\n    lib();\n}\n"),
        ("src/deep/mod.rs", "// todo later\n"),
        ("README.md", "# TODO list\n"),
        (".git/HEAD.rs", "TODO\n"),
        ("target/debug/out.rs", "TODO\n"),
        ("assets/logo.bin", "TODO\0\0binary"),
    ] {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

#[tokio::test]
async fn glob_finds_files_sorted_and_skips_git_and_target() {
    let dir = tree();
    let root = dir.path().to_string_lossy().into_owned();
    let out = glob("*.rs".into(), Some(root.clone()), None, ctx())
        .await
        .unwrap();
    assert_eq!(
        out.paths,
        [
            format!("{root}/src/deep/mod.rs"),
            format!("{root}/src/lib.rs"),
            format!("{root}/src/main.rs"),
        ]
    );
    assert_eq!((out.truncated, out.total), (false, 3));

    let top = glob("src/*.rs".into(), Some(root.clone()), None, ctx())
        .await
        .unwrap();
    assert_eq!(
        top.paths,
        [format!("{root}/src/lib.rs"), format!("{root}/src/main.rs")]
    );

    let limited = glob("**/*".into(), Some(root.clone()), Some(2), ctx())
        .await
        .unwrap();
    assert_eq!(
        (limited.paths.len(), limited.truncated, limited.total),
        (2, true, 5)
    );
    let result = host_call(
        &tool("glob"),
        json!({"pattern": "**/*", "path": root, "limit": 2}),
    )
    .await;
    assert!(
        text(&result)
            .ends_with("\n[showing the first 2 of 5 matches; narrow the pattern or raise limit]")
    );
    let none = host_call(&tool("glob"), json!({"pattern": "*.py", "path": root})).await;
    assert_eq!(text(&none), format!("No files match *.py under {root}"));
}

#[tokio::test]
async fn glob_errors() {
    let dir = tree();
    let root = dir.path().to_string_lossy().into_owned();
    let err = glob("src/[".into(), Some(root.clone()), None, ctx())
        .await
        .unwrap_err();
    assert!(err.starts_with("invalid glob pattern: "), "{err}");
    let missing = format!("{root}/nope");
    assert_eq!(
        glob("*".into(), Some(missing.clone()), None, ctx())
            .await
            .unwrap_err(),
        format!("directory not found: {missing} (use list_dir to see what exists)")
    );
    let file = format!("{root}/README.md");
    assert_eq!(
        glob("*".into(), Some(file.clone()), None, ctx())
            .await
            .unwrap_err(),
        format!("{file} is a file, not a directory (use read_file to read it)")
    );
}

#[tokio::test]
async fn glob_cards() {
    assert_eq!(
        card(&tool("glob").present_call(&json!({"pattern": "*.rs", "path": "src"}))),
        r#"{"card":"generic","title":"Find *.rs in src","kind":"search"}"#
    );
    let dir = tree();
    let args = json!({"pattern": "lib.rs", "path": dir.path()});
    let result = host_call(&tool("glob"), args.clone()).await;
    let lib = format!("{}/src/lib.rs", dir.path().display());
    assert_eq!(text(&result), lib);
    assert_eq!(
        card(&tool("glob").present_result(&args, &result)),
        format!(
            r#"{{"card":"search","shape":"paths","paths":["{lib}"],"truncated":false,"total":1}}"#
        )
    );
}

// --- grep ------------------------------------------------------------------------------------

#[tokio::test]
async fn grep_groups_matching_lines_by_file() {
    let dir = tree();
    let root = dir.path().to_string_lossy().into_owned();
    let out = grep("(?i)todo".into(), Some(root.clone()), None, None, ctx())
        .await
        .unwrap();
    let found: Vec<(String, Vec<u64>)> = out
        .files
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                f.matches.iter().map(|m| m.line_number).collect(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (format!("{root}/README.md"), vec![1]),
            (format!("{root}/src/deep/mod.rs"), vec![1]),
            (format!("{root}/src/lib.rs"), vec![2]),
        ],
        "binary files, .git and target are skipped"
    );
    assert_eq!(out.files[2].matches[0].line, "// TODO: more");
    assert_eq!((out.truncated, out.total), (false, 3));

    let rust_only = grep(
        "(?i)todo".into(),
        Some(root.clone()),
        Some("*.rs".into()),
        None,
        ctx(),
    )
    .await
    .unwrap();
    assert_eq!(rust_only.files.len(), 2);

    let capped = grep("(?i)todo".into(), Some(root.clone()), None, Some(1), ctx())
        .await
        .unwrap();
    assert_eq!(
        (capped.files.len(), capped.truncated, capped.total),
        (1, true, 3)
    );

    let one_file = format!("{root}/src/main.rs");
    let single = grep(r"lib\(\)".into(), Some(one_file.clone()), None, None, ctx())
        .await
        .unwrap();
    assert_eq!(
        single.files,
        [GrepFile {
            path: one_file,
            matches: vec![GrepMatch {
                line_number: 2,
                line: "    lib();".into()
            }],
        }]
    );
}

#[tokio::test]
async fn grep_renders_ripgrep_lines_and_explains_errors() {
    let dir = tree();
    let root = dir.path().to_string_lossy().into_owned();
    let result = host_call(&tool("grep"), json!({"pattern": "fn ", "path": root})).await;
    assert_eq!(
        text(&result),
        format!("{root}/src/lib.rs:1:pub fn lib() {{}}\n{root}/src/main.rs:1:fn main() {{")
    );
    let capped = host_call(
        &tool("grep"),
        json!({"pattern": "fn ", "path": root, "max_matches": 1}),
    )
    .await;
    assert!(text(&capped).ends_with(
        "\n[showing the first 1 of 2 matching lines; narrow the pattern, path or glob, or raise max_matches]"
    ));
    let none = host_call(&tool("grep"), json!({"pattern": "zzz", "path": root})).await;
    assert_eq!(text(&none), "No matches for zzz");

    let err = grep("fn (".into(), Some(root.clone()), None, None, ctx())
        .await
        .unwrap_err();
    assert!(err.starts_with("invalid regex (Rust regex syntax"), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
    let missing = format!("{root}/nope");
    assert_eq!(
        grep("x".into(), Some(missing.clone()), None, None, ctx())
            .await
            .unwrap_err(),
        format!("file or directory not found: {missing} (use list_dir to see what exists)")
    );
}

#[tokio::test]
async fn grep_cards() {
    assert_eq!(
        card(&tool("grep").present_call(&json!({"pattern": "fn main"}))),
        r#"{"card":"generic","title":"Grep fn main","kind":"search"}"#
    );
    let dir = tree();
    let args = json!({"pattern": "lib", "path": dir.path(), "glob": "main.rs"});
    let result = host_call(&tool("grep"), args.clone()).await;
    assert_eq!(
        tool("grep").present_result(&args, &result),
        Some(ToolResultView::Search(SearchView::matches(
            vec![SearchFile {
                path: format!("{}/src/main.rs", dir.path().display()),
                matches: vec![SearchMatch {
                    line_number: 2,
                    line: "    lib();".into()
                }],
            }],
            false,
            1,
        )))
    );
}

#[tokio::test]
async fn a_cancelled_search_stops() {
    let dir = tree();
    let root = dir.path().to_string_lossy().into_owned();
    let cancelled = ctx();
    cancelled.cancellation().cancel();
    assert_eq!(
        glob("*".into(), Some(root.clone()), None, cancelled.clone())
            .await
            .unwrap_err(),
        "search cancelled"
    );
    assert_eq!(
        grep("x".into(), Some(root), None, None, cancelled)
            .await
            .unwrap_err(),
        "search cancelled"
    );
}

#[tokio::test]
async fn anchors_match_at_every_line_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "fn private() {}\n    pub fn api() {}\n",
    )
    .unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let found = grep(r"^\s*pub fn ".into(), Some(root), None, None, ctx())
        .await
        .unwrap();
    assert_eq!(found.total, 1);
    assert_eq!(found.files[0].matches[0].line_number, 2);
}
