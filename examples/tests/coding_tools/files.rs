//! read_file, write_file, edit_file and list_dir.

use std::fs;

use dsh_tools::present::{FileDiff, Location, ReadLine, SearchView, ToolKind};
use dsh_tools::{ToolCallView, ToolResult, ToolResultView};
use dsh_tools_examples::coding::*;
use serde_json::json;

use super::{card, host_call, path_in, text, tmp, tool};

// --- read_file -------------------------------------------------------------------------------

#[tokio::test]
async fn read_file_returns_numbered_lines_and_pages() {
    let dir = tmp();
    let path = path_in(&dir, "notes.md");
    fs::write(&path, "a\nb\r\nc\nd\ne\n").unwrap();

    let all = read_file(path.clone(), None, None).await.unwrap();
    assert_eq!(all.path, path);
    assert_eq!((all.offset, all.total_lines, all.lines.len()), (1, 5, 5));
    assert_eq!(
        all.lines[1],
        NumberedLine {
            number: 2,
            text: "b".into()
        }
    );

    let page = read_file(path.clone(), Some(2), Some(2)).await.unwrap();
    assert_eq!(
        page.lines
            .iter()
            .map(|l| (l.number, l.text.as_str()))
            .collect::<Vec<_>>(),
        [(2, "b"), (3, "c")]
    );

    let result = host_call(
        &tool("read_file"),
        json!({"path": path, "offset": 2, "limit": 2}),
    )
    .await;
    assert_eq!(
        text(&result),
        "     2\tb\n     3\tc\n… 2 more lines (continue with offset 4)"
    );
    let result = host_call(&tool("read_file"), json!({"path": path})).await;
    assert_eq!(
        text(&result),
        "     1\ta\n     2\tb\n     3\tc\n     4\td\n     5\te"
    );
}

#[tokio::test]
async fn read_file_past_the_end_and_empty_files() {
    let dir = tmp();
    let path = path_in(&dir, "short.txt");
    fs::write(&path, "one\ntwo\n").unwrap();
    let out = read_file(path.clone(), Some(10), None).await.unwrap();
    assert_eq!((out.offset, out.total_lines, out.lines.len()), (10, 2, 0));
    let result = host_call(&tool("read_file"), json!({"path": path, "offset": 10})).await;
    assert_eq!(
        text(&result),
        "(no lines: the file has 2 lines; offset 10 is past the end)"
    );

    let empty = path_in(&dir, "empty.txt");
    fs::write(&empty, "").unwrap();
    let result = host_call(&tool("read_file"), json!({"path": empty})).await;
    assert_eq!(text(&result), "(empty file)");
}

#[tokio::test]
async fn read_file_errors_tell_the_model_what_to_do() {
    let dir = tmp();
    let missing = path_in(&dir, "missing.rs");
    assert_eq!(
        read_file(missing.clone(), None, None).await.unwrap_err(),
        format!("file not found: {missing} (use list_dir to see what exists)")
    );
    let root = dir.path().to_string_lossy().into_owned();
    assert_eq!(
        read_file(root.clone(), None, None).await.unwrap_err(),
        format!("{root} is a directory (use list_dir to see its entries)")
    );
    let binary = path_in(&dir, "blob.bin");
    fs::write(&binary, b"\x7fELF\0\0\x01").unwrap();
    assert!(
        read_file(binary, None, None)
            .await
            .unwrap_err()
            .contains("looks like a binary file")
    );
    assert_eq!(
        read_file(missing.clone(), Some(0), None).await.unwrap_err(),
        "offset is 1-based: use 1 for the first line"
    );
    assert_eq!(
        read_file(missing, None, Some(0)).await.unwrap_err(),
        "limit must be at least 1"
    );
    assert_eq!(
        read_file(String::new(), None, None).await.unwrap_err(),
        "path must not be empty"
    );
}

#[tokio::test]
async fn relative_paths_resolve_against_the_current_directory() {
    // `cargo test` runs integration tests in the package directory.
    let out = read_file("Cargo.toml".into(), Some(1), Some(1))
        .await
        .unwrap();
    let expected = std::env::current_dir().unwrap().join("Cargo.toml");
    assert_eq!(out.path, expected.to_string_lossy());
    assert_eq!(out.lines[0].text, "[package]");
}

#[tokio::test]
async fn read_file_cards() {
    let call = tool("read_file").present_call(&json!({"path": "src/a.rs", "offset": 3}));
    assert_eq!(
        card(&call),
        r#"{"card":"generic","title":"Read src/a.rs","kind":"read","locations":[{"path":"src/a.rs","line":3}]}"#
    );
    let call = tool("read_file")
        .present_call(&json!({"path": "src/a.rs"}))
        .unwrap();
    assert_eq!(
        call,
        ToolCallView::generic("Read src/a.rs")
            .with_kind(ToolKind::Read)
            .with_locations(vec![Location::new("src/a.rs")])
    );

    let dir = tmp();
    let path = path_in(&dir, "lib.rs");
    fs::write(&path, "fn a() {}\nfn b() {}\n").unwrap();
    let args = json!({"path": path, "offset": 2});
    let result = host_call(&tool("read_file"), args.clone()).await;
    let view = tool("read_file").present_result(&args, &result).unwrap();
    assert_eq!(
        view,
        ToolResultView::Read {
            title: None,
            path: path.clone(),
            offset: 2,
            lines: vec![ReadLine {
                number: 2,
                text: "fn b() {}".into()
            }],
            total_lines: 2,
            lang: Some("rust".into()),
            content: None,
        }
    );
    // The card is rebuilt from the durable result alone (a replayed log).
    let replayed: ToolResult =
        serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
    assert_eq!(
        tool("read_file").present_result(&args, &replayed),
        Some(view)
    );

    let failed = host_call(&tool("read_file"), json!({"path": path_in(&dir, "nope")})).await;
    assert!(failed.is_error);
    assert_eq!(tool("read_file").present_result(&args, &failed), None);
}

// --- write_file ------------------------------------------------------------------------------

#[tokio::test]
async fn write_file_creates_parents_and_reports_the_before_image() {
    let dir = tmp();
    let path = path_in(&dir, "a/b/new.txt");
    let out = write_file(path.clone(), "hello".into()).await.unwrap();
    assert_eq!(
        out,
        WriteOutput {
            path: path.clone(),
            created: true,
            bytes_written: 5,
            previous: None
        }
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "hello");

    let out = write_file(path.clone(), "bye".into()).await.unwrap();
    assert!(!out.created);
    assert_eq!(out.previous.as_deref(), Some("hello"));
    assert_eq!(fs::read_to_string(&path).unwrap(), "bye");

    let result = host_call(
        &tool("write_file"),
        json!({"path": path, "content": "again!"}),
    )
    .await;
    assert_eq!(
        text(&result),
        format!("Wrote {path} (6 bytes; replaced 3 bytes)")
    );
    let fresh = path_in(&dir, "fresh.txt");
    let result = host_call(&tool("write_file"), json!({"path": fresh, "content": "x"})).await;
    assert_eq!(text(&result), format!("Created {fresh} (1 byte)"));

    let root = dir.path().to_string_lossy().into_owned();
    assert_eq!(
        write_file(root.clone(), "x".into()).await.unwrap_err(),
        format!("{root} is a directory; write_file writes files")
    );
}

#[tokio::test]
async fn write_file_cards() {
    let call = tool("write_file").present_call(&json!({"path": "a.txt", "content": "hi\n"}));
    assert_eq!(
        card(&call),
        r#"{"card":"diff","title":"a.txt","diffs":[{"path":"a.txt","oldText":null,"newText":"hi\n"}],"locations":[{"path":"a.txt"}]}"#
    );

    let dir = tmp();
    let path = path_in(&dir, "f.txt");
    let created = json!({"path": path, "content": "one\n"});
    let result = host_call(&tool("write_file"), created.clone()).await;
    assert_eq!(
        tool("write_file").present_result(&created, &result),
        Some(ToolResultView::diff(vec![FileDiff::created(
            path.clone(),
            "one\n"
        )]))
    );
    let replaced = json!({"path": path, "content": "two\n"});
    let result = host_call(&tool("write_file"), replaced.clone()).await;
    assert_eq!(
        tool("write_file").present_result(&replaced, &result),
        Some(ToolResultView::diff(vec![FileDiff::modified(
            path.clone(),
            "one\n",
            "two\n"
        )]))
    );
}

// --- edit_file -------------------------------------------------------------------------------

#[tokio::test]
async fn edit_file_replaces_exactly_once_and_reports_hunks() {
    let dir = tmp();
    let path = path_in(&dir, "main.rs");
    fs::write(&path, "l1\nl2\nl3\nfn main() {}\nl5\nl6\nl7\n").unwrap();
    let out = edit_file(
        path.clone(),
        "fn main() {}".into(),
        "fn main() { run() }".into(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(out.replacements, 1);
    assert_eq!(
        out.hunks,
        [Hunk {
            old_text: "l2\nl3\nfn main() {}\nl5\nl6\n".into(),
            new_text: "l2\nl3\nfn main() { run() }\nl5\nl6\n".into(),
        }]
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "l1\nl2\nl3\nfn main() { run() }\nl5\nl6\nl7\n"
    );
}

#[tokio::test]
async fn edit_file_refuses_ambiguous_or_missing_text() {
    let dir = tmp();
    let path = path_in(&dir, "dup.txt");
    fs::write(&path, "x = 1\ny = 2\nx = 1\n").unwrap();
    assert_eq!(
        edit_file(path.clone(), "x = 1".into(), "x = 3".into(), None)
            .await
            .unwrap_err(),
        format!(
            "old_string occurs 2 times in {path}; include more surrounding lines to make it \
             unique, or set replace_all to true to replace every occurrence"
        )
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = 1\ny = 2\nx = 1\n");
    assert_eq!(
        edit_file(path.clone(), "z = 9".into(), "z = 0".into(), None)
            .await
            .unwrap_err(),
        format!(
            "old_string was not found in {path}; it must match the file exactly, whitespace and \
             indentation included (read_file shows the current text)"
        )
    );
    assert_eq!(
        edit_file(path.clone(), String::new(), "a".into(), None)
            .await
            .unwrap_err(),
        "old_string must not be empty (use write_file to create a file or replace all of it)"
    );
    assert_eq!(
        edit_file(path.clone(), "y".into(), "y".into(), None)
            .await
            .unwrap_err(),
        "old_string and new_string are identical: there is nothing to change"
    );
    let missing = path_in(&dir, "missing.txt");
    assert_eq!(
        edit_file(missing.clone(), "a".into(), "b".into(), None)
            .await
            .unwrap_err(),
        format!("file not found: {missing} (use list_dir to see what exists)")
    );

    let out = edit_file(path.clone(), "x = 1".into(), "x = 3".into(), Some(true))
        .await
        .unwrap();
    assert_eq!(out.replacements, 2);
    assert_eq!(out.hunks.len(), 1, "nearby replacements share a hunk");
    assert_eq!(fs::read_to_string(&path).unwrap(), "x = 3\ny = 2\nx = 3\n");
}

#[tokio::test]
async fn edit_file_cards() {
    let args = json!({"path": "src/lib.rs", "old_string": "a", "new_string": "b"});
    assert_eq!(
        card(&tool("edit_file").present_call(&args)),
        r#"{"card":"diff","title":"src/lib.rs","diffs":[{"path":"src/lib.rs","oldText":"a","newText":"b"}],"locations":[{"path":"src/lib.rs"}]}"#
    );

    let dir = tmp();
    let path = path_in(&dir, "t.txt");
    fs::write(&path, "1\n2\n3\n4\n5\n6\n7\n8\n9\n").unwrap();
    let args = json!({"path": path, "old_string": "2\n", "new_string": "two\n"});
    let result = host_call(&tool("edit_file"), args.clone()).await;
    assert_eq!(
        text(&result),
        format!("Edited {path}: replaced 1 occurrence")
    );
    assert_eq!(
        tool("edit_file").present_result(&args, &result),
        Some(ToolResultView::diff(vec![FileDiff::modified(
            path.clone(),
            "1\n2\n3\n4\n",
            "1\ntwo\n3\n4\n"
        )]))
    );
}

// --- list_dir --------------------------------------------------------------------------------

#[tokio::test]
async fn list_dir_lists_sorted_entries_with_kinds_and_sizes() {
    let dir = tmp();
    fs::write(dir.path().join("b.txt"), "12345").unwrap();
    fs::create_dir(dir.path().join("a_dir")).unwrap();
    fs::write(dir.path().join(".hidden"), "").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("b.txt", dir.path().join("link")).unwrap();

    let root = dir.path().to_string_lossy().into_owned();
    let out = list_dir(Some(root.clone())).await.unwrap();
    assert_eq!(out.path, root);
    let mut expected = vec![
        ListEntry {
            name: ".hidden".into(),
            kind: EntryKind::File,
            size: Some(0),
        },
        ListEntry {
            name: "a_dir".into(),
            kind: EntryKind::Dir,
            size: None,
        },
        ListEntry {
            name: "b.txt".into(),
            kind: EntryKind::File,
            size: Some(5),
        },
    ];
    if cfg!(unix) {
        expected.push(ListEntry {
            name: "link".into(),
            kind: EntryKind::Symlink,
            size: None,
        });
    }
    assert_eq!(out.entries, expected);

    let args = json!({"path": root});
    let result = host_call(&tool("list_dir"), args.clone()).await;
    let mut listing = ".hidden (0 bytes)\na_dir/\nb.txt (5 bytes)".to_owned();
    if cfg!(unix) {
        listing.push_str("\nlink@");
    }
    assert_eq!(text(&result), listing);
    let Some(ToolResultView::Search(SearchView::Paths {
        paths,
        truncated,
        total,
        ..
    })) = tool("list_dir").present_result(&args, &result)
    else {
        panic!("list_dir has a search/paths result card");
    };
    assert_eq!(paths[1], format!("{root}/a_dir/"));
    assert_eq!(paths[2], format!("{root}/b.txt"));
    assert_eq!((truncated, total), (false, expected.len() as u64));
    assert_eq!(
        card(&tool("list_dir").present_call(&json!({}))),
        r#"{"card":"generic","title":"List .","kind":"read"}"#
    );
}

#[tokio::test]
async fn list_dir_errors() {
    let dir = tmp();
    let missing = path_in(&dir, "nope");
    assert_eq!(
        list_dir(Some(missing.clone())).await.unwrap_err(),
        format!("directory not found: {missing} (use list_dir to see what exists)")
    );
    let file = path_in(&dir, "f");
    fs::write(&file, "").unwrap();
    assert_eq!(
        list_dir(Some(file.clone())).await.unwrap_err(),
        format!("{file} is a file, not a directory (use read_file to read it)")
    );
    let empty = host_call(&tool("list_dir"), json!({"path": dir.path()})).await;
    assert!(text(&empty).ends_with(" (0 bytes)"));
}
