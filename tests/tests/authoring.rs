//! The issue's user-shaped tool: a code host's issue search with every authoring feature in one
//! signature — constraint attributes, sets, tuples, `NonZero`, uuid/chrono/url types, a
//! `Duration`, a recursive struct and a recursive enum — round-tripped through its schema, the
//! validator (good values deserialise, each bad value is reported at its path) and serde.

use std::collections::BTreeSet;
use std::num::NonZeroU8;
use std::time::Duration;

use dsh_tools::{ToolSchema, tool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A section of an outline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct Outline {
    /// The heading.
    #[schema(length(min = 1, max = 80))]
    pub title: String,
    /// Nested sections.
    pub children: Vec<Outline>,
}

/// A filter expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Filter {
    /// Matches a label.
    Label {
        /// The label.
        name: String,
    },
    /// Both must match.
    And {
        /// The left side.
        left: Box<Filter>,
        /// The right side.
        right: Box<Filter>,
    },
    /// The inner filter must not match.
    Not {
        /// The negated filter.
        inner: Box<Filter>,
    },
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct Hit {
    /// The issue number.
    pub number: u64,
    /// The issue's id.
    pub id: uuid::Uuid,
}

/// Search the issues of a repository.
#[tool(read_only)]
#[allow(
    clippy::too_many_arguments,
    reason = "one argument per authoring feature, as a user's tool would have"
)]
pub async fn search_issues(
    /// The repository, `owner/name`.
    #[schema(regex(pattern = r"^[\w.-]+/[\w.-]+$"), example = "rust-lang/rust")]
    repo: String,
    /// Results per page.
    #[schema(range(min = 1, max = 100))]
    per_page: u32,
    /// Labels that must all be present.
    labels: BTreeSet<String>,
    /// Only issues updated since.
    since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only this issue.
    id: Option<uuid::Uuid>,
    /// An inclusive range of issue numbers.
    numbers: Option<(u64, u64)>,
    /// How many pages at most.
    pages: NonZeroU8,
    /// Who to notify.
    #[validate(email)]
    notify: Option<String>,
    /// Where to post the results.
    webhook: Option<url::Url>,
    /// How long to wait.
    timeout: Option<Duration>,
    /// A relevance threshold.
    #[schemars(range(exclusive_min = 0.0, max = 1.0))]
    threshold: Option<f64>,
    /// The outline of the report.
    outline: Option<Outline>,
    /// A filter.
    filter: Option<Filter>,
) -> Result<Vec<Hit>, String> {
    let _ = (
        repo, per_page, labels, since, id, numbers, pages, notify, webhook,
    );
    let _ = (timeout, threshold, outline, filter);
    Ok(Vec::new())
}

fn good() -> Value {
    json!({
        "repo": "rust-lang/rust",
        "per_page": 100,
        "labels": ["A-macros", "C-bug"],
        "since": "2024-05-01T12:00:00Z",
        "id": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "numbers": [1, 99],
        "pages": 3,
        "notify": "dev@example.com",
        "webhook": "https://example.com/hook",
        "timeout": {"secs": 5, "nanos": 0},
        "threshold": 0.5,
        "outline": {"title": "Report", "children": [{"title": "Bugs", "children": []}]},
        "filter": {"op": "and", "left": {"op": "label", "name": "bug"}, "right": {"op": "not", "inner": {"op": "label", "name": "wontfix"}}}
    })
}

#[test]
fn the_schema_states_every_constraint() {
    let def = search_issues::definition().expect("builds");
    let p = def.parameters();
    assert_eq!(
        p["properties"]["repo"],
        json!({"type": "string", "description": "The repository, `owner/name`.", "pattern": "^[\\w.-]+/[\\w.-]+$", "examples": ["rust-lang/rust"]})
    );
    assert_eq!(p["properties"]["per_page"]["minimum"], json!(1));
    assert_eq!(p["properties"]["per_page"]["maximum"], json!(100));
    assert_eq!(p["properties"]["labels"]["uniqueItems"], json!(true));
    assert_eq!(
        p["properties"]["numbers"]["oneOf"][0],
        json!({"type": "array", "prefixItems": [
            {"type": "integer", "minimum": 0},
            {"type": "integer", "minimum": 0}
        ], "items": false, "minItems": 2})
    );
    assert_eq!(p["properties"]["pages"]["minimum"], json!(1));
    assert_eq!(
        p["properties"]["notify"]["oneOf"][0]["format"],
        json!("email")
    );
    assert_eq!(
        p["properties"]["webhook"]["oneOf"][0]["format"],
        json!("uri")
    );
    assert_eq!(p["properties"]["id"]["oneOf"][0]["format"], json!("uuid"));
    assert_eq!(
        p["properties"]["since"]["oneOf"][0]["format"],
        json!("date-time")
    );
    assert_eq!(
        p["properties"]["threshold"]["oneOf"][0]["exclusiveMinimum"],
        json!(0.0)
    );
    assert_eq!(
        p["properties"]["outline"]["oneOf"][0],
        json!({"$ref": "#/$defs/Outline"})
    );
    assert_eq!(
        p["$defs"]["Outline"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Outline"})
    );
    assert_eq!(
        p["$defs"]["Outline"]["properties"]["title"]["maxLength"],
        json!(80)
    );
    assert!(p["$defs"]["Filter"]["oneOf"].is_array(), "{}", p["$defs"]);
    let output = def.output_schema();
    assert_eq!(
        output["items"]["properties"]["id"],
        json!({"type": "string", "description": "The issue's id."})
    );
}

#[test]
fn a_good_value_validates_and_deserialises() {
    let def = search_issues::definition().expect("builds");
    def.validate_args(&good()).expect("valid");
    let args: search_issues::Args =
        dsh_tools::__private::deserialize_args(&good()).expect("deserialises");
    assert_eq!(args.per_page, 100);
    assert_eq!(args.pages.get(), 3);
    assert_eq!(args.numbers, Some((1, 99)));
    assert!(matches!(args.filter, Some(Filter::And { .. })));
}

#[test]
fn each_bad_value_is_reported_at_its_path() {
    let def = search_issues::definition().expect("builds");
    let mut bad = good();
    bad["repo"] = json!("rust");
    bad["per_page"] = json!(101);
    bad["labels"] = json!(["x", "x"]);
    bad["since"] = json!("2024-05-01");
    bad["id"] = json!("not-a-uuid");
    bad["numbers"] = json!([1, 2, 3]);
    bad["pages"] = json!(0);
    bad["notify"] = json!("nobody");
    bad["webhook"] = json!("/relative");
    bad["timeout"] = json!({"secs": 5});
    bad["threshold"] = json!(0);
    bad["outline"]["children"][0]["title"] = json!("");
    bad["filter"]["right"]["inner"] = json!({"op": "label"});
    let error = def.validate_args(&bad).unwrap_err();
    let v = error.violations;
    // Each `Option<T>` reports its own branch's violations; the untagged `filter` union names
    // its closest branch.
    assert_eq!(
        v,
        [
            r#""repo" must match the pattern "^[\\w.-]+/[\\w.-]+$""#,
            r#""per_page" must be at most 100"#,
            r#""labels" must not contain duplicate items (items 0 and 1 are equal)"#,
            r#""since" must match the pattern "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:[0-5]\\d""#,
            r#""since" must be a date-time (RFC 3339, like "2024-05-01T12:00:00Z" or "2024-05-01T14:00:00.5+02:00")"#,
            r#""id" must be a UUID (like "67e55044-10b1-426f-9247-bb680e5fe0c8")"#,
            r#""numbers" must have at most 2 items"#,
            r#""pages" must be at least 1"#,
            r#""notify" must be an email address (like "name@example.com")"#,
            r#""webhook" must be an absolute URI (like "https://example.com/path")"#,
            r#"missing required property "timeout.nanos""#,
            r#""threshold" must be greater than 0"#,
            r#""outline.children[0].title" must be at least 1 character long"#,
            r#""filter" must match exactly one oneOf branch (matched 0); closest is branch 1: "filter.right" must match exactly one oneOf branch (matched 0)"#,
        ]
    );
}

#[test]
fn ecmascript_regex_semantics_reach_the_tool() {
    let def = search_issues::definition().expect("builds");
    let mut args = good();
    // `\w` is ASCII in ECMAScript: a Cyrillic owner does not match.
    args["repo"] = json!("ржавчина/rust");
    assert!(def.validate_args(&args).is_err());
}

/// The tool's schemas are a fixture of the runtime's `tsc --strict` corpus
/// (`dsh-tools-runtime/tests/fixtures/sdk/schemas/authoring_search_issues.json`), with a
/// valid and invalid arguments; this keeps the fixture equal to what the macro emits
/// (`UPDATE_GOLDEN=1` rewrites it).
#[test]
fn the_sdk_fixture_is_current() {
    let def = search_issues::definition().expect("builds");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dsh-tools-runtime/tests/fixtures/sdk/schemas/authoring_search_issues.json");
    let mut wrong_tuple = good();
    wrong_tuple["numbers"] = json!([1, "2"]);
    let mut wrong_filter = good();
    wrong_filter["filter"] = json!({"op": "and", "left": {"op": "label", "name": 1}, "right": {"op": "label", "name": "x"}});
    let fixture = json!({
        "name": "search_issues",
        "description": def.description(),
        "parameters": def.parameters(),
        "output": def.output_schema(),
        "valid": [good(), {"repo": "a/b", "per_page": 1, "labels": [], "pages": 1}],
        "invalid": [wrong_tuple, wrong_filter, {"repo": "a/b", "per_page": 1, "labels": [1], "pages": 1}],
        "valid_output": [[{"number": 1, "id": "67e55044-10b1-426f-9247-bb680e5fe0c8"}]]
    });
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&fixture).expect("json")
    );
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).expect("fixture written");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, text,
        "rerun with UPDATE_GOLDEN=1 and review the diff"
    );
}
