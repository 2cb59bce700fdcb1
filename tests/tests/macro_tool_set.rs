//! `#[tool_set]`: `#[tool]` methods of one instance, registered together through `ToolSet`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use dsh_tools::exec::StateMap;
use dsh_tools::{
    ToolAnnotations, ToolCallView, ToolDefinition, ToolError, ToolRunContext, ToolSet,
    collected_tools, tool, tool_set,
};
use serde_json::{Value, json};

/// A workspace whose tools share a call counter.
#[derive(Debug, Default)]
pub struct Workspace {
    calls: AtomicU32,
}

/// The host's greeting (host state).
#[derive(Debug)]
pub struct Greeting(String);

#[tool_set]
impl Workspace {
    /// Search the workspace for a pattern.
    #[tool(concurrency_safe = true, read_only, present_call = grep_card)]
    async fn grep(
        &self,
        /// The regular expression.
        pattern: String,
        /// At most this many matches.
        limit: Option<u32>,
    ) -> Result<Vec<String>, String> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if pattern.is_empty() {
            return Err("empty pattern".into());
        }
        let limit = limit.unwrap_or(2) as usize;
        Ok((0..limit)
            .map(|i| format!("{pattern}#{i} (call {n})"))
            .collect())
    }

    /// Greet with host state and the run context.
    #[dsh_tools::tool(
        name = "workspace.greet",
        timeout_ms = 10,
        callers = "native",
        max_result_tokens = 64
    )]
    async fn greet_user(
        &self,
        name: String,
        ctx: ToolRunContext,
        greeting: dsh_tools::State<Greeting>,
    ) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let Greeting(text) = &*greeting;
        format!("{text}, {name} ({})", ctx.call_id())
    }

    /// Compiled out, with its arguments struct.
    #[tool]
    #[cfg(any())]
    async fn hidden(&self, _x: u8) {}

    /// Not a tool: left alone.
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

fn grep_card(args: &workspace_tools::GrepArgs) -> Option<ToolCallView> {
    Some(ToolCallView::generic(format!("grep {}", args.pattern)))
}

async fn run_in(
    tool: &ToolDefinition,
    args: Value,
    ctx: ToolRunContext,
) -> Result<Value, ToolError> {
    tool.execute(Arc::new(args), ctx).await
}

fn tools(ws: &Arc<Workspace>) -> Vec<ToolDefinition> {
    Arc::clone(ws).tool_definitions().unwrap()
}

#[test]
fn methods_become_definitions_in_declaration_order() {
    let ws = Arc::new(Workspace::default());
    let tools = tools(&ws);
    let names: Vec<&str> = tools.iter().map(ToolDefinition::name).collect();
    assert_eq!(names, ["grep", "workspace.greet"]);
    let greeting: Vec<&str> = tools[1]
        .needed_states()
        .iter()
        .map(|s| s.type_name())
        .collect();
    assert_eq!(greeting, ["macro_tool_set::Greeting"]);
    assert!(tools[0].needed_states().is_empty());
    let grep = &tools[0];
    assert_eq!(grep.description(), "Search the workspace for a pattern.");
    assert_eq!(
        grep.parameters().to_string(),
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"pattern":{"type":"string","description":"The regular expression."},"#,
            r#""limit":{"oneOf":[{"type":"integer","minimum":0},{"type":"null"}],"description":"At most this many matches."}},"#,
            r#""required":["pattern"]}"#
        )
    );
    assert_eq!(
        grep.output_schema(),
        &json!({"type": "array", "items": {"type": "string"}})
    );
    assert!(grep.is_concurrency_safe(&json!({"pattern": "x"})));
    assert_eq!(
        grep.annotations(),
        ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        }
    );
    assert_eq!(
        grep.present_call(&json!({"pattern": "fn"}))
            .unwrap()
            .title(),
        "grep fn"
    );
    let greet = &tools[1];
    assert_eq!(greet.timeout_ms(), Some(10));
    assert_eq!(greet.callers(), dsh_tools::Callers::Native);
    assert_eq!(greet.max_result_tokens(), Some(64));
    assert_eq!(grep.callers(), dsh_tools::Callers::Both);
    assert_eq!(greet.parameters()["required"], json!(["name"]));
}

#[tokio::test]
async fn every_definition_shares_the_instance() {
    let ws = Arc::new(Workspace::default());
    let tools = tools(&ws);
    let value = run_in(
        &tools[0],
        json!({"pattern": "a", "limit": 1}),
        ToolRunContext::detached("c1"),
    )
    .await
    .unwrap();
    assert_eq!(value, json!(["a#0 (call 1)"]));
    let error = run_in(
        &tools[0],
        json!({"pattern": ""}),
        ToolRunContext::detached("c2"),
    )
    .await
    .unwrap_err();
    assert_eq!(error.message(), "empty pattern");

    let mut states = StateMap::default();
    states.insert(Arc::new(Greeting("Hello".into())));
    let ctx = ToolRunContext::detached("c3").with_states(Arc::new(states));
    let value = run_in(&tools[1], json!({"name": "Ada"}), ctx)
        .await
        .unwrap();
    assert_eq!(value, json!("Hello, Ada (c3)"));
    assert_eq!(ws.calls(), 3, "all three calls reached the same instance");

    let error = run_in(
        &tools[1],
        json!({"name": "Ada"}),
        ToolRunContext::detached("c4"),
    )
    .await
    .unwrap_err();
    assert!(error.message().contains("Greeting"), "{}", error.message());
}

#[tokio::test]
async fn methods_stay_callable() {
    let ws = Workspace::default();
    assert_eq!(
        ws.grep("x".into(), Some(1)).await.unwrap(),
        ["x#0 (call 1)"]
    );
    assert_eq!(ws.calls(), 1);
}

#[test]
fn argument_structs_live_in_the_companion_module() {
    let args = workspace_tools::GrepArgs {
        pattern: "p".into(),
        limit: None,
    };
    assert_eq!(
        serde_json::to_value(args).unwrap(),
        json!({"pattern": "p", "limit": null})
    );
    let greet = workspace_tools::GreetUserArgs { name: "n".into() };
    assert_eq!(greet.name, "n");
}

#[test]
fn tool_sets_are_not_collected() {
    assert!(collected_tools().unwrap().is_empty());
}

/// Tools defined on a unit struct.
pub struct Clock;

#[tool_set]
impl Clock {
    /// The current tick.
    #[tool]
    async fn tick(&self) -> u64 {
        42
    }
}

#[tokio::test]
async fn a_set_of_one_tool_without_parameters() {
    let tools = Arc::new(Clock).tool_definitions().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0].parameters(),
        &json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
    let value = run_in(&tools[0], json!({}), ToolRunContext::detached("c"))
        .await
        .unwrap();
    assert_eq!(value, json!(42));
}
