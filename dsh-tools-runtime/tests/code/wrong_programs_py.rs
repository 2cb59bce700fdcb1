//! Wrong Python programs, as models write them: each gets the exact text the model reads back
//! from `run_code`, and no tool runs when the mistake was knowable before running (the tools
//! count their calls).

#![cfg(feature = "python")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{ToolDefinition, ToolError, tool};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::RUN_CODE_NAME;
use dsh_tools_runtime::code::monty::{MontyConfig, MontyRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};

/// Calls of `search_notes` (a `#[tool]` tool: its schema is what the macro derives).
static NOTE_SEARCHES: AtomicUsize = AtomicUsize::new(0);

/// Search the notes.
#[tool]
async fn search_notes(
    /// Words to look for.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
) -> Vec<String> {
    NOTE_SEARCHES.fetch_add(1, Ordering::SeqCst);
    vec![format!("{query} ({})", limit.unwrap_or(10))]
}

/// The tools' bodies run so far, by tool.
#[derive(Default)]
struct Calls {
    read: AtomicUsize,
    edit: AtomicUsize,
}

/// `read_file` (`a.txt` holds `alpha`; anything else is missing) and `edit_file` (replaces
/// `old` by `new`; it asks for approval, and nobody can answer), both closed; `search_notes`
/// from `#[tool]`.
fn registry(calls: &Arc<Calls>) -> ToolRegistry {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let counted = Arc::clone(calls);
    let read = ToolDefinition::builder("read_file")
        .description("Read a text file.")
        .parameters_json(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["path"],
            "additionalProperties": false
        }))
        .output_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
        .concurrency_safe(true)
        .execute(move |args, _| {
            counted.read.fetch_add(1, Ordering::SeqCst);
            async move {
                match args["path"].as_str() {
                    Some("a.txt") => Ok(json!({"text": "alpha"})),
                    path => Err(ToolError::msg(format!(
                        "no such file: {}",
                        path.unwrap_or("?")
                    ))),
                }
            }
        })
        .build()
        .unwrap();
    let counted = Arc::clone(calls);
    let edit = ToolDefinition::builder("edit_file")
        .description("Replace text in a file.")
        .parameters_json(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"}
            },
            "required": ["path", "old", "new"],
            "additionalProperties": false
        }))
        .requires_approval()
        .execute(move |_, _| {
            counted.edit.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!("edited")) }
        })
        .build()
        .unwrap();
    registry.register(read).unwrap().keep();
    registry.register(edit).unwrap().keep();
    registry
        .register(search_notes::definition().unwrap())
        .unwrap()
        .keep();
    let config = MontyConfig {
        cpu_budget: Duration::from_millis(500),
        wall_clock: Duration::from_secs(10),
        ..MontyConfig::default()
    };
    CodeMode::new(Arc::new(MontyRuntime::new(config).unwrap()))
        .install(&registry)
        .unwrap();
    registry
}

/// What the model reads back: the error text, or the logs and the result.
async fn run(registry: &ToolRegistry, code: &str) -> String {
    let mut input = ToolExecutionInput::new(
        "c1",
        RUN_CODE_NAME,
        json!({"code": code, "description": "Test"}),
    );
    input.agent = Some(registry.new_scope().id());
    let result = tokio::time::timeout(Duration::from_secs(60), registry.execute(input))
        .await
        .expect("the run ended");
    if result.is_error() {
        return result.content()[0].as_text().unwrap().to_owned();
    }
    let value = result.value().unwrap();
    let logs: Vec<&str> = value["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    format!(
        "logs: {logs:?}; result: {}",
        value.get("result").unwrap_or(&Value::Null)
    )
}

/// One wrong program: the text the model gets, and how many calls reached `read_file`,
/// `edit_file` and `search_notes`.
struct Case {
    name: &'static str,
    program: &'static str,
    text: &'static str,
    calls: [usize; 3],
}

const CASES: &[Case] = &[
    Case {
        name: "a misspelt key of a closed schema",
        program: "r = await tools.read_file({\"pth\": \"a.txt\"})\nreturn r[\"text\"]",
        text: "Error: code run failed (exception): the program cannot run:\n  1:27: tools.read_file: missing required property \"path\"\n  1:28: tools.read_file: \"pth\" is not a parameter of read_file; did you mean \"path\"?",
        calls: [0, 0, 0],
    },
    Case {
        name: "a missing required key",
        program: "await tools.edit_file({\"path\": \"a.txt\", \"old\": \"alpha\"})",
        text: "Error: code run failed (exception): the program cannot run:\n  1:23: tools.edit_file: missing required property \"new\"",
        calls: [0, 0, 0],
    },
    Case {
        name: "a wrong type",
        program: "r = await tools.read_file({\"path\": 42})\nprint(r)",
        text: "Error: code run failed (exception): the program cannot run:\n  1:36: tools.read_file: \"path\" must be a string",
        calls: [0, 0, 0],
    },
    Case {
        name: "a bound violated",
        program: "r = await tools.read_file({\"path\": \"a.txt\", \"limit\": 0})",
        text: "Error: code run failed (exception): the program cannot run:\n  1:54: tools.read_file: \"limit\" must be at least 1",
        calls: [0, 0, 0],
    },
    Case {
        name: "a good edit before a bad one: nothing is applied",
        program: "await tools.edit_file({\"path\": \"a.txt\", \"old\": \"alpha\", \"new\": \"beta\"})\n\
                  await tools.edit_file({\"path\": \"a.txt\", \"old\": \"beta\", \"new\": 3})",
        text: "Error: code run failed (exception): the program cannot run:\n  2:63: tools.edit_file: \"new\" must be a string",
        calls: [0, 0, 0],
    },
    Case {
        name: "a nested value inside gather",
        program: "import asyncio\n\
                  a, b = await asyncio.gather(\n    tools.read_file({\"path\": \"a.txt\"}),\n    tools.read_file({\"path\": [\"b.txt\"]}),\n)",
        text: "Error: code run failed (exception): the program cannot run:\n  4:30: tools.read_file: \"path\" must be a string",
        calls: [0, 0, 0],
    },
    Case {
        name: "keyword arguments",
        program: "r = await tools.read_file(path=\"a.txt\", limit=5)",
        text: "Error: code run failed (exception): the program cannot run:\n  1:26: tools.read_file takes one dict of arguments, not keyword arguments (hint: write `await tools.read_file({\"path\": …, \"limit\": …})`)",
        calls: [0, 0, 0],
    },
    Case {
        name: "an unknown tool",
        program: "hits = await tools.search_files({\"pattern\": \"TODO\"})",
        text: "Error: code run failed (exception): the program cannot run:\n  1:20: no tool named `search_files` (hint: did you mean `search_notes`?)",
        calls: [0, 0, 0],
    },
    Case {
        name: "an unknown tool named at run time",
        program: "name = \"search\" + \"_files\"\nhits = await tools[name]({\"pattern\": \"TODO\"})",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 2, in <module>\n    hits = await tools[name]({\"pattern\": \"TODO\"})\n                 ~~~~~~~~~~~\nKeyError: tools has no function named 'search_files'; did you mean tools[\"search_notes\"]?",
        calls: [0, 0, 0],
    },
    Case {
        name: "a computed wrong type, refused when the call runs",
        program: "path = 40 + 2\nr = await tools.read_file({\"path\": path})",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 2, in <module>\n    r = await tools.read_file({\"path\": path})\n        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nToolCallError: read_file: invalid arguments: \"path\" must be a string",
        calls: [0, 0, 0],
    },
    Case {
        name: "an uncaught tool failure",
        program: "r = await tools.read_file({\"path\": \"b.txt\"})\nreturn r[\"text\"]",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 1, in <module>\n    r = await tools.read_file({\"path\": \"b.txt\"})\n        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nToolCallError: read_file: no such file: b.txt",
        calls: [1, 0, 0],
    },
    Case {
        name: "a caught tool failure names the tool",
        program: "try:\n    await tools.read_file({\"path\": \"b.txt\"})\nexcept ToolCallError as e:\n    print(\"failed:\", e)",
        text: "logs: [\"failed: read_file: no such file: b.txt\"]; result: null",
        calls: [1, 0, 0],
    },
    // Monty 0.0.23 re-raises an exception no handler matched, or one raised inside an `except`
    // body, with a fresh frame at the re-raise instruction: the line shown is the handler body's
    // last one (here 4 and 7; the raising lines are 2 and 5). Pinned so a fix shows up here.
    Case {
        name: "except ToolCallError does not catch the program's own error",
        program: "try:\n    raise RuntimeError(\"my own\")\nexcept ToolCallError as e:\n    print(\"tool failed:\", e)",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 4, in <module>\n    print(\"tool failed:\", e)\nRuntimeError: my own",
        calls: [0, 0, 0],
    },
    Case {
        name: "a forgotten await, the result indexed",
        program: "r = tools.read_file({\"path\": \"a.txt\"})\nreturn r[\"text\"]",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 2, in <module>\n    return r[\"text\"]\n           ~~~~~~~~~\nTypeError: 'coroutine' object is not subscriptable (hint: a tool call, or a call of an async function, is used without `await`: without it the value is a pending call, not its result; write `r = await tools.name({...})`)",
        // A call never awaited never starts.
        calls: [0, 0, 0],
    },
    Case {
        name: "a forgotten await on the call itself",
        program: "return tools.read_file({\"path\": \"a.txt\"})[\"text\"]",
        text: "Error: code run failed (exception): the program cannot run:\n  1:8: `tools.read_file(...)` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `(await tools.read_file(...))[…]`)",
        calls: [0, 0, 0],
    },
    Case {
        name: "a forgotten await, the result dropped",
        program: "tools.edit_file({\"path\": \"a.txt\", \"old\": \"alpha\", \"new\": \"beta\"})\nprint(\"done\")",
        text: "Error: code run failed (exception): the program cannot run:\n  1:1: `tools.edit_file(...)` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `await tools.edit_file(...)`)",
        calls: [0, 0, 0],
    },
    Case {
        name: "an error inside an except body",
        program: "try:\n    await tools.read_file({\"path\": \"b.txt\"})\nexcept ToolCallError as e:\n    print(\"failed\")\n    detail = e.args[5]\n    print(\"unreached\")\n    x = 1",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 7, in <module>\n    x = 1\nIndexError: tuple index out of range\nCaptured output:\nfailed",
        calls: [1, 0, 0],
    },
    // `#[tool]` parameters are an open object today: the unknown key is ignored and the tool
    // runs. (When unknown keys of `#[tool]` tools are refused, this becomes a static finding
    // and no call.)
    Case {
        name: "an unknown key of a #[tool] tool",
        program: "hits = await tools.search_notes({\"query\": \"todo\", \"max\": 3})\nreturn hits",
        text: "Error: code run failed (exception): the program cannot run:\n  1:51: tools.search_notes: \"max\" is not a parameter of search_notes; its parameters are \"query\", \"limit\"",
        calls: [0, 0, 0],
    },
    Case {
        name: "approval refused (nobody to ask)",
        program: "r = await tools.read_file({\"path\": \"a.txt\"})\nawait tools.edit_file({\"path\": \"a.txt\", \"old\": \"alpha\", \"new\": \"beta\"})",
        text: "Error: code run failed (exception): Traceback (most recent call last):\n  File \"program.py\", line 2, in <module>\n    await tools.edit_file({\"path\": \"a.txt\", \"old\": \"alpha\", \"new\": \"beta\"})\n    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\nToolCallError: edit_file: tool \"edit_file\" requires approval, but no approval channel is available",
        calls: [1, 0, 0],
    },
];

/// The Python SDK marks the tool that asks and promises the refusal the approval case gets.
#[test]
fn the_sdk_says_which_tools_ask_and_how_a_refusal_reads() {
    use dsh_tools_runtime::code::sdk::sdk_tool_from;
    use dsh_tools_runtime::code::sdk_py::render_tools_sdk_py;
    let calls = Arc::new(Calls::default());
    let registry = registry(&calls);
    let tools: Vec<_> = ["edit_file", "read_file"]
        .iter()
        .map(|name| sdk_tool_from(&registry.get(name, None).unwrap()))
        .collect();
    let sdk = render_tools_sdk_py(&tools);
    assert!(sdk.contains("A `(may ask for approval)` tool waits for a person; with no one to ask it raises `ToolCallError` (`<tool name>: tool \"<tool name>\" requires approval, but no approval channel is available`)."), "{sdk}");
    assert!(
        sdk.contains("Replace text in a file. (may ask for approval)"),
        "{sdk}"
    );
    assert!(!sdk.contains("Read a text file. (may"), "{sdk}");
    let refusal = CASES
        .iter()
        .find(|c| c.name.starts_with("approval"))
        .unwrap();
    assert!(refusal.text.ends_with(
        &"ToolCallError: <tool name>: tool \"<tool name>\" requires approval, but no approval channel is available"
            .replace("<tool name>", "edit_file")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_wrong_program_gets_its_exact_text_and_runs_nothing_knowable() {
    let mut failed = Vec::new();
    for case in CASES {
        let calls = Arc::new(Calls::default());
        let registry = registry(&calls);
        let before = NOTE_SEARCHES.load(Ordering::SeqCst);
        let text = run(&registry, case.program).await;
        let counted = [
            calls.read.load(Ordering::SeqCst),
            calls.edit.load(Ordering::SeqCst),
            NOTE_SEARCHES.load(Ordering::SeqCst) - before,
        ];
        if text != case.text || counted != case.calls {
            failed.push(format!(
                "{}:\n  text: {text:?}\n  calls: {counted:?} (expected {:?})",
                case.name, case.calls
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(CASES.len() >= 15);
}
