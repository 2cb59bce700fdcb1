//! The issue's user-shaped tool (every authoring feature in one signature; its schemas are the
//! SDK fixture `authoring_search_issues.json`, kept current by `tests/tests/authoring.rs`) in
//! every dialect: what each provider keeps, drops or cannot express of the new keywords.

use dsh_tools_runtime::dialect::{Dialect, DialectOptions, IssueKind, render_schema};
use serde_json::{Value, json};

fn parameters() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sdk/schemas/authoring_search_issues.json"
    ))
    .expect("fixture");
    let fixture: Value = serde_json::from_str(&text).expect("json");
    fixture["parameters"].clone()
}

fn issues(dialect: Dialect) -> (Value, bool, Vec<(String, IssueKind)>) {
    let rendered =
        render_schema(&parameters(), dialect, &DialectOptions::default()).expect("renders");
    let issues = rendered
        .issues
        .iter()
        .map(|i| (i.path.clone(), i.kind))
        .collect();
    (rendered.schema, rendered.strict, issues)
}

#[test]
fn mcp_and_anthropic_send_every_keyword() {
    for dialect in [Dialect::Mcp, Dialect::Anthropic] {
        let (schema, _, issues) = issues(dialect);
        let p = &schema["properties"];
        assert_eq!(
            p["repo"]["pattern"],
            json!("^[\\w.-]+/[\\w.-]+$"),
            "{dialect}"
        );
        assert_eq!(p["labels"]["uniqueItems"], json!(true), "{dialect}");
        assert!(
            p["numbers"]["oneOf"][0]["prefixItems"].is_array(),
            "{dialect}"
        );
        assert_eq!(
            p["outline"]["oneOf"][0]["$ref"],
            json!("#/$defs/Outline"),
            "{dialect}"
        );
        assert!(schema["$defs"]["Outline"].is_object(), "{dialect}");
        assert!(issues.is_empty(), "{dialect}: {issues:?}");
    }
}

#[test]
fn openai_strict_keeps_patterns_and_formats_and_cannot_express_tuples() {
    let (schema, strict, issues) = issues(Dialect::OpenAiStrict);
    assert!(!strict, "a tuple keeps the tool non-strict");
    assert_eq!(
        issues,
        vec![
            (
                "#/properties/numbers/oneOf/0/prefixItems".to_owned(),
                IssueKind::Unsupported
            ),
            (
                "#/properties/numbers/oneOf/0/items".to_owned(),
                IssueKind::Unsupported
            ),
        ]
    );
    assert_eq!(
        schema["properties"]["repo"]["pattern"],
        json!("^[\\w.-]+/[\\w.-]+$")
    );
    // Without the tuple the same tool is strict, and keeps what strict mode accepts.
    let mut parameters = parameters();
    parameters["properties"]
        .as_object_mut()
        .expect("properties")
        .shift_remove("numbers");
    let rendered = render_schema(
        &parameters,
        Dialect::OpenAiStrict,
        &DialectOptions::default(),
    )
    .expect("renders");
    assert!(rendered.strict, "{:?}", rendered.issues);
    let p = &rendered.schema["properties"];
    assert_eq!(p["repo"]["pattern"], json!("^[\\w.-]+/[\\w.-]+$"));
    assert_eq!(p["per_page"]["maximum"], json!(100));
    assert_eq!(p["id"]["anyOf"][0]["format"], json!("uuid"));
    assert!(
        p["labels"].get("uniqueItems").is_none(),
        "dropped: strict mode lacks it"
    );
    assert_eq!(p["outline"]["anyOf"][0]["$ref"], json!("#/$defs/Outline"));
}

#[test]
fn gemini_drops_what_it_rejects_and_cuts_recursion() {
    let (schema, _, issues) = issues(Dialect::Gemini);
    let dropped = |path: &str| issues.contains(&(path.to_owned(), IssueKind::Dropped));
    assert!(dropped("#/properties/labels/uniqueItems"), "{issues:?}");
    assert!(dropped("#/properties/id/oneOf/0/format"), "{issues:?}");
    assert!(
        dropped("#/properties/numbers/oneOf/0/prefixItems"),
        "{issues:?}"
    );
    assert!(issues.contains(&(
        "#/$defs/Outline/properties/children/items/$ref".to_owned(),
        IssueKind::Degraded
    )));
    let p = &schema["properties"];
    assert_eq!(p["repo"]["pattern"], json!("^[\\w.-]+/[\\w.-]+$"));
    assert_eq!(p["since"]["format"], json!("date-time"));
    assert!(schema.get("$defs").is_none());
}
