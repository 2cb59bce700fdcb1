use dsh_tools::ToolDefinition;
use serde_json::json;

use super::*;

fn tool(name: &str, parameters: serde_json::Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("A tool.")
        .parameters_json(parameters)
        .execute(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap()
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        tool(
            "read_file",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        tool(
            "search",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "options": {
                        "type": "object",
                        "properties": {"depth": {"type": "integer"}},
                        "additionalProperties": false
                    }
                },
                "required": ["query"]
            }),
        ),
    ]
}

fn findings(program: &str) -> Vec<String> {
    check(program, &tools())
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn unknown_tools_are_found_with_a_suggestion() {
    assert_eq!(
        findings(
            "const a = 1;\nawait tools.raed_file({ path: 'x' });\nawait tools[\"serch\"]({ query: 'q' });\nawait tools.nothing_like_it({});"
        ),
        [
            "2:7 tools.raed_file is not a tool of this run; did you mean tools.read_file?",
            "3:7 tools.serch is not a tool of this run; did you mean tools.search?",
            "4:7 tools.nothing_like_it is not a tool of this run",
        ]
    );
}

#[test]
fn constant_arguments_are_checked_against_the_schema() {
    assert_eq!(
        findings("await tools.read_file({ path: 42, limit: 0 });"),
        [
            "1:31 tools.read_file: \"path\" must be a string",
            "1:42 tools.read_file: \"limit\" must be at least 1",
        ]
    );
    // A schema the walk does not check keyword by keyword is validated whole.
    let either = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
    let odd = tool(
        "odd",
        json!({"type": "object", "properties": {"a": either}}),
    );
    let found: Vec<String> = check("await tools.odd({ a: true });", &[odd])
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "1:22 tools.odd: \"a\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"a\" must be a string"
        ]
    );
    assert!(findings("await tools.read_file({ path: 'a', limit: 2 } as const);").is_empty());
}

#[test]
fn the_constant_parts_of_computed_arguments_are_checked() {
    let program = "const p = String(1);\nawait tools.read_file({ pth: p, limit: 'ten' });\nawait tools.search({ query: p, options: { depht: 2 } });";
    assert_eq!(
        findings(program),
        [
            "2:23 tools.read_file: missing required property \"path\"",
            "2:25 tools.read_file: \"pth\" is not a parameter of read_file; did you mean \"path\"?",
            "2:40 tools.read_file: \"limit\" must be an integer",
            "3:43 tools.search: \"options.depht\" is not a property of \"options\"; did you mean \"depth\"?",
        ]
    );
}

#[test]
fn what_is_not_certain_is_left_to_run_time() {
    // Dynamic names, spreads, a program binding `tools` itself, syntax errors.
    assert!(findings("const n = 'nope'; await tools[n]({});").is_empty());
    assert!(findings("const o = {}; await tools.read_file({ ...o });").is_empty());
    assert!(findings("const tools = { x: async () => 1 }; await tools.x();").is_empty());
    assert!(findings("function f(tools) { return tools.y(); }").is_empty());
    assert!(findings("await tools.nope({ ").is_empty());
    assert!(findings(&"[".repeat(300)).is_empty());
}

#[test]
fn a_native_only_tool_is_found_with_why() {
    let ask = ToolDefinition::builder("ask_user")
        .description("Ask the user.")
        .callers(dsh_tools::Callers::Native)
        .execute(|_, _| async { Ok(json!(null)) })
        .build()
        .unwrap();
    let mut tools = tools();
    tools.push(ask);
    let found: Vec<String> = check("await tools.ask_user({});", &tools)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "1:7 tools.ask_user is callable by the model directly, not from code (callers = \"native\")"
        ]
    );
}

#[test]
fn a_pending_call_handled_by_the_program_is_no_finding() {
    for program in [
        "const p = tools.read_file({ path: 'a' });\nconst q = tools.search({ query: 'b' });\nconst [a, b] = await Promise.all([p, q]);\nreturn a.length + b.length;",
        "let r = tools.read_file({ path: 'a' });\nr = await r;\nreturn r.length;",
        "const r = tools.read_file({ path: 'a' });\nconst text = await r;\nreturn r.then((t) => t.length);",
        "return tools.read_file({ path: 'a' }).then((t) => t.length);",
        "return (await tools.read_file({ path: 'a' })).length;",
        "const all = await Promise.all([tools.read_file({ path: 'a' })]);\nreturn all.length;",
    ] {
        assert_eq!(findings(program), Vec::<String>::new(), "{program}");
    }
}

#[test]
fn a_pending_call_used_as_its_result_is_found() {
    assert_eq!(
        findings(
            "const n = tools.read_file({ path: 'a' })[0];\nlet t = tools[name]({});\nreturn t.x + t.y;"
        ),
        [
            "1:11 `tools.read_file(...)` is not awaited: without `await` it is a pending call, not the tool's result (hint: write `(await tools.read_file(...))[…]`)",
            "3:8 `t` holds `tools[…](...)` not awaited: without `await` it is a pending call, not the tool's result (hint: write `let t = await tools[…](...)`)",
        ]
    );
}
