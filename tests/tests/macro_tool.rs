//! `#[tool]` on free functions: the generated schemas, the companion module, the body wiring,
//! every option, the presenters and the `inventory` registration.

use std::sync::Arc;

use dsh_tools::collect::check_registrations;
use dsh_tools::exec::{StateMap, ToolExecution, ToolExecutionResult};
use dsh_tools::present::ToolKind;
use dsh_tools::{
    CollectError, ContentBlock, ErrorCode, State, ToolAnnotations, ToolCallView, ToolDefinition,
    ToolError, ToolRegistration, ToolResult, ToolResultView, ToolRunContext, ToolSchema,
    collected_tools, tool,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What `read_file` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToolSchema)]
pub struct FileText {
    /// The file's path.
    pub path: String,
    /// The text read.
    pub text: String,
}

/// The host's workspace root (host state).
#[derive(Debug)]
pub struct Workspace {
    root: String,
}

/// Read a UTF-8 file.
#[tool(timeout_ms = 5000, concurrency_safe = true)]
pub async fn read_file(
    /// Absolute file path.
    path: String,
    /// First line (1-based).
    offset: Option<u64>,
    ctx: ToolRunContext,
    ws: State<Workspace>,
) -> Result<FileText, std::io::Error> {
    if path.contains("missing") {
        let message = format!("{path} does not exist");
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, message));
    }
    Ok(FileText {
        path: format!("{}/{path}", ws.root),
        text: format!("line {} via {}", offset.unwrap_or(1), ctx.call_id()),
    })
}

/// Add two numbers.
#[tool]
async fn add(a: u32, b: u32) -> u64 {
    u64::from(a) + u64::from(b)
}

/// Ignored: the `description` option wins.
#[tool(
    name = "grep.search",
    description = "Search the workspace.",
    concurrency_safe = grep_is_parallel,
    present_call = grep_call,
    present_result = grep_result,
    render = grep_render,
    presentation_meta = grep_meta,
    finalize_content = grep_finalize,
    read_only,
    destructive = false,
    idempotent = true,
    open_world = false
)]
async fn grep(
    pattern: String,
    #[allow(unused_variables, reason = "read by the classifier")] parallel: bool,
) -> Vec<String> {
    vec![format!("a.rs: {pattern}"), format!("b.rs: {pattern}")]
}

fn grep_is_parallel(args: &grep::Args) -> bool {
    args.parallel
}

fn grep_call(args: &grep::Args) -> Option<ToolCallView> {
    Some(ToolCallView::generic(format!("Searching {}", args.pattern)).with_kind(ToolKind::Search))
}

fn grep_result(args: &grep::Args, result: &ToolResult) -> Option<ToolResultView> {
    let title = format!("{} for {}", result.content.len(), args.pattern);
    Some(ToolResultView::generic_content(result.content.clone()).with_title(title))
}

fn grep_render(args: &grep::Args, out: &[String]) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!(
        "{} hits for {}",
        out.len(),
        args.pattern
    ))]
}

fn grep_meta(args: &grep::Args, out: &[String]) -> Value {
    json!({"pattern": args.pattern, "hits": out.len()})
}

fn grep_finalize(_exec: &ToolExecution, result: &ToolExecutionResult) -> Option<Vec<ContentBlock>> {
    result
        .is_error()
        .then(|| vec![ContentBlock::text("grep failed")])
}

/// Check the host is alive.
#[tool]
async fn ping() {}

/// Show a message as content blocks.
#[tool]
async fn show(text: String) -> Vec<ContentBlock> {
    vec![ContentBlock::text(text), ContentBlock::text("done")]
}

/// Show a message, or fail.
#[tool]
async fn try_show(text: String) -> Result<Vec<ContentBlock>, String> {
    if text.is_empty() {
        return Err("nothing to show".into());
    }
    Ok(vec![ContentBlock::text(text)])
}

/// Finish the turn after answering.
#[tool]
async fn finish(
    /// The kind of answer.
    r#type: String,
    ctx: &ToolRunContext,
) -> String {
    ctx.conclude_turn();
    format!("{type} from {}", ctx.call_id(), type = r#type)
}

/// Compiled out: neither the function nor its companion module exist.
#[tool]
#[cfg(any())]
async fn gone() {}

/// Crunch numbers (from programs only).
#[tool(callers = "code", max_result_tokens = 500, result_hint = crunch_hint)]
async fn crunch(n: u32) -> u32 {
    n
}

/// Archive an issue (found on demand through tool search).
#[tool(deferred)]
async fn archive_issue(id: u64) -> u64 {
    id
}

/// Say who is on call (always loaded).
#[tool(pinned)]
async fn on_call() -> String {
    "ada".to_owned()
}

fn crunch_hint(args: &crunch::Args) -> String {
    format!("crunch again with n > {}", args.n)
}

async fn run_in(
    tool: &ToolDefinition,
    args: Value,
    ctx: ToolRunContext,
) -> Result<Value, ToolError> {
    tool.execute(Arc::new(args), ctx).await
}

async fn run(tool: &ToolDefinition, args: Value) -> Result<Value, ToolError> {
    run_in(tool, args, ToolRunContext::detached("c1")).await
}

fn workspace_states() -> Arc<StateMap> {
    let mut states = StateMap::default();
    states.insert(Arc::new(Workspace { root: "/ws".into() }));
    Arc::new(states)
}

#[test]
fn schema_comes_from_the_signature_and_docs() {
    let tool = read_file::definition().unwrap();
    assert_eq!(tool.name(), "read_file");
    assert_eq!(read_file::NAME, "read_file");
    assert_eq!(tool.description(), "Read a UTF-8 file.");
    // `State<Workspace>` is recorded: a registry without one refuses the prompt.
    let states: Vec<&str> = tool.needed_states().iter().map(|s| s.type_name()).collect();
    assert_eq!(states, ["macro_tool::Workspace"]);
    // The model is not shown the width of `u64` (its ±(2^53 − 1)); validation still checks it.
    let u64_schema = json!({"type": "integer", "minimum": 0});
    let expected = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": {"type": "string", "description": "Absolute file path."},
            "offset": {"oneOf": [u64_schema, {"type": "null"}], "description": "First line (1-based)."}
        },
        "required": ["path"]
    });
    assert_eq!(tool.parameters().to_string(), expected.to_string());
    assert_eq!(
        tool.output_schema().to_string(),
        concat!(
            r#"{"type":"object","description":"What `read_file` returns.","additionalProperties":true,"#,
            r#""properties":{"path":{"type":"string","description":"The file's path."},"#,
            r#""text":{"type":"string","description":"The text read."}},"required":["path","text"]}"#
        )
    );
    assert_eq!(tool.timeout_ms(), Some(5000));
    assert!(tool.is_concurrency_safe(&json!({"path": "a"})));
    assert!(
        !tool.is_concurrency_safe(&json!({"path": 1})),
        "invalid arguments are exclusive"
    );
    assert_eq!(tool.annotations(), ToolAnnotations::default());
    assert_eq!(tool.has_presenters(), (false, false));
}

#[test]
fn the_args_struct_is_the_schema_root() {
    assert_eq!(
        <read_file::Args as dsh_tools::schema::ToolSchema>::SCHEMA
            .to_shown_parameters_schema()
            .unwrap(),
        *read_file::definition().unwrap().parameters()
    );
    let args = read_file::Args {
        path: "a.txt".into(),
        offset: Some(2),
    };
    assert_eq!(
        serde_json::to_value(&args).unwrap(),
        json!({"path": "a.txt", "offset": 2})
    );
    assert_eq!(add::NAME, "add");
    assert_eq!(
        add::definition().unwrap().parameters().to_string(),
        concat!(
            r#"{"type":"object","additionalProperties":false,"properties":{"a":{"type":"integer","minimum":0},"#,
            r#""b":{"type":"integer","minimum":0}},"required":["a","b"]}"#
        )
    );
}

#[tokio::test]
async fn the_body_runs_with_arguments_context_and_state() {
    let tool = read_file::definition().unwrap();
    let ctx = ToolRunContext::detached("c1").with_states(workspace_states());
    let value = run_in(&tool, json!({"path": "a.txt", "offset": 3}), ctx)
        .await
        .unwrap();
    assert_eq!(value, json!({"path": "/ws/a.txt", "text": "line 3 via c1"}));
}

#[tokio::test]
async fn an_err_becomes_the_tool_error_message() {
    let tool = read_file::definition().unwrap();
    let ctx = ToolRunContext::detached("c1").with_states(workspace_states());
    let error = run_in(&tool, json!({"path": "missing.txt"}), ctx)
        .await
        .unwrap_err();
    assert_eq!(error.message(), "missing.txt does not exist");
    assert!(error.info().is_none());
}

#[tokio::test]
async fn missing_state_is_a_tool_error() {
    let tool = read_file::definition().unwrap();
    let error = run(&tool, json!({"path": "a.txt"})).await.unwrap_err();
    assert_eq!(
        error.message(),
        "tool state `macro_tool::Workspace` was not provided by the host"
    );
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_body() {
    let tool = read_file::definition().unwrap();
    let error = run(&tool, json!({"offset": -1})).await.unwrap_err();
    assert_eq!(error.info().unwrap().code, ErrorCode::InvalidArgs.as_str());
}

#[tokio::test]
async fn integral_floats_fit_integer_parameters() {
    let tool = add::definition().unwrap();
    assert_eq!(
        run(&tool, json!({"a": 1.0, "b": 2})).await.unwrap(),
        json!(3)
    );
    assert!(run(&tool, json!({"a": 1.5, "b": 2})).await.is_err());
}

#[tokio::test]
async fn the_function_stays_callable() {
    let state = State(Arc::new(Workspace { root: "/r".into() }));
    let out = read_file("x".into(), None, ToolRunContext::detached("d"), state)
        .await
        .unwrap();
    assert_eq!(out.text, "line 1 via d");
    assert_eq!(add(2, 3).await, 5);
}

#[tokio::test]
async fn options_and_presenters_are_wired() {
    let tool = grep::definition().unwrap();
    assert_eq!(tool.name(), "grep.search");
    assert_eq!(grep::NAME, "grep.search");
    assert_eq!(tool.description(), "Search the workspace.");
    assert_eq!(tool.timeout_ms(), None);
    assert!(tool.is_concurrency_safe(&json!({"pattern": "x", "parallel": true})));
    assert!(!tool.is_concurrency_safe(&json!({"pattern": "x", "parallel": false})));
    assert_eq!(
        tool.annotations(),
        ToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        }
    );
    assert_eq!(tool.has_presenters(), (true, true));
    let args = json!({"pattern": "fn", "parallel": false});
    let call = tool.present_call(&args).unwrap();
    assert_eq!(call.title(), "Searching fn");
    assert!(
        tool.present_call(&json!({"pattern": 1})).is_none(),
        "invalid args: no card"
    );

    let value = run(&tool, args.clone()).await.unwrap();
    assert_eq!(value, json!(["a.rs: fn", "b.rs: fn"]));
    let content = tool.render(&args, &value);
    assert_eq!(content, vec![ContentBlock::text("2 hits for fn")]);
    assert_eq!(
        tool.presentation_meta(&args, &value),
        Some(json!({"pattern": "fn", "hits": 2}))
    );
    let result = ToolResult {
        content,
        is_error: false,
        meta: None,
    };
    let view = tool.present_result(&args, &result).unwrap();
    assert_eq!(view.title(), Some("1 for fn"));

    let exec = ToolExecution::detached("c1", "grep.search", args.clone());
    let failed = ToolExecutionResult::failure(ToolError::msg("boom"));
    assert_eq!(
        tool.finalize_content(&exec, &failed),
        Some(vec![ContentBlock::text("grep failed")])
    );
}

#[test]
fn render_and_meta_fall_back_when_values_do_not_fit() {
    let tool = grep::definition().unwrap();
    let args = json!({"pattern": "fn", "parallel": false});
    let odd = json!({"not": "a list"});
    assert_eq!(
        tool.render(&args, &odd),
        dsh_tools::definition::default_render(&args, &odd)
    );
    assert_eq!(tool.presentation_meta(&args, &odd), Some(Value::Null));
}

#[tokio::test]
async fn unit_tools_return_null() {
    let tool = ping::definition().unwrap();
    assert_eq!(tool.output_schema(), &json!({"type": "null"}));
    assert_eq!(
        tool.parameters(),
        &json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
    assert_eq!(run(&tool, json!({})).await.unwrap(), Value::Null);
}

#[tokio::test]
async fn content_tools_render_their_blocks() {
    let tool = show::definition().unwrap();
    assert_eq!(tool.output_schema(), &json!({"type": "array", "items": {}}));
    let args = json!({"text": "hi"});
    let value = run(&tool, args.clone()).await.unwrap();
    assert_eq!(
        tool.render(&args, &value),
        vec![ContentBlock::text("hi"), ContentBlock::text("done")]
    );
    let fallible = try_show::definition().unwrap();
    assert_eq!(
        fallible.output_schema(),
        &json!({"type": "array", "items": {}})
    );
    let error = run(&fallible, json!({"text": ""})).await.unwrap_err();
    assert_eq!(error.message(), "nothing to show");
}

#[tokio::test]
async fn raw_identifiers_and_borrowed_contexts() {
    let tool = finish::definition().unwrap();
    assert_eq!(
        tool.parameters(),
        &json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"type": {"type": "string", "description": "The kind of answer."}},
            "required": ["type"]
        })
    );
    let value = run(&tool, json!({"type": "final"})).await.unwrap();
    assert_eq!(value, json!("final from c1"));
}

#[test]
fn every_tool_is_collected_sorted_by_name() {
    let names: Vec<String> = collected_tools()
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "archive_issue",
            "crunch",
            "finish",
            "grep.search",
            "on_call",
            "open_run",
            "ping",
            "read_file",
            "show",
            "show_commit",
            "strict_run",
            "try_show"
        ]
    );
}

#[test]
fn duplicate_names_report_both_declarations() {
    let registered: Vec<&ToolRegistration> =
        dsh_tools::__private::inventory::iter::<ToolRegistration>
            .into_iter()
            .filter(|r| r.name == "add")
            .collect();
    assert_eq!(registered.len(), 1);
    let real = registered[0];
    assert_eq!(real.module_path, "macro_tool::add");
    assert!(real.file.ends_with("macro_tool.rs"), "{}", real.file);
    let copy = ToolRegistration {
        name: "add",
        module_path: "other::add",
        file: "other.rs",
        line: 7,
        build: add::definition,
    };
    match check_registrations(vec![real, &copy]).unwrap_err() {
        CollectError::Duplicate {
            name,
            first,
            second,
        } => {
            assert_eq!(name, "add");
            assert!(
                first.starts_with("macro_tool::add (") && first.contains("macro_tool.rs:"),
                "{first}"
            );
            assert_eq!(second, "other::add (other.rs:7)");
        }
        other => panic!("expected a duplicate, got {other}"),
    }
}

// ----- #[schema(with = "path")] on a parameter -----

/// A commit hash; it has no `ToolSchema` of its own.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sha(pub String);

/// Forty lower-case hexadecimal digits.
pub const fn sha_schema() -> dsh_tools::schema::SchemaSpec {
    <String as dsh_tools::schema::ToolSchema>::SCHEMA.with_checks(dsh_tools::schema::Checks {
        pattern: Some("^[0-9a-f]{40}$"),
        ..dsh_tools::schema::Checks::NONE
    })
}

/// Show a commit.
#[tool]
pub async fn show_commit(
    /// The commit.
    #[schema(with = "sha_schema")]
    sha: Sha,
) -> String {
    sha.0
}

#[tokio::test]
async fn a_parameter_schema_can_come_from_a_const_fn() {
    let tool = show_commit::definition().expect("builds");
    assert_eq!(
        tool.parameters()["properties"]["sha"],
        json!({"type": "string", "description": "The commit.", "pattern": "^[0-9a-f]{40}$"})
    );
    let sha = "0123456789abcdef0123456789abcdef01234567";
    tool.validate_args(&json!({ "sha": sha })).expect("valid");
    assert_eq!(
        tool.validate_args(&json!({"sha": "HEAD"}))
            .unwrap_err()
            .violations,
        vec!["\"sha\" must match the pattern \"^[0-9a-f]{40}$\""]
    );
    let ctx = ToolRunContext::detached("c1");
    let out = tool
        .execute(std::sync::Arc::new(json!({ "sha": sha })), ctx)
        .await
        .expect("runs");
    assert_eq!(out, json!(sha));
}

// ----- the trait route: `#[tool]` implements `dsh_tools::tool::Tool` -----

/// A generic host function over the trait: what the macro's `Tool` struct must satisfy.
fn describe<T: dsh_tools::tool::Tool>(tool: &T) -> (String, String, dsh_tools::tool::ToolOptions) {
    (
        T::NAME.to_owned(),
        tool.description().into_owned(),
        tool.options(),
    )
}

#[tokio::test]
async fn the_macro_implements_the_tool_trait() {
    use dsh_tools::tool::Tool as _;

    let (name, description, options) = describe(&read_file::Tool);
    assert_eq!(name, "read_file");
    assert_eq!(description, "Read a UTF-8 file.");
    assert_eq!(options.timeout_ms, Some(5000));
    assert!(options.concurrency_safe);
    let (name, description, options) = describe(&grep::Tool);
    assert_eq!(
        (name.as_str(), description.as_str()),
        ("grep.search", "Search the workspace.")
    );
    // The classifier decides per call: the trait's options say exclusive.
    assert!(!options.concurrency_safe);
    assert_eq!(options.annotations.read_only_hint, Some(true));
    assert_eq!(options.annotations.idempotent_hint, Some(true));

    // `call` runs the function with typed arguments, host state and the context.
    let ctx = ToolRunContext::detached("c7").with_states(workspace_states());
    let args = read_file::Args {
        path: "a.txt".into(),
        offset: Some(3),
    };
    let out: FileText = read_file::Tool.call(args, ctx).await.expect("runs");
    assert_eq!(out.text, "line 3 via c7");
    // The function's error, and a missing state, are the trait's `ToolError`s.
    let missing = read_file::Args {
        path: "missing.txt".into(),
        offset: None,
    };
    let ctx = ToolRunContext::detached("c8").with_states(workspace_states());
    let err = read_file::Tool.call(missing, ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "missing.txt does not exist");
    let no_state = read_file::Args {
        path: "a.txt".into(),
        offset: None,
    };
    let err = read_file::Tool
        .call(no_state, ToolRunContext::detached("c9"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("was not provided by the host"),
        "{err}"
    );
    let sum: u64 = add::Tool
        .call(add::Args { a: 2, b: 3 }, ToolRunContext::detached("c"))
        .await
        .expect("adds");
    assert_eq!(sum, 5);
    ping::Tool
        .call(ping::Args {}, ToolRunContext::detached("c"))
        .await
        .expect("pings");
    let blocks: Value = show::Tool
        .call(
            show::Args { text: "hi".into() },
            ToolRunContext::detached("c"),
        )
        .await
        .expect("shows");
    assert_eq!(
        blocks,
        json!([{"type": "text", "text": "hi"}, {"type": "text", "text": "done"}])
    );

    // `into_definition` is the companion's `definition()`, presenters included.
    let by_trait = grep::Tool.into_definition().expect("builds");
    let by_macro = grep::definition().expect("builds");
    assert_eq!(by_trait.name(), by_macro.name());
    assert_eq!(by_trait.parameters(), by_macro.parameters());
    assert_eq!(by_trait.output_schema(), by_macro.output_schema());
    let args = json!({"pattern": "fn", "parallel": true});
    assert!(by_trait.is_concurrency_safe(&args));
    assert!(by_trait.present_call(&args).is_some());
}

#[test]
fn callers_and_the_result_budget_reach_the_definition_and_the_trait() {
    let tool = crunch::definition().unwrap();
    assert_eq!(tool.callers(), dsh_tools::Callers::Code);
    assert_eq!(tool.max_result_tokens(), Some(500));
    assert_eq!(
        tool.result_hint(&json!({"n": 7})).as_deref(),
        Some("crunch again with n > 7")
    );
    assert_eq!(tool.result_hint(&json!({"n": "x"})).as_deref(), Some(""));
    let options = dsh_tools::tool::Tool::options(&crunch::Tool);
    assert_eq!(options.callers, dsh_tools::Callers::Code);
    assert_eq!(options.max_result_tokens, Some(500));
    let plain = read_file::definition().unwrap();
    assert_eq!(plain.callers(), dsh_tools::Callers::Both);
    assert_eq!(plain.max_result_tokens(), None);
}

#[test]
fn deferred_and_pinned_reach_the_definition_and_the_trait() {
    use dsh_tools::Loading;
    assert_eq!(
        archive_issue::definition().unwrap().loading(),
        Loading::Deferred
    );
    assert_eq!(on_call::definition().unwrap().loading(), Loading::Pinned);
    assert_eq!(read_file::definition().unwrap().loading(), Loading::Auto);
    let options = dsh_tools::tool::Tool::options(&archive_issue::Tool);
    assert_eq!(options.loading, Loading::Deferred);
    let by_trait = dsh_tools::tool::Tool::into_definition(on_call::Tool).unwrap();
    assert_eq!(by_trait.loading(), Loading::Pinned);
}

static STRICT_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static OPEN_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Run a command.
#[tool]
async fn strict_run(
    /// The command line.
    command: String,
    /// How long to wait.
    timeout_ms: Option<u32>,
) -> String {
    STRICT_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let _declared_only = timeout_ms;
    command
}

/// Run a command; unknown keys are accepted and ignored.
#[tool(allow_unknown_args)]
async fn open_run(
    /// The command line.
    command: String,
) -> String {
    OPEN_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    command
}

#[tokio::test]
async fn unknown_argument_keys_are_refused_unless_the_tool_allows_them() {
    use std::sync::atomic::Ordering::SeqCst;
    let strict = strict_run::definition().unwrap();
    assert_eq!(strict.parameters()["additionalProperties"], json!(false));
    let error = run(
        &strict,
        json!({"command": "ls", "cwd": "src", "timeoutMs": 5}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments: \"cwd\" is not a parameter of strict_run; its parameters are \
         \"command\", \"timeout_ms\"; \"timeoutMs\" is not a parameter of strict_run; did you \
         mean \"timeout_ms\"?"
    );
    assert_eq!(STRICT_RUNS.load(SeqCst), 0, "the body did not run");
    assert_eq!(
        run(&strict, json!({"command": "ls"})).await.unwrap(),
        json!("ls")
    );
    assert_eq!(STRICT_RUNS.load(SeqCst), 1);

    let open = open_run::definition().unwrap();
    assert_eq!(open.parameters().get("additionalProperties"), None);
    assert_eq!(
        run(&open, json!({"command": "ls", "cwd": "src"}))
            .await
            .unwrap(),
        json!("ls")
    );
    assert_eq!(OPEN_RUNS.load(SeqCst), 1);
}
