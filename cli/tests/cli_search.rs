//! `dsh-tools search`: the tools of a set that best match a request, best first.

mod support;

use serde_json::Value;

fn search(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    support::dsh_tools(&std::env::temp_dir(), &all, stdin)
}

fn names(text: &str) -> Vec<String> {
    let hits: Vec<Value> = serde_json::from_str(text).expect("one JSON list");
    let mut previous = f64::INFINITY;
    hits.iter()
        .map(|hit| {
            let score = hit["score"].as_f64().expect("a score");
            assert!(score > 0.0 && score <= previous, "not best first: {text}");
            previous = score;
            hit["name"].as_str().expect("a name").to_owned()
        })
        .collect()
}

const LIST: &str = r#"[
  {"name":"read_file","description":"Read a text file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},
  {"name":"search_issues","description":"Search the issues of a repository.","parameters":{"type":"object","properties":{"repo":{"type":"string"},"state":{"type":"string"}}}},
  {"name":"send_mail","description":"Send an e-mail.","parameters":{"type":"object","properties":{"to":{"type":"string"}}}}
]"#;

#[test]
fn the_example_tools_without_input() {
    let (code, text, stderr) = search(&["run a shell command"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        names(&text).first().map(String::as_str),
        Some("bash"),
        "{text}"
    );
}

#[test]
fn a_tool_list_inline_and_on_stdin_with_a_limit() {
    let (code, inline, stderr) = search(&["find open tickets in a repo", LIST], "");
    assert_eq!(code, 0, "{stderr}");
    let (code, piped, stderr) = search(&["find open tickets in a repo", "-"], LIST);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(inline, piped);
    assert_eq!(names(&inline), ["search_issues"]);
    let (code, limited, _) = search(&["file issue mail", LIST, "--limit", "2"], "");
    assert_eq!(code, 0);
    assert_eq!(names(&limited).len(), 2, "{limited}");
}

#[test]
fn an_empty_query_matches_nothing_and_a_bad_list_is_bad_input() {
    let (code, text, stderr) = search(&["", LIST], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(text.trim(), "[]");
    let (code, _, stderr) = search(&["read", "-"], r#"{"not": "a list"}"#);
    assert_eq!(code, 2);
    assert!(!stderr.trim().is_empty());
}
