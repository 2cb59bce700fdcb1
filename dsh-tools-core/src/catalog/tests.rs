//! The catalog layout, the manifest guards and the drift check.

use super::*;
use dsh_tools::ToolAnnotations;
use serde_json::json;

fn tool(name: &str, read_only: bool) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("The {name} tool.\nSecond line."))
        .parameters_json(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
        )
        .annotations(ToolAnnotations {
            read_only_hint: Some(read_only),
            ..ToolAnnotations::default()
        })
        .execute(|_, _| async { Ok(serde_json::Value::Null) })
        .build()
        .unwrap()
}

fn manifest() -> Vec<PackageInfo> {
    vec![
        PackageInfo {
            name: "pack_a".into(),
            requires: vec!["a shell".into()],
            aliases: vec![],
            note: Some("Runs | pipes.\nCareful.".into()),
        },
        PackageInfo::new("pack_b"),
    ]
}

#[test]
fn the_page_has_its_fixed_layout() {
    let catalog = Catalog::build(
        "Every tool.",
        manifest(),
        vec![
            CatalogEntry::new("pack_b", "b/src/lib.rs", tool("zeta", true)),
            CatalogEntry::new("pack_a", "a/src/w.rs", tool("write", false)),
            CatalogEntry::new("pack_a", "a/src/r.rs", tool("read", true)),
        ],
    )
    .unwrap();
    let expected = [
        GENERATED_BANNER,
        "",
        "# Tool catalog",
        "",
        "Every tool.",
        "",
        "| package | tools | requires | writes | aliases | note |",
        "|---|---|---|---|---|---|",
        "| `pack_a` | `read`, `write` | `a shell` | `write` | - | Runs \\| pipes.<br>Careful. |",
        "| `pack_b` | `zeta` | - | - | - | - |",
        "",
        "<a id=\"pack_a\"></a>",
        "",
        "## `pack_a`",
        "",
        "### `read`",
        "",
        "The read tool.",
        "Second line.",
        "",
        "```json",
        "{",
        "  \"type\": \"object\",",
        "  \"properties\": {",
        "    \"a\": {",
        "      \"type\": \"string\"",
        "    }",
        "  },",
        "  \"required\": [",
        "    \"a\"",
        "  ]",
        "}",
        "```",
        "",
        "Source: [`a/src/r.rs`](../a/src/r.rs)",
    ]
    .join("\n");
    let text = catalog.to_markdown();
    assert!(text.starts_with(&expected), "{text}");
    assert!(text.contains("### `write`"));
    assert!(text.contains(
        "Source: [`a/src/w.rs`](../a/src/w.rs)\n\nRuns | pipes.\nCareful.\n\n<a id=\"pack_b\"></a>"
    ));
    assert!(text.ends_with("Source: [`b/src/lib.rs`](../b/src/lib.rs)\n"));
}

#[test]
fn the_manifest_guards_hold() {
    let err = Catalog::build(
        "",
        manifest(),
        vec![CatalogEntry::new("pack_c", "c.rs", tool("c", true))],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`pack_c` (tool `c`) is not in the catalog manifest"
    );
    assert_eq!(err.code(), "NOT_IN_MANIFEST");
    let err = Catalog::build(
        "",
        manifest(),
        vec![CatalogEntry::new("pack_b", "b.rs", tool("b", true))],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "pack_a booted without registering a single tool (requires: a shell)"
    );
    assert_eq!(err.code(), "EMPTY_PACKAGE");
}

#[test]
fn drift_names_the_first_differing_line() {
    assert_eq!(first_drift("a\nb\n", "a\nb\n"), None);
    assert_eq!(first_drift("a\r\nb\r\n", "a\nb\n"), None);
    assert_eq!(
        first_drift("a\nc\n", "a\nb\n"),
        Some(Drift {
            line: 2,
            expected: Some("b".into()),
            found: Some("c".into())
        })
    );
    assert_eq!(
        first_drift("a\n", "a\nb\n"),
        Some(Drift {
            line: 2,
            expected: Some("b".into()),
            found: Some(String::new())
        })
    );
    assert_eq!(
        first_drift("a\nb\n\nextra", "a\nb\n"),
        Some(Drift {
            line: 4,
            expected: None,
            found: Some("extra".into())
        })
    );
}
