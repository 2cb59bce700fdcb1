//! Result budgets in the pipeline (`docs/CONTRACTS.md`, "Result budgets"): what reaches the
//! model from a top-level result is cut to the tool's, the scope's or the registry's budget; the
//! canonical value, and every sub-call of a Code Mode program, are not.

use crate::support;

use std::sync::Arc;

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools::{ContentBlock, ToolDefinition};
use dsh_tools_runtime::tokens::count;
use dsh_tools_runtime::{RegistryConfig, ToolRegistry};
use serde_json::{Value, json};
use support::{call, call_as, counted_with};

/// A registry whose default budget is `budget`.
fn registry(budget: Option<usize>) -> ToolRegistry {
    ToolRegistry::with_config(RegistryConfig {
        max_result_tokens: budget,
        ..RegistryConfig::default()
    })
}

/// `n` numbered lines.
fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A tool named `name` returning `value`, built by `builder` tweaks.
fn returning(
    name: &str,
    value: Value,
    tweak: impl FnOnce(dsh_tools::ToolBuilder) -> dsh_tools::ToolBuilder,
) -> ToolDefinition {
    counted_with(
        tweak(ToolDefinition::builder(name).description("Returns a value.")),
        move |_| Ok(value.clone()),
    )
    .def
}

fn only_text(result: &ToolExecutionResult) -> &str {
    assert_eq!(result.content().len(), 1);
    result.content()[0].as_text().expect("a text block")
}

#[tokio::test]
async fn the_registry_default_cuts_text_and_keeps_the_value() {
    let registry = ToolRegistry::new();
    assert_eq!(registry.config().max_result_tokens, Some(25_000));
    let text = lines(40_000);
    registry
        .register(returning("big", json!(text), |b| b))
        .unwrap()
        .keep();
    let result = registry.execute(call("big")).await;
    let cut = only_text(&result);
    assert!(count(cut) <= 25_000, "{}", count(cut));
    assert!(cut.starts_with("line 1\n") && cut.ends_with("line 40000\n"));
    assert!(cut.contains("cut to fit 25000 tokens; ask for a narrower part"));
    assert_eq!(result.value(), Some(&json!(text)), "the value is not cut");
}

#[tokio::test]
async fn tool_then_scope_then_registry() {
    let registry = registry(Some(3_000));
    let text = lines(20_000);
    registry
        .register(returning("plain", json!(text), |b| b))
        .unwrap()
        .keep();
    registry
        .register(returning("own", json!(text), |b| b.max_result_tokens(200)))
        .unwrap()
        .keep();
    let agent = registry.new_scope();
    let tokens = |result: &ToolExecutionResult| count(only_text(result));

    let plain = registry.execute(call_as("plain", &agent)).await;
    assert!(
        (2_000..=3_000).contains(&tokens(&plain)),
        "{}",
        tokens(&plain)
    );

    let scoped = agent.set_max_result_tokens(Some(1_000)).unwrap();
    let child = agent.child();
    let plain = registry.execute(call_as("plain", &child)).await;
    assert!(
        (500..=1_000).contains(&tokens(&plain)),
        "the scope's budget reaches its children"
    );
    let own = registry.execute(call_as("own", &child)).await;
    assert!(tokens(&own) <= 200, "the tool's own budget wins");
    assert!(only_text(&own).contains("cut to fit 200 tokens"));

    // A child turning budgets off; the tool's own still applies.
    child.set_max_result_tokens(None).unwrap().keep();
    let plain = registry.execute(call_as("plain", &child)).await;
    assert_eq!(only_text(&plain), text);
    let own = registry.execute(call_as("own", &child)).await;
    assert!(tokens(&own) <= 200);

    scoped.dispose();
    let plain = registry.execute(call_as("plain", &agent)).await;
    assert!((2_000..=3_000).contains(&tokens(&plain)));

    let off = self::registry(None);
    off.register(returning("plain", json!(text), |b| b))
        .unwrap()
        .keep();
    assert_eq!(only_text(&off.execute(call("plain")).await), text);
}

#[tokio::test]
async fn a_result_exactly_at_the_budget_is_untouched() {
    let text = lines(3_000);
    let exact = count(&text);
    let at = registry(Some(exact));
    at.register(returning("t", json!(text), |b| b))
        .unwrap()
        .keep();
    assert_eq!(only_text(&at.execute(call("t")).await), text);

    let under = registry(Some(exact - 1));
    under
        .register(returning("t", json!(text), |b| b))
        .unwrap()
        .keep();
    let cut = under.execute(call("t")).await;
    assert_ne!(only_text(&cut), text);
    assert!(count(only_text(&cut)) < exact);
}

#[tokio::test]
async fn a_hundred_megabyte_result_is_cut_without_tokenizing_it() {
    let registry = registry(Some(2_000));
    let huge = "0123456789abcdef".repeat(100 << 16);
    assert_eq!(huge.len(), 100 << 20);
    registry
        .register(returning("dump", json!(huge), |b| {
            b.result_hint(|args| {
                format!(
                    "dump again with offset {}",
                    args["offset"].as_u64().unwrap_or(0) + 4096
                )
            })
        }))
        .unwrap()
        .keep();
    let input = ToolExecutionInput::new("c", "dump", json!({"offset": 0}));
    let result = registry.execute(input).await;
    let cut = only_text(&result);
    assert!(cut.len() < 64 << 10, "{}", cut.len());
    assert!(count(cut) <= 2_000);
    assert!(
        cut.contains("dump again with offset 4096"),
        "the tool's hint"
    );
    assert_eq!(
        result.value().and_then(Value::as_str).map(str::len),
        Some(100 << 20)
    );
}

#[tokio::test]
async fn a_huge_json_array_stays_json_with_a_count() {
    let registry = registry(Some(1_000));
    let rows: Vec<Value> = (0..100_000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    registry
        .register(returning("rows", Value::Array(rows), |b| b))
        .unwrap()
        .keep();
    let result = registry.execute(call("rows")).await;
    let text = only_text(&result);
    assert!(count(text) <= 1_000, "{}", count(text));
    let back: Value = serde_json::from_str(text).expect("still JSON");
    let kept = back.as_array().expect("still an array");
    assert_eq!(kept[0], json!({"id": 0, "name": "row 0"}));
    let last = kept
        .last()
        .and_then(Value::as_str)
        .expect("a count at the end");
    assert!(last.ends_with("more items of 100000 cut …]"), "{last}");
    assert_eq!(
        result.value().and_then(Value::as_array).map(Vec::len),
        Some(100_000)
    );
}

#[tokio::test]
async fn batches_are_cut_per_result_and_failures_too() {
    let registry = registry(Some(500));
    let text = lines(5_000);
    registry
        .register(returning("big", json!(text), |b| b))
        .unwrap()
        .keep();
    registry
        .register(returning("small", json!("ok"), |b| b))
        .unwrap()
        .keep();
    let failing = ToolDefinition::builder("fails")
        .description("Fails at length.")
        .execute(|_, _| async { Err(dsh_tools::ToolError::msg(lines(5_000))) })
        .build()
        .unwrap();
    registry.register(failing).unwrap().keep();
    let results = registry
        .execute_batch(vec![
            ToolExecutionInput::new("1", "big", json!({})),
            ToolExecutionInput::new("2", "small", json!({})),
            ToolExecutionInput::new("3", "fails", json!({})),
        ])
        .await;
    assert!(count(only_text(&results[0])) <= 500);
    assert_eq!(only_text(&results[1]), "ok");
    assert!(results[2].is_error());
    assert!(count(only_text(&results[2])) <= 500);
    assert!(only_text(&results[2]).starts_with("Error: line 1\n"));
}

#[tokio::test]
async fn observers_see_the_cut_result_and_images_pass() {
    let registry = registry(Some(100));
    let content_tool = ToolDefinition::builder("mixed")
        .description("Text and an unknown block.")
        .render(|_, _| {
            vec![
                ContentBlock::text("x".repeat(10_000)),
                support::unknown_block(json!({"type": "audio", "data": "y".repeat(10_000)})),
            ]
        })
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap();
    registry.register(content_tool).unwrap().keep();
    let seen = Arc::new(std::sync::Mutex::new(0));
    let sink = Arc::clone(&seen);
    registry
        .on_result(move |_, result| {
            *sink.lock().unwrap() = result.content()[0].as_text().map_or(0, str::len);
        })
        .keep();
    let result = registry.execute(call("mixed")).await;
    let text = result.content()[0].as_text().unwrap();
    assert!(text.len() < 10_000);
    assert_eq!(
        *seen.lock().unwrap(),
        text.len(),
        "the observers saw the cut content"
    );
    assert_eq!(result.content()[1].type_name(), "audio");
}

#[cfg(feature = "code-mode")]
mod code_mode {
    use std::sync::{Arc, Mutex};

    use dsh_tools::exec::ToolExecutionInput;
    use dsh_tools_runtime::code::{CodeMode, CodeRunRequest, CodeRunResult};
    use dsh_tools_runtime::tokens::count;
    use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
    use serde_json::{Value, json};

    use super::support::scripted_runtime::{ScriptedRuntime, find_binding};
    use super::{lines, returning};

    /// A program that calls `big`, and returns the length of what it got and the text itself.
    fn returns_big() -> Arc<ScriptedRuntime> {
        Arc::new(ScriptedRuntime(Arc::new(|request: CodeRunRequest| {
            let big = find_binding(&request, "big").expect("a binding");
            Box::pin(async move {
                let value = big(json!({})).await.expect("the sub-call succeeds");
                let text = value.as_str().unwrap_or_default().to_owned();
                Ok(CodeRunResult {
                    value: Some(json!(text)),
                    logs: vec![format!("got {} bytes", text.len())],
                    error: None,
                })
            })
        })))
    }

    #[tokio::test]
    async fn a_sub_call_value_is_whole_and_the_run_code_output_is_cut() {
        let registry = ToolRegistry::with_config(RegistryConfig {
            mode: PresentationMode::Code,
            max_result_tokens: Some(800),
            ..RegistryConfig::default()
        });
        CodeMode::new(returns_big()).install(&registry).unwrap();
        let text = lines(10_000);
        registry
            .register(returning("big", json!(text), |b| b.max_result_tokens(100)))
            .unwrap()
            .keep();
        let sub_content = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&sub_content);
        registry
            .on_result(move |exec, result| {
                if exec.parent.is_some() {
                    sink.lock()
                        .unwrap()
                        .push(result.content()[0].as_text().map_or(0, str::len));
                }
            })
            .keep();
        let input = ToolExecutionInput::new(
            "run",
            "run_code",
            json!({"code": "/* scripted */", "description": "Read the big text"}),
        );
        let result = registry.execute(input).await;
        let value = result.value().expect("a success");
        assert_eq!(value["logs"][0], json!(format!("got {} bytes", text.len())));
        assert_eq!(
            value["result"],
            Value::String(text.clone()),
            "the program's value is whole"
        );
        assert_eq!(
            *sub_content.lock().unwrap(),
            [text.len()],
            "a sub-call is not cut"
        );
        let shown = result.content()[0].as_text().unwrap();
        assert!(count(shown) <= 800, "{}", count(shown));
        assert!(shown.starts_with(&format!("got {} bytes\nline 1\n", text.len())));
        assert!(shown.ends_with("line 10000\n"));
    }
}

#[cfg(feature = "mcp")]
use crate::mcp_support;

#[cfg(feature = "mcp")]
#[tokio::test]
async fn imported_mcp_tools_are_budgeted_the_same_way() {
    use dsh_tools_runtime::mcp::McpImport;
    use mcp_support::scripted::{connect, tool};

    let registry = registry(Some(300));
    let (connection, _, _) =
        connect(&McpImport::new(&registry), "st", vec![vec![tool("echo")]]).await;
    let _connection = connection.unwrap();
    let long = "word ".repeat(20_000);
    let result = registry
        .execute(ToolExecutionInput::new(
            "c",
            "mcp__st__echo",
            json!({"text": long}),
        ))
        .await;
    let text = only_text(&result);
    assert!(count(text) <= 300, "{}", count(text));
    // The server's text was a JSON document (`{"text": …}`): it is still one.
    let back: Value = serde_json::from_str(text).expect("still JSON");
    assert!(back["text"].as_str().unwrap().contains("chars cut"));
    // The value (the server's whole result) is not cut.
    let whole = result.value().unwrap()["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(whole.len() > 100_000);
}

#[test]
fn setting_and_lifting_a_scope_budget_are_change_events() {
    let registry = ToolRegistry::new();
    let agent = registry.new_scope();
    let seen = Arc::new(std::sync::Mutex::new(0));
    let sink = Arc::clone(&seen);
    registry
        .on_change(move |_| *sink.lock().unwrap() += 1)
        .keep();
    let budget = agent.set_max_result_tokens(Some(10)).unwrap();
    assert_eq!(*seen.lock().unwrap(), 1);
    budget.dispose();
    assert_eq!(*seen.lock().unwrap(), 2);
    assert_eq!(registry.result_budget(Some(agent.id())), Some(25_000));
}
