//! The coding tool pack: tool bodies called directly in a temporary directory, and the
//! definitions `#[tool]` builds (schemas, annotations, rendering, UI cards) driven the way a
//! host drives them. One module per area: `files` (read, write, edit, list), `search` (glob,
//! grep) and `shell` (bash); the shared helpers are here.

use std::sync::Arc;

use dsh_tools::{ContentBlock, ToolDefinition, ToolResult, ToolRunContext};
use dsh_tools_examples::coding::*;
use serde_json::{Value, json};
use tempfile::TempDir;

mod files;
mod search;
mod shell;

fn ctx() -> ToolRunContext {
    ToolRunContext::detached("test-call")
}

fn tmp() -> TempDir {
    tempfile::tempdir().unwrap()
}

fn path_in(dir: &TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

fn tool(name: &str) -> ToolDefinition {
    coding_tools()
        .unwrap()
        .into_iter()
        .find(|tool| tool.name() == name)
        .unwrap()
}

/// What a host does with a call: execute, check the value against the output schema, render the
/// content and attach the presentation payload.
async fn host_call(tool: &ToolDefinition, args: Value) -> ToolResult {
    match tool.execute(Arc::new(args.clone()), ctx()).await {
        Ok(value) => {
            let violations = tool.output_validator().validate(&value, "value");
            assert!(violations.is_empty(), "{}: {violations:?}", tool.name());
            ToolResult {
                content: tool.render(&args, &value),
                is_error: false,
                meta: tool.presentation_meta(&args, &value),
            }
        }
        Err(error) => ToolResult {
            content: vec![ContentBlock::text(format!("Error: {}", error.message()))],
            is_error: true,
            meta: None,
        },
    }
}

fn text(result: &ToolResult) -> &str {
    assert_eq!(result.content.len(), 1);
    result.content[0].as_text().unwrap()
}

fn card<T: serde::Serialize>(view: &T) -> String {
    serde_json::to_string(view).unwrap()
}

// --- definitions -----------------------------------------------------------------------------

#[test]
fn the_pack_has_seven_tools_sorted_by_name_and_they_are_collected() {
    let names: Vec<String> = coding_tools()
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "edit_file",
            "glob",
            "grep",
            "list_dir",
            "read_file",
            "write_file"
        ]
    );
    let collected: Vec<String> = dsh_tools::collected_tools()
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(collected, names);
    assert_eq!(read_file::NAME, "read_file");
}

#[test]
fn every_tool_and_every_parameter_is_documented() {
    for tool in coding_tools().unwrap() {
        assert!(tool.description().len() > 40, "{}", tool.name());
        let parameters = tool.parameters();
        assert_eq!(parameters["type"], "object");
        let properties = parameters["properties"].as_object().unwrap();
        assert!(!properties.is_empty(), "{}", tool.name());
        for (name, schema) in properties {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{}.{name} has no description",
                tool.name()
            );
        }
    }
}

#[test]
fn parameters_are_the_model_visible_ones_and_required_when_not_optional() {
    let keys = |name: &str| -> Vec<String> {
        tool(name).parameters()["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(keys("read_file"), ["path", "offset", "limit"]);
    assert_eq!(keys("bash"), ["command", "description", "timeout_ms"]);
    assert_eq!(keys("grep"), ["pattern", "path", "glob", "max_matches"]);
    assert_eq!(tool("read_file").parameters()["required"], json!(["path"]));
    assert_eq!(
        tool("edit_file").parameters()["required"],
        json!(["path", "old_string", "new_string"])
    );
    assert_eq!(
        tool("bash").parameters()["required"],
        json!(["command", "description"])
    );
}

#[test]
fn annotations_concurrency_and_deadlines() {
    // Each with arguments of its own: a key that is not a parameter makes them invalid.
    for (name, args) in [
        ("read_file", json!({"path": "x"})),
        ("list_dir", json!({"path": "x"})),
        ("glob", json!({"pattern": "x"})),
        ("grep", json!({"pattern": "x"})),
    ] {
        let tool = tool(name);
        assert_eq!(tool.annotations().read_only_hint, Some(true), "{name}");
        assert!(tool.is_concurrency_safe(&args), "{name}");
    }
    for name in ["write_file", "edit_file", "bash"] {
        let tool = tool(name);
        assert_eq!(tool.annotations().destructive_hint, Some(true), "{name}");
        assert!(!tool.is_concurrency_safe(&json!({})), "{name}");
    }
    assert_eq!(tool("bash").annotations().open_world_hint, Some(true));
    assert_eq!(tool("bash").timeout_ms(), Some(120_000));
    assert_eq!(tool("read_file").timeout_ms(), None);
    // Invalid arguments are never concurrency-safe.
    assert!(!tool("read_file").is_concurrency_safe(&json!({"path": 1})));
}

#[tokio::test]
async fn invalid_arguments_are_rejected_before_the_body_runs() {
    let error = tool("read_file")
        .execute(Arc::new(json!({"offset": "3"})), ctx())
        .await
        .unwrap_err();
    assert!(
        error.message().starts_with("invalid arguments: "),
        "{error}"
    );
    assert!(
        error
            .message()
            .contains("missing required property \"path\""),
        "{error}"
    );
    assert_eq!(error.info().unwrap().code, "INVALID_ARGS");
}

#[test]
fn presenters_are_soft_on_arguments_that_do_not_validate() {
    assert_eq!(tool("bash").present_call(&json!({"command": 1})), None);
    let ok = ToolResult {
        content: vec![],
        is_error: false,
        meta: Some(json!({})),
    };
    assert_eq!(tool("read_file").present_result(&json!([]), &ok), None);
}
