//! Deferred loading and tool search (`docs/CONTRACTS.md`, "Tool search and deferred loading"):
//! which tools the model is shown, the reserved `tool_search` tool, the order found tools join
//! in, Code Mode's `tools.$search` / `tools.$describe`, the providers' own mechanisms, and
//! hostile input (10,000 tools, a 1 MB query, an empty one).
#![cfg(feature = "code-mode")]

use crate::support;

use std::sync::Arc;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{Loading, ToolDefinition};
use dsh_tools_runtime::RegistryError;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::TOOL_SEARCH_TEXT;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::dialect::DialectOptions;
use dsh_tools_runtime::provider::{Provider, request_tools};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, TOOL_SEARCH_NAME, ToolRegistry};
use serde_json::{Value, json};
use support::{call_as, call_with, code, keep, wire};

/// A tool with a description and one string parameter, returning its own name.
fn described(name: &str, description: &str) -> ToolDefinition {
    let owned = name.to_owned();
    ToolDefinition::builder(name)
        .description(description)
        .parameters_json(json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The item's id."}},
        }))
        .execute(move |_, _| {
            let name = owned.clone();
            async move { Ok(Value::String(name)) }
        })
        .build()
        .unwrap()
}

fn deferred(name: &str, description: &str) -> ToolDefinition {
    described(name, description).with_loading(Loading::Deferred)
}

fn wire_names(registry: &ToolRegistry, scope: Option<dsh_tools::exec::ScopeId>) -> Vec<String> {
    registry
        .prompt(scope)
        .unwrap()
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// The workspace of these tests: two loaded tools and three deferred ones.
fn workspace() -> ToolRegistry {
    let registry = ToolRegistry::new();
    keep(&registry, described("read_file", "Read a text file."));
    keep(&registry, described("write_file", "Write a text file."));
    keep(
        &registry,
        deferred(
            "create_calendar_event",
            "Create an event in the user's calendar.",
        ),
    );
    keep_mail_and_issues(&registry);
    registry
}

/// Registers the deferred `archive_issue` and `send_email`.
fn keep_mail_and_issues(registry: &ToolRegistry) {
    let archive = deferred("archive_issue", "Archive an issue of a repository.");
    keep(registry, archive);
    keep(
        registry,
        deferred("send_email", "Send an email message to someone."),
    );
}

async fn search(registry: &ToolRegistry, input: ToolExecutionInput) -> Value {
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{}", wire(&result));
    result.value().cloned().unwrap()
}

#[tokio::test]
async fn deferred_tools_leave_the_wire_list_and_stay_executable() {
    let registry = workspace();
    assert_eq!(
        wire_names(&registry, None),
        ["read_file", "write_file", TOOL_SEARCH_NAME]
    );
    let names: Vec<String> = registry
        .deferred(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(
        names,
        ["create_calendar_event", "archive_issue", "send_email"]
    );
    // Still callable by name (the model may know it from an earlier turn).
    let result = registry.execute(call_with("send_email", json!({}))).await;
    assert_eq!(result.value(), Some(&json!("send_email")));
    // Every visible tool is still there for the host.
    assert_eq!(registry.visible(None).len(), 5);
    let rendered = registry
        .schemas_in(
            None,
            dsh_tools_runtime::dialect::Dialect::Anthropic,
            &DialectOptions::default(),
        )
        .unwrap();
    let names: Vec<&str> = rendered
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "write_file", TOOL_SEARCH_NAME]);
}

#[tokio::test]
async fn tool_search_returns_full_definitions_and_found_tools_join_at_the_end() {
    let registry = workspace();
    let scope = registry.new_scope();
    let before = wire_names(&registry, Some(scope.id()));

    let mut input = call_as(TOOL_SEARCH_NAME, &scope);
    input.arguments = json!({"query": "schedule a meeting on my calendar", "limit": 1});
    let found = search(&registry, input).await;
    assert_eq!(found["tools"][0]["name"], "create_calendar_event");
    assert_eq!(
        found["tools"][0]["description"],
        "Create an event in the user's calendar."
    );
    assert_eq!(
        found["tools"][0]["parameters"]["properties"]["id"]["type"],
        "string"
    );
    assert_eq!(found["tools"].as_array().unwrap().len(), 1);

    let mut input = call_as(TOOL_SEARCH_NAME, &scope);
    input.arguments = json!({"query": "email someone", "limit": 1});
    search(&registry, input).await;

    let after = wire_names(&registry, Some(scope.id()));
    assert_eq!(
        after[..before.len()],
        before[..],
        "the prefix stays the same"
    );
    assert_eq!(
        after[before.len()..],
        ["create_calendar_event", "send_email"],
        "in the order found"
    );
    assert_eq!(
        registry.deferred(Some(scope.id()))[0].name(),
        "archive_issue"
    );
    // Another scope found nothing; the global view neither.
    assert_eq!(wire_names(&registry, None), before);
    assert_eq!(
        wire_names(&registry, Some(registry.new_scope().id())),
        before
    );
}

#[tokio::test]
async fn a_search_without_match_says_so_and_bad_queries_are_refused() {
    let registry = workspace();
    let mut input = call_with(TOOL_SEARCH_NAME, json!({"query": "zzqx vvbn"}));
    input.agent = None;
    let nothing = search(&registry, input).await;
    assert_eq!(nothing["tools"], json!([]));
    assert!(
        nothing["note"]
            .as_str()
            .unwrap()
            .contains("try other words")
    );

    let empty = registry
        .execute(call_with(TOOL_SEARCH_NAME, json!({"query": ""})))
        .await;
    assert_eq!(
        code(&empty).as_deref(),
        Some("INVALID_ARGS"),
        "{}",
        wire(&empty)
    );
    let too_many = registry
        .execute(call_with(
            TOOL_SEARCH_NAME,
            json!({"query": "x", "limit": 21}),
        ))
        .await;
    assert_eq!(code(&too_many).as_deref(), Some("INVALID_ARGS"));

    // A 1 MB query is answered (its first 64 distinct words rank).
    let huge = "calendar event ".repeat(70_000);
    let answer = search(
        &registry,
        call_with(TOOL_SEARCH_NAME, json!({"query": huge})),
    )
    .await;
    assert_eq!(answer["tools"][0]["name"], "create_calendar_event");
}

#[tokio::test]
async fn without_deferred_tools_there_is_no_tool_search() {
    let registry = ToolRegistry::new();
    keep(&registry, described("read_file", "Read a text file."));
    assert_eq!(wire_names(&registry, None), ["read_file"]);
    let result = registry
        .execute(call_with(TOOL_SEARCH_NAME, json!({"query": "x"})))
        .await;
    assert_eq!(code(&result).as_deref(), Some("UNKNOWN_TOOL"));
    // The name is reserved all the same.
    let taken = registry
        .register(described(TOOL_SEARCH_NAME, "Mine."))
        .unwrap_err();
    assert!(
        matches!(taken, RegistryError::ReservedName { .. }),
        "{taken}"
    );
}

#[test]
fn the_threshold_defers_beyond_n_tools_but_never_pinned_ones() {
    let registry = ToolRegistry::new();
    for name in ["a", "b", "c", "d"] {
        keep(&registry, described(name, "A tool."));
    }
    keep(
        &registry,
        described("pinned", "Always there.").with_loading(Loading::Pinned),
    );
    keep(&registry, deferred("never_first", "Deferred by itself."));
    let all = ["a", "b", "c", "d", "pinned", TOOL_SEARCH_NAME];
    assert_eq!(wire_names(&registry, None), all);
    registry.defer_beyond(Some(2));
    assert_eq!(
        wire_names(&registry, None),
        ["a", "b", "pinned", TOOL_SEARCH_NAME]
    );
    let waiting: Vec<String> = registry
        .deferred(None)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(waiting, ["c", "d", "never_first"]);
    registry.defer_beyond(None);
    assert_eq!(wire_names(&registry, None), all);
}

#[tokio::test]
async fn ten_thousand_deferred_tools_are_searched_and_one_is_found() {
    let registry = ToolRegistry::new();
    keep(&registry, described("read_file", "Read a text file."));
    for i in 0..10_000 {
        keep(
            &registry,
            deferred(
                &format!("tool_{i}"),
                &format!("Operate on widget number {i}."),
            ),
        );
    }
    keep(
        &registry,
        deferred("launch_rocket", "Launch the rocket into orbit."),
    );
    assert_eq!(wire_names(&registry, None), ["read_file", TOOL_SEARCH_NAME]);
    let found = search(
        &registry,
        call_with(TOOL_SEARCH_NAME, json!({"query": "rocket launch"})),
    )
    .await;
    assert_eq!(found["tools"][0]["name"], "launch_rocket");
    assert_eq!(
        wire_names(&registry, None).last().map(String::as_str),
        Some("launch_rocket")
    );
}

#[test]
fn a_disposed_scope_forgets_what_it_found() {
    let registry = workspace();
    let scope = registry.new_scope();
    let id = scope.id();
    assert_eq!(
        registry.discover(Some(id), ["archive_issue", "read_file", "nope"]),
        ["archive_issue"]
    );
    assert_eq!(registry.found(Some(id))[0].name(), "archive_issue");
    assert!(
        registry.discover(Some(id), ["archive_issue"]).is_empty(),
        "found once"
    );
    drop(scope);
    assert!(registry.found(Some(id)).is_empty());
}

#[test]
fn providers_get_their_own_tool_search_where_they_have_one() {
    let registry = workspace();
    let shown = registry.prompt(None).unwrap().tools;
    let deferred = registry.deferred(None);
    let options = DialectOptions::default();

    let anthropic = request_tools(Provider::Anthropic, &shown, &deferred, &options).unwrap();
    assert_eq!(anthropic.len(), 6);
    assert_eq!(anthropic[0]["name"], "read_file");
    assert!(anthropic[0].get("defer_loading").is_none());
    assert_eq!(
        anthropic[2],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    for tool in &anthropic[3..] {
        assert_eq!(tool["defer_loading"], true);
        assert!(tool["input_schema"].is_object());
    }

    let responses = request_tools(Provider::OpenAiResponses, &shown, &deferred, &options).unwrap();
    assert_eq!(responses[2], json!({"type": "tool_search"}));
    assert_eq!(responses[3]["type"], "function");
    assert_eq!(responses[3]["name"], "create_calendar_event");
    assert_eq!(responses[3]["defer_loading"], true);
    assert!(
        responses[3].get("function").is_none(),
        "the Responses shape is flat"
    );

    for provider in [Provider::OpenAiChat, Provider::Gemini] {
        let tools = request_tools(provider, &shown, &deferred, &options).unwrap();
        assert_eq!(
            tools.len(),
            3,
            "{provider}: our own tool_search, no deferred tool"
        );
        let text = serde_json::to_string(&tools).unwrap();
        assert!(text.contains(TOOL_SEARCH_NAME) && !text.contains("defer_loading"));
    }
}

fn code_registry() -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let runtime = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
    CodeMode::new(Arc::new(runtime)).install(&registry).unwrap();
    keep(&registry, described("read_file", "Read a text file."));
    keep_mail_and_issues(&registry);
    registry
}

fn section(registry: &ToolRegistry, scope: dsh_tools::exec::ScopeId, name: &str) -> Option<String> {
    registry
        .prompt(Some(scope))
        .unwrap()
        .sections
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.text)
}

#[tokio::test]
async fn programs_search_describe_and_call_deferred_tools() {
    let registry = code_registry();
    let scope = registry.new_scope();
    let sdk = section(&registry, scope.id(), "tools:sdk").unwrap();
    assert!(sdk.contains("read_file") && !sdk.contains("archive_issue"));
    assert_eq!(
        section(&registry, scope.id(), "tools:search").as_deref(),
        Some(TOOL_SEARCH_TEXT)
    );
    // tool_search is on the wire beside run_code, and named as callable directly.
    assert_eq!(
        wire_names(&registry, Some(scope.id())),
        [TOOL_SEARCH_NAME, "run_code"]
    );

    let program = r#"
        const hits = await tools.$search("archive an issue");
        const limited = await tools.$search({ query: "email", limit: 1 });
        const described = await tools.$describe("send_email");
        const missing = await tools.$describe("no_such_tool");
        const archived = await tools.archive_issue({ id: "7" });
        return { first: hits[0].name, signature: hits[0].signature, limited: limited.length,
                 described: described.name, missing, archived };
    "#;
    let mut input = call_as("run_code", &scope);
    input.arguments = json!({"code": program, "description": "Find and archive"});
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{}", wire(&result));
    let value = &result.value().unwrap()["result"];
    assert_eq!(value["first"], "archive_issue");
    assert!(
        value["signature"]
            .as_str()
            .unwrap()
            .contains("archive_issue: {"),
        "{value}"
    );
    assert_eq!(value["limited"], 1);
    assert_eq!(value["described"], "send_email");
    assert_eq!(value["missing"], Value::Null);
    assert_eq!(value["archived"], "archive_issue");

    // Found: declared in the next prompt's SDK.
    let sdk = section(&registry, scope.id(), "tools:sdk").unwrap();
    assert!(
        sdk.contains("archive_issue") && sdk.contains("send_email"),
        "{sdk}"
    );
}

#[tokio::test]
async fn search_helpers_check_their_arguments() {
    let registry = code_registry();
    let scope = registry.new_scope();
    let program = r#"
        const errors = [];
        for (const bad of [42, { query: 1 }, { query: "x", limit: 0 }]) {
            try { await tools.$search(bad); } catch (e) { errors.push(String(e.message)); }
        }
        try { await tools.$describe({}); } catch (e) { errors.push(String(e.message)); }
        return errors;
    "#;
    let mut input = call_as("run_code", &scope);
    input.arguments = json!({"code": program, "description": "Bad searches"});
    let result = registry.execute(input).await;
    let errors = result.value().unwrap()["result"].clone();
    let errors: Vec<String> = serde_json::from_value(errors).unwrap();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors[0].contains("expected a query string"));
    assert!(errors[2].contains("limit must be an integer from 1 to 20"));
    assert!(errors[3].contains("expected a tool name"));
}

/// What deferral saves on the real corpus (`tests/fixtures/mcp-tools`, 353 tools of 26 MCP
/// servers, registered as MCP imports are: raw parameters): the wire list with every tool
/// deferred is `tool_search` alone, and after three searches it holds what they found.
#[cfg(feature = "tokens")]
#[tokio::test]
async fn deferring_a_real_tool_set_shrinks_the_wire_list_to_what_is_found() {
    use dsh_tools_runtime::code::cost::native_definition;
    use dsh_tools_runtime::tokens::count;

    const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-tools");
    let registry = ToolRegistry::new();
    let mut files: Vec<_> = std::fs::read_dir(CORPUS)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let server = path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('-', "_");
        let entries: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for entry in entries {
            let def =
                ToolDefinition::builder(format!("{server}__{}", entry["name"].as_str().unwrap()))
                    .description(entry["description"].as_str().unwrap_or_default())
                    .raw_parameters(entry["parameters"].clone())
                    .execute(|_, _| async { Ok(Value::Null) })
                    .build()
                    .unwrap();
            keep(&registry, def);
        }
    }
    let wire_tokens = |registry: &ToolRegistry| -> usize {
        registry
            .prompt(None)
            .unwrap()
            .tools
            .iter()
            .map(|t| count(&native_definition(&t.name, &t.description, &t.parameters)))
            .sum()
    };
    let all = wire_tokens(&registry);
    registry.defer_beyond(Some(0));
    let deferred = wire_tokens(&registry);
    for query in [
        "take a screenshot of the page",
        "create a pull request",
        "send a slack message",
    ] {
        let input = call_with(TOOL_SEARCH_NAME, json!({"query": query, "limit": 3}));
        search(&registry, input).await;
    }
    let after = wire_tokens(&registry);
    println!("wire tokens: all {all}, deferred {deferred}, after 3 searches of 3: {after}");
    assert_eq!(registry.found(None).len(), 9);
    assert!(deferred * 100 < all, "deferred {deferred} vs all {all}");
    assert!(after < all / 10, "after {after} vs all {all}");
}

/// A turn in which the provider ran its own tool search: its server-side blocks are not calls,
/// and the deferred tool the model then calls runs here.
#[tokio::test]
async fn a_turn_after_the_provider_s_own_search_runs_the_deferred_tool() {
    use dsh_tools_runtime::provider::{ProviderTurn, parse_calls};
    let registry = workspace();
    let anthropic = json!({"content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
         "input": {"query": "archive an issue"}},
        {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "archive_issue"}]}},
        {"type": "tool_use", "id": "toolu_1", "name": "archive_issue", "input": {"id": "7"}}
    ]});
    let calls = parse_calls(Provider::Anthropic, &anthropic).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "archive_issue");
    let outcome = ProviderTurn::new(&registry, Provider::Anthropic)
        .run_response(&anthropic)
        .await
        .unwrap();
    assert_eq!(outcome.results[0].value(), Some(&json!("archive_issue")));

    let responses = json!({"output": [
        {"type": "tool_search_call", "id": "ts_1", "status": "completed"},
        {"type": "tool_search_output", "id": "tso_1", "tools": []},
        {"type": "function_call", "call_id": "call_1", "name": "send_email", "arguments": "{}"}
    ]});
    let calls = parse_calls(Provider::OpenAiResponses, &responses).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "send_email");
}
