//! Python Code Mode end to end: a registry with the Monty runtime mounted — the Python-flavoured
//! `run_code` tool and SDK section, and programs whose tool calls go through the full pipeline
//! (the sub-call scheduler, dispatch events, failures as `ToolCallError`), in process and in
//! worker processes.

#![cfg(feature = "python")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

use crate::python_support as support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::RUN_CODE_NAME;
use dsh_tools_runtime::code::monty::{MontyConfig, MontyRuntime};
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeEventSink};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};

/// `meet`: read-only, waits (up to 5 s) for a second call to arrive — only overlapping calls
/// finish at once. `note`: mutating, records its text.
fn registry(config: MontyConfig) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = ToolDefinition::builder("meet")
        .description("Waits for a second caller.")
        .parameters_json(json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}))
        .output_json(json!({"type": "string"}))
        .concurrency_safe(true)
        .execute(move |args, _| {
            let barrier = barrier.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(5), barrier.wait())
                    .await
                    .map_err(|_| dsh_tools::ToolError::msg("nobody came"))?;
                Ok(json!(format!("met {}", args["who"].as_str().unwrap_or("?"))))
            }
        })
        .build()
        .unwrap();
    let note = ToolDefinition::builder("note")
        .description("Records a note.")
        .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .execute(|args, _| async move {
            if args["text"] == "boom" {
                return Err(dsh_tools::ToolError::msg("refused: boom"));
            }
            Ok(json!({"saved": args["text"]}))
        })
        .build()
        .unwrap();
    registry.register(meet).unwrap().keep();
    registry.register(note).unwrap().keep();
    CodeMode::new(Arc::new(MontyRuntime::new(config).unwrap()))
        .install(&registry)
        .unwrap();
    registry
}

struct Collect(Mutex<Vec<Value>>);

impl CodeEventSink for Collect {
    fn append(&self, event: CodeDispatchEvent) {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::to_value(event).unwrap());
    }
}

async fn run_code(registry: &ToolRegistry, id: &str, code: &str) -> ToolExecutionResult {
    let mut input = ToolExecutionInput::new(
        id,
        RUN_CODE_NAME,
        json!({"code": code, "description": "Test"}),
    );
    input.agent = Some(registry.new_scope().id());
    tokio::time::timeout(Duration::from_secs(60), registry.execute(input))
        .await
        .expect("the run ended")
}

#[tokio::test]
async fn the_prompt_and_the_transport_speak_python() {
    let registry = registry(support::config());
    let surface = registry.prompt(None).unwrap();
    let sdk = surface
        .sections
        .iter()
        .find(|s| s.name == "tools:sdk")
        .unwrap();
    assert!(sdk.text.starts_with("## Writing code for run_code"));
    assert!(sdk.text.contains("```python\nfrom typing import "));
    assert!(sdk.text.contains("    async def meet(self, args: MeetArgs) -> str:\n        \"\"\"Waits for a second caller.\"\"\"\n"));
    assert_eq!(surface.tools.len(), 1);
    let wire = serde_json::to_value(&surface.tools[0]).unwrap();
    let description = wire["description"].as_str().unwrap();
    assert!(
        description.starts_with("Execute a Python program"),
        "{description}"
    );
    assert!(!description.contains("TypeScript"));
    assert_eq!(
        wire["parameters"]["properties"]["code"]["description"],
        "The program: the body of an async Python function."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_call_tools_through_the_pipeline() {
    for config in [support::config(), support::worker_config()] {
        let registry = registry(config);
        let log = Arc::new(Collect(Mutex::new(Vec::new())));
        registry.set_code_event_sink(log.clone());
        let program = "import asyncio\n\
            met = await asyncio.gather(tools.meet({'who': 'a'}), tools.meet({'who': 'b'}))\n\
            saved = await tools.note({'text': 'hello'})\n\
            try:\n    await tools['note']({'text': 'boom'})\nexcept ToolCallError as e:\n    print('refused:', e)\n\
            return {'met': met, 'saved': saved}";
        let result = run_code(&registry, "c1", program).await;
        assert!(!result.is_error(), "{result:?}");
        let value = result.value().unwrap();
        assert_eq!(
            value["result"],
            json!({"met": ["met a", "met b"], "saved": {"saved": "hello"}})
        );
        assert_eq!(value["logs"], json!(["refused: note: refused: boom"]));
        let events = log.0.lock().unwrap().clone();
        let settled: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "tool/code-dispatch")
            .collect();
        assert_eq!(settled.len(), 4, "{events:#?}");
        let ids: Vec<&str> = settled
            .iter()
            .map(|e| e["subCallId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["c1:code:1", "c1:code:2", "c1:code:3", "c1:code:4"]);
        assert_eq!(settled[3]["isError"], true);
        assert_eq!(settled[3]["arguments"], json!({"text": "boom"}));
    }
}

#[tokio::test]
async fn a_failed_run_reports_its_kind_and_the_logs_so_far() {
    let registry = registry(support::config());
    let result = run_code(
        &registry,
        "c2",
        "print('before')\nawait tools.note({'text': 'boom'})",
    )
    .await;
    assert!(result.is_error());
    let text = result.content()[0].as_text().unwrap();
    assert!(text.starts_with("Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 2"), "{text}");
    assert!(
        text.ends_with("ToolCallError: note: refused: boom\nCaptured output:\nbefore"),
        "{text}"
    );
    let result = run_code(&registry, "c3", "await tools.meat({'who': 'x'})").await;
    let text = result.content()[0].as_text().unwrap();
    assert_eq!(
        text,
        "Error: code run failed (exception): the program cannot run:\n  1:13: no tool named `meat` (hint: did you mean `meet`?)"
    );
}

/// A Code Mode registry on Monty whose `archive_issue` is deferred (out of the SDK until found).
fn deferring_registry(config: MontyConfig) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let tool = |name: &str, description: &str| {
        let owned = name.to_owned();
        ToolDefinition::builder(name)
            .description(description)
            .parameters_json(json!({"type": "object", "properties": {"id": {"type": "string"}}}))
            .output_json(json!({"type": "string"}))
            .execute(move |_, _| {
                let name = owned.clone();
                async move { Ok(Value::String(name)) }
            })
            .build()
            .unwrap()
    };
    registry
        .register(tool("read_file", "Read a text file."))
        .unwrap()
        .keep();
    let archive = tool("archive_issue", "Archive an issue of a repository.");
    registry
        .register(archive.with_loading(dsh_tools::Loading::Deferred))
        .unwrap()
        .keep();
    CodeMode::new(Arc::new(MontyRuntime::new(config).unwrap()))
        .install(&registry)
        .unwrap();
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_programs_search_describe_and_call_deferred_tools() {
    for config in [support::config(), support::worker_config()] {
        search_describe_and_call(deferring_registry(config)).await;
    }
}

async fn search_describe_and_call(registry: ToolRegistry) {
    let scope = registry.new_scope();
    let section = |name: &str| {
        registry
            .prompt(Some(scope.id()))
            .unwrap()
            .sections
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.text)
    };
    let sdk = section("tools:sdk").unwrap();
    assert!(sdk.contains("read_file") && !sdk.contains("archive_issue"));
    let search = section("tools:search").expect("a tools:search section for Python");
    assert!(search.contains("tools[\"$search\"]"), "{search}");
    let program = "hits = await tools['$search']('archive an issue')\n\
        limited = await tools['$search']({'query': 'issue', 'limit': 1})\n\
        described = await tools['$describe']('archive_issue')\n\
        missing = await tools['$describe']('no_such_tool')\n\
        archived = await tools.archive_issue({'id': '7'})\n\
        return {'first': hits[0]['name'], 'signature': hits[0]['signature'], 'limited': len(limited),\n\
                'described': described['signature'], 'missing': missing, 'archived': archived}";
    let mut input = ToolExecutionInput::new(
        "c1",
        RUN_CODE_NAME,
        json!({"code": program, "description": "Find and archive"}),
    );
    input.agent = Some(scope.id());
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    let value = &result.value().unwrap()["result"];
    assert_eq!(value["first"], "archive_issue", "{value}");
    // The signatures are Python: the tool's argument class and its method.
    let signature = value["signature"].as_str().unwrap();
    assert!(
        signature.contains("class ArchiveIssueArgs(TypedDict):"),
        "{signature}"
    );
    assert!(
        signature.contains("async def archive_issue(self, args: ArchiveIssueArgs) -> str:"),
        "{signature}"
    );
    assert_eq!(value["described"], value["signature"]);
    assert_eq!(value["limited"], 1);
    assert_eq!(value["missing"], Value::Null);
    assert_eq!(value["archived"], "archive_issue");
    // Found: declared in the next prompt's SDK.
    assert!(section("tools:sdk").unwrap().contains("archive_issue"));
}
