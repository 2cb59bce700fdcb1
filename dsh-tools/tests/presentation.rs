//! Wire shape of the presentation cards (render intents).

use dsh_tools::content::{ContentBlock, ToolResult};
use dsh_tools::present::{
    FileDiff, Location, ReadLine, SearchFile, SearchMatch, SearchView, ToolCallView, ToolKind,
    ToolResultView, WebSource, WebView, fallback_call_view, fallback_result_view,
};
use serde_json::{Value, json};

/// Serializes to exactly `json` and reads `json` back to an equal value.
fn exact<T>(value: &T, json: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_string(value).unwrap(), json);
    assert_eq!(&serde_json::from_str::<T>(json).unwrap(), value);
}

fn reject<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
    serde_json::from_str::<T>(json).unwrap_err().to_string()
}

#[test]
fn tool_kinds_are_lowercase() {
    let all = [
        (ToolKind::Read, "read"),
        (ToolKind::Edit, "edit"),
        (ToolKind::Delete, "delete"),
        (ToolKind::Move, "move"),
        (ToolKind::Search, "search"),
        (ToolKind::Execute, "execute"),
        (ToolKind::Fetch, "fetch"),
        (ToolKind::Other, "other"),
    ];
    for (kind, wire) in all {
        exact(&kind, &format!("\"{wire}\""));
    }
    assert_eq!(ToolKind::default(), ToolKind::Other);
}

#[test]
fn generic_call_card() {
    exact(
        &ToolCallView::generic("Working"),
        r#"{"card":"generic","title":"Working"}"#,
    );
    let full = ToolCallView::generic("Read a.rs")
        .with_kind(ToolKind::Read)
        .with_raw_input(json!({"path": "a.rs", "limit": 10}))
        .with_content(vec![
            ContentBlock::text("preview"),
            serde_json::from_str(r#"{"type":"chart","b":1,"a":2}"#).unwrap(),
        ])
        .with_locations(vec![
            Location::new("a.rs"),
            Location::new("b.rs").at_line(4),
        ]);
    exact(
        &full,
        r#"{"card":"generic","title":"Read a.rs","kind":"read","rawInput":{"path":"a.rs","limit":10},"content":[{"type":"text","text":"preview"},{"type":"chart","b":1,"a":2}],"locations":[{"path":"a.rs"},{"path":"b.rs","line":4}]}"#,
    );
    assert_eq!(full.card(), "generic");
    assert_eq!(full.title(), "Read a.rs");
}

#[test]
fn terminal_call_card() {
    exact(
        &ToolCallView::terminal("ls -la"),
        r#"{"card":"terminal","title":"ls -la"}"#,
    );
    let full = ToolCallView::terminal("cargo test")
        .with_description("Run the tests")
        .with_cwd("/repo");
    exact(
        &full,
        r#"{"card":"terminal","title":"cargo test","description":"Run the tests","cwd":"/repo"}"#,
    );
    assert_eq!(full.card(), "terminal");
    assert_eq!(full.title(), "cargo test");
}

#[test]
fn diff_call_card_keeps_null_old_text() {
    let view = ToolCallView::diff(
        "Edit a.rs",
        vec![
            FileDiff::modified("a.rs", "old\n", "new\n"),
            FileDiff::created("b.rs", "fresh\n"),
        ],
    );
    exact(
        &view,
        r#"{"card":"diff","title":"Edit a.rs","diffs":[{"path":"a.rs","oldText":"old\n","newText":"new\n"},{"path":"b.rs","oldText":null,"newText":"fresh\n"}]}"#,
    );
    exact(
        &view.with_locations(vec![Location::new("a.rs").at_line(1)]),
        r#"{"card":"diff","title":"Edit a.rs","diffs":[{"path":"a.rs","oldText":"old\n","newText":"new\n"},{"path":"b.rs","oldText":null,"newText":"fresh\n"}],"locations":[{"path":"a.rs","line":1}]}"#,
    );
}

#[test]
fn call_builders_ignore_fields_the_card_lacks() {
    let terminal = ToolCallView::terminal("ls");
    assert_eq!(
        terminal
            .clone()
            .with_kind(ToolKind::Execute)
            .with_raw_input(json!(1))
            .with_content(vec![])
            .with_locations(vec![Location::new("x")]),
        terminal
    );
    let generic = ToolCallView::generic("g");
    assert_eq!(generic.clone().with_description("d").with_cwd("/"), generic);
}

#[test]
fn fallback_call_view_is_generic_with_raw_args() {
    let args = json!({"z": 1, "a": [true]});
    let view = fallback_call_view("my_tool", &args);
    exact(
        &view,
        r#"{"card":"generic","title":"my_tool","rawInput":{"z":1,"a":[true]}}"#,
    );
    // A null argument value is still raw input, not absence.
    exact(
        &fallback_call_view("t", &Value::Null),
        r#"{"card":"generic","title":"t","rawInput":null}"#,
    );
}

#[test]
fn generic_result_cards() {
    exact(
        &ToolResultView::Generic {
            title: None,
            content: None,
        },
        r#"{"card":"generic"}"#,
    );
    exact(
        &ToolResultView::generic_content(vec![ContentBlock::text("done")]).with_title("Done"),
        r#"{"card":"generic","title":"Done","content":[{"type":"text","text":"done"}]}"#,
    );
    let result = ToolResult {
        content: vec![serde_json::from_str(r#"{"type":"new","k":0}"#).unwrap()],
        is_error: true,
        meta: None,
    };
    exact(
        &fallback_result_view(&result),
        r#"{"card":"generic","content":[{"type":"new","k":0}]}"#,
    );
}

#[test]
fn terminal_result_cards() {
    exact(
        &ToolResultView::Terminal {
            title: None,
            output: None,
            exit_code: None,
            signal: None,
        },
        r#"{"card":"terminal"}"#,
    );
    let full = ToolResultView::terminal_output("boom\n")
        .with_title("make")
        .with_exit_code(-1)
        .with_signal("SIGKILL");
    exact(
        &full,
        r#"{"card":"terminal","title":"make","output":"boom\n","exitCode":-1,"signal":"SIGKILL"}"#,
    );
    assert_eq!(full.card(), "terminal");
    assert_eq!(full.title(), Some("make"));
}

#[test]
fn diff_result_card() {
    exact(
        &ToolResultView::diff(vec![FileDiff::created("n.txt", "")]),
        r#"{"card":"diff","diffs":[{"path":"n.txt","oldText":null,"newText":""}]}"#,
    );
    exact(
        &ToolResultView::diff(vec![]).with_title("Wrote 0 files"),
        r#"{"card":"diff","title":"Wrote 0 files","diffs":[]}"#,
    );
}

#[test]
fn search_matches_card() {
    let view = ToolResultView::from(SearchView::matches(
        vec![SearchFile {
            path: "src/lib.rs".into(),
            matches: vec![
                SearchMatch {
                    line_number: 3,
                    line: "fn a() {}".into(),
                },
                SearchMatch {
                    line_number: 9,
                    line: "fn b() {}".into(),
                },
            ],
        }],
        true,
        120,
    ))
    .with_title("fn");
    exact(
        &view,
        r#"{"card":"search","shape":"matches","title":"fn","files":[{"path":"src/lib.rs","matches":[{"lineNumber":3,"line":"fn a() {}"},{"lineNumber":9,"line":"fn b() {}"}]}],"truncated":true,"total":120}"#,
    );
    assert_eq!(view.card(), "search");
    assert_eq!(view.title(), Some("fn"));
}

#[test]
fn search_paths_card() {
    exact(
        &ToolResultView::Search(SearchView::paths(vec![], false, 0)),
        r#"{"card":"search","shape":"paths","paths":[],"truncated":false,"total":0}"#,
    );
    exact(
        &ToolResultView::Search(SearchView::Paths {
            title: Some("*.rs".into()),
            paths: vec!["a.rs".into(), "b.rs".into()],
            truncated: true,
            total: u64::MAX,
        }),
        r#"{"card":"search","shape":"paths","title":"*.rs","paths":["a.rs","b.rs"],"truncated":true,"total":18446744073709551615}"#,
    );
}

#[test]
fn read_card() {
    let view = ToolResultView::Read {
        title: Some("Read a.rs".into()),
        path: "a.rs".into(),
        offset: 10,
        lines: vec![
            ReadLine {
                number: 10,
                text: "let x = 1;".into(),
            },
            ReadLine {
                number: 11,
                text: String::new(),
            },
        ],
        total_lines: 11,
        lang: Some("rust".into()),
        content: Some(vec![ContentBlock::text("note")]),
    };
    exact(
        &view,
        r#"{"card":"read","title":"Read a.rs","path":"a.rs","offset":10,"lines":[{"number":10,"text":"let x = 1;"},{"number":11,"text":""}],"totalLines":11,"lang":"rust","content":[{"type":"text","text":"note"}]}"#,
    );
    // The requested offset is kept even past the end of the file.
    exact(
        &ToolResultView::Read {
            title: None,
            path: "a.rs".into(),
            offset: 500,
            lines: vec![],
            total_lines: 11,
            lang: None,
            content: None,
        },
        r#"{"card":"read","path":"a.rs","offset":500,"lines":[],"totalLines":11}"#,
    );
}

#[test]
fn web_search_card() {
    exact(
        &ToolResultView::Web(WebView::search(vec![], false)),
        r#"{"card":"web","kind":"search","sources":[],"truncated":false}"#,
    );
    let view = ToolResultView::Web(WebView::Search {
        title: Some("rust serde".into()),
        sources: vec![
            WebSource {
                url: "https://serde.rs".into(),
                title: Some("Serde".into()),
                snippet: Some("A framework".into()),
                published_at: Some("2024-01-02".into()),
            },
            WebSource {
                url: "https://docs.rs".into(),
                title: None,
                snippet: None,
                published_at: None,
            },
        ],
        answer: Some("Use serde.".into()),
        truncated: true,
    });
    exact(
        &view,
        r#"{"card":"web","kind":"search","title":"rust serde","sources":[{"url":"https://serde.rs","title":"Serde","snippet":"A framework","publishedAt":"2024-01-02"},{"url":"https://docs.rs"}],"answer":"Use serde.","truncated":true}"#,
    );
}

#[test]
fn web_fetch_card() {
    let view = ToolResultView::from(WebView::fetch("https://example.com", 404, true))
        .with_title("example.com");
    exact(
        &view,
        r#"{"card":"web","kind":"fetch","title":"example.com","url":"https://example.com","statusCode":404,"truncated":true}"#,
    );
    assert_eq!(view.card(), "web");
}

#[test]
fn nested_tags_may_arrive_in_any_order() {
    let view: ToolResultView = serde_json::from_str(
        r#"{"total":1,"shape":"paths","truncated":false,"paths":["a"],"card":"search"}"#,
    )
    .unwrap();
    assert_eq!(view, SearchView::paths(vec!["a".into()], false, 1).into());
    let view: ToolResultView = serde_json::from_str(
        r#"{"statusCode":200,"kind":"fetch","url":"u","truncated":false,"card":"web"}"#,
    )
    .unwrap();
    assert_eq!(view, WebView::fetch("u", 200, false).into());
}

#[test]
fn result_builders_ignore_fields_the_card_lacks() {
    let diff = ToolResultView::diff(vec![]);
    assert_eq!(diff.clone().with_exit_code(1).with_signal("SIGTERM"), diff);
    assert_eq!(diff.title(), None);
}

#[test]
fn unknown_cards_and_malformed_cards_are_rejected() {
    let err = reject::<ToolCallView>(r#"{"card":"chart","title":"x"}"#);
    assert!(err.contains("unknown variant `chart`"), "got: {err}");
    let err = reject::<ToolCallView>(r#"{"title":"x"}"#);
    assert!(err.contains("missing field `card`"), "got: {err}");
    let err = reject::<ToolResultView>(r#"{"card":"search","shape":"tree"}"#);
    assert!(err.contains("unknown variant `tree`"), "got: {err}");
    let err = reject::<ToolResultView>(r#"{"card":"web","url":"u"}"#);
    assert!(err.contains("missing field `kind`"), "got: {err}");
    let err = reject::<ToolResultView>(r#"{"card":"read","path":"a","lines":[],"totalLines":0}"#);
    assert!(err.contains("missing field `offset`"), "got: {err}");
    let err = reject::<ToolResultView>(
        r#"{"card":"web","kind":"fetch","url":"u","statusCode":70000,"truncated":false}"#,
    );
    assert!(err.contains("70000"), "got: {err}");
    // Content inside a card goes through the content-block checks.
    let err = reject::<ToolResultView>(r#"{"card":"generic","content":[{"type":"text"}]}"#);
    assert!(
        err.contains(r#"invalid "text" content block: missing field "text""#),
        "got: {err}"
    );
}
