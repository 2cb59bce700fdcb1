//! `dsh-tools sdk`: the example tools' SDK section, one schema's type, a rendered tool list.

mod support;

fn sdk(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut all = vec!["sdk"];
    all.extend_from_slice(args);
    support::dsh_tools(&std::env::temp_dir(), &all, stdin)
}

#[test]
fn the_example_tools_sdk_declares_every_tool_in_order() {
    let (code, text, stderr) = sdk(&[], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(text.starts_with("## Writing code for run_code"));
    for fragment in [
        "two required arguments",
        "erasable syntax only",
        "rejects with `ToolCallError`",
        "MAY overlap under `Promise.all`",
        "lossless JSON",
        "declare const tools: {",
    ] {
        assert!(text.contains(fragment), "missing {fragment:?}");
    }
    let order: Vec<usize> = [
        "\nbash: {",
        "\nedit_file: {",
        "\nglob: {",
        "\ngrep: {",
        "\nlist_dir: {",
        "\nread_file: {",
        "\nwrite_file: {",
    ]
    .iter()
    .map(|member| text.find(member).unwrap_or_else(|| panic!("no {member}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}

#[test]
fn one_schema_and_a_tool_list() {
    let (code, text, _) = sdk(
        &["ts-type"],
        r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]}}},"required":["a"],"additionalProperties":false}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(text, "{\n  a: (\"x\" | \"y\")[];\n}\n");
    let (code, text, _) = sdk(
        &["render"],
        r#"[{"name":"my-tool","description":"Do it.","parameters":{"type":"object","properties":{}}}]"#,
    );
    assert_eq!(code, 0);
    assert!(text.contains("\"my-tool\""), "{text}");
    let (code, _, stderr) = sdk(&["render"], r#"{"not": "a list"}"#);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("dsh-tools: <stdin>: not a list of tools"),
        "{stderr}"
    );
}

#[test]
fn ts_type_takes_an_inline_schema() {
    let (code, text, stderr) = sdk(
        &[
            "ts-type",
            r#"{"type": "array", "items": {"type": "string"}}"#,
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(text.trim(), "string[]");
}
