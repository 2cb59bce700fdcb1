//! The SDK assembled from per-tool fragments (`sdk_declarations`, `render_tools_sdk`,
//! `SdkCache`) is byte-identical to the whole tool set printed as one AST
//! (`sdk_declarations_whole`), and the cache re-prints only what changed.

#![cfg(feature = "code-mode")]

use std::path::Path;

use dsh_tools::ToolDefinition;
use dsh_tools_runtime::code::sdk::{
    INSTRUCTIONS, RenderedSdk, SdkCache, SdkTool, render_tools_sdk, sdk_declarations,
    sdk_declarations_whole, sdk_tool_from,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn tool(name: &str, description: &str, parameters: Value, output: Value) -> SdkTool {
    SdkTool {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
        output,
    }
}

/// The reference section: the whole set printed as one AST, fenced.
fn whole_section(tools: &[SdkTool]) -> String {
    let declarations = sdk_declarations_whole(tools);
    let mut longest = 0;
    let mut run = 0;
    for c in declarations.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{INSTRUCTIONS}\n\n{fence}ts\n{declarations}\n{fence}")
}

fn assert_identical(tools: &[SdkTool]) {
    let whole = sdk_declarations_whole(tools);
    let assembled = sdk_declarations(tools);
    if assembled != whole {
        let at = assembled
            .bytes()
            .zip(whole.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(assembled.len().min(whole.len()));
        let from = at.saturating_sub(200);
        panic!(
            "assembled SDK differs at byte {at}:\n--- assembled\n{}\n--- whole\n{}",
            assembled
                .get(from..(at + 200).min(assembled.len()))
                .unwrap_or(""),
            whole.get(from..(at + 200).min(whole.len())).unwrap_or("")
        );
    }
    assert_eq!(render_tools_sdk(tools), whole_section(tools));
}

/// A recursive schema (a `$ref` cycle through `$defs`, named by its title or pointer).
fn tree(title: Option<&str>) -> Value {
    let mut node = json!({"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name"], "additionalProperties": false});
    if let Some(title) = title {
        node["title"] = json!(title);
    }
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"], "$defs": {"Node": node}})
}

/// `depth` nested arrays of objects with a recursive leaf: aliases of several generations.
fn deep(depth: usize, description: &str) -> Value {
    let mut schema = json!({"$ref": "#"});
    for i in 0..depth {
        schema = if i % 2 == 0 {
            json!({"type": "array", "items": schema})
        } else {
            json!({"type": "object", "properties": {"next": schema, "tag": {"type": "string", "description": description}}})
        };
    }
    schema
}

fn mixed_tools() -> Vec<SdkTool> {
    vec![
        tool("zeta", "Z.", tree(None), json!({"type": "number"})),
        tool("alpha", "Has ``` a fence.", tree(Some("Node")), tree(None)),
        tool("Beta", "````` five", deep(70, "`` two"), json!({})),
        tool("beta", "", deep(130, "deep"), deep(60, "out")),
        tool(
            "my-tool",
            "",
            json!({"type": "object"}),
            json!({"type": "array", "items": {"enum": [1, "a|b"]}}),
        ),
        tool("\u{1f600}", "emoji", tree(Some("Root")), json!({})),
        tool(
            "ｚ",
            "fullwidth",
            json!({"$ref": "#/$defs/Loop", "$defs": {"Loop": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Loop"}]}}}),
            json!({}),
        ),
        tool("dup", "first", deep(40, "x"), json!({})),
        tool("dup", "second", tree(None), json!({})),
    ]
}

#[test]
fn assembled_declarations_equal_the_whole_print() {
    assert_identical(&[]);
    let tools = mixed_tools();
    for n in 0..=tools.len() {
        assert_identical(&tools[..n]);
        assert_identical(&tools[n..]);
    }
    let mut reversed = tools.clone();
    reversed.reverse();
    assert_identical(&reversed);
    let sdk = sdk_declarations(&tools);
    assert!(sdk.contains("type DeepType1 = ") && sdk.contains("type $Node2 = "));
    assert!(
        render_tools_sdk(&tools).contains("\n``````ts\n"),
        "longer than five"
    );
}

/// The schema corpus of the `tsc` tests and the real MCP servers' tools.
#[test]
fn assembled_declarations_equal_the_whole_print_on_the_corpora() {
    let mut corpus = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(Path::new(FIXTURES).join("sdk/schemas"))
        .expect("the schema corpus")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    for path in files {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        corpus.push(tool(
            v["name"].as_str().expect("a name"),
            v["description"].as_str().unwrap_or_default(),
            v["parameters"].clone(),
            v.get("output").cloned().unwrap_or(json!({})),
        ));
    }
    assert_identical(&corpus);
    let mut mcp = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(Path::new(FIXTURES).join("mcp-tools"))
        .expect("the MCP corpus")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in files {
        let list: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON");
        let server = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        mcp.extend(list.into_iter().map(|t| {
            tool(
                &format!("{server}__{}", t["name"].as_str().expect("a name")),
                t["description"].as_str().unwrap_or_default(),
                t["parameters"].clone(),
                t.get("output").cloned().unwrap_or(json!({})),
            )
        }));
    }
    assert_eq!(mcp.len(), 353);
    assert_identical(&mcp);
    // Without the prefixes, servers' equal names keep their input order.
    for t in &mut mcp {
        let short = t.name.split("__").nth(1).unwrap_or_default().to_owned();
        t.name = short;
    }
    mcp.extend(corpus);
    assert_identical(&mcp);
}

/// Tools that together take more than the print budget: the whole print cuts types to `unknown`
/// somewhere, so assembly gives way to it.
#[test]
fn past_the_print_budget_the_whole_print_decides() {
    let values: Vec<Value> = (0..140_000).map(|i| json!(i)).collect();
    let long = json!({"enum": values});
    let tools: Vec<SdkTool> = (0..8)
        .map(|i| tool(&format!("wide_{i}"), "", long.clone(), json!({})))
        .collect();
    let one = sdk_declarations(&tools[..1]);
    assert!(!one.contains("unknown"), "one tool is within the budget");
    let sdk = sdk_declarations(&tools);
    assert!(sdk.contains(" | unknown | "), "eight are not");
    assert_eq!(sdk, sdk_declarations_whole(&tools));
}

// ------------------------------------------------------------------------------ SdkCache

/// Definition `index`, content `variant`: parameters of several shapes (recursive, deep,
/// backticks in descriptions), typed or untyped outputs.
fn definition(index: usize, variant: usize) -> ToolDefinition {
    const NAMES: [&str; 8] = ["a", "B", "b", "a_b", "a.b", "Z-z", "_x", "ab"];
    let name = format!("{}{}", NAMES[index % NAMES.len()], index / NAMES.len());
    let parameters = match (index + variant) % 5 {
        0 => tree(None),
        1 => tree(Some("Node")),
        2 => deep(30 + 10 * (variant % 4), "``` fenced"),
        3 => {
            json!({"type": "object", "properties": {"q": {"type": "string", "description": format!("Query {variant}")}}, "required": ["q"]})
        }
        _ => deep(8, "plain"),
    };
    let output = if variant.is_multiple_of(2) {
        json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"], "additionalProperties": false})
    } else {
        json!({})
    };
    ToolDefinition::builder(name)
        .description(format!(
            "Tool {index}, version {variant}: `{}`",
            "`".repeat(variant % 5)
        ))
        .raw_parameters(parameters)
        .output_json(output)
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("a valid tool")
}

fn fresh(tools: &[ToolDefinition]) -> String {
    whole_section(&tools.iter().map(sdk_tool_from).collect::<Vec<_>>())
}

#[test]
fn a_change_reprints_only_the_changed_tool_and_other_sdks_keep_their_fragments() {
    let cache = SdkCache::new();
    let tools: Vec<ToolDefinition> = (0..12).map(|i| definition(i, 0)).collect();
    let a = cache.render(&tools);
    assert_eq!(a.text(), fresh(&tools));
    assert_eq!(cache.printed(), 12);

    // Another tool set (another scope) over the same definitions: nothing printed.
    let b = cache.render(&tools[..6]);
    assert_eq!(cache.printed(), 12);
    assert_eq!(b.text(), fresh(&tools[..6]));
    // That set changes: only its new tool is printed, and the first set's fragments stay.
    let mut changed = tools[..6].to_vec();
    changed[2] = definition(2, 1);
    let b2 = cache.render(&changed);
    assert_eq!(cache.printed(), 13);
    assert_eq!(b2.text(), fresh(&changed));
    let a2 = cache.render(&tools);
    assert_eq!(cache.printed(), 13, "the first set re-prints nothing");
    assert!(a.shares_fragment(&a2, tools[2].name()));
    assert!(a.shares_fragment(&b2, tools[0].name()));
    assert!(!a.shares_fragment(&b2, tools[2].name()));
    drop((a, b, b2));
    assert_eq!(cache.len(), 12, "a2 holds the first set's fragments");
    drop(a2);
    assert!(cache.is_empty());
}

#[test]
fn the_cache_stays_bounded_under_churn() {
    let cache = SdkCache::new();
    let mut tools: Vec<ToolDefinition> = (0..20).map(|i| definition(i, 0)).collect();
    let mut held = Some(cache.render(&tools));
    for step in 1..2_000 {
        tools[step % 20] = definition(step % 20, step);
        held = Some(cache.render(&tools));
        assert!(cache.len() <= 20);
    }
    assert_eq!(cache.printed(), 20 + 1_999);
    assert_eq!(held.map(|s| s.text().to_owned()), Some(fresh(&tools)));
    assert!(cache.is_empty());
}

#[derive(Debug, Clone)]
enum Op {
    Add(usize),
    Remove(usize),
    Replace(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..24usize).prop_map(Op::Add),
        (0..24usize).prop_map(Op::Remove),
        (0..24usize).prop_map(Op::Replace),
    ]
}

proptest! {
    #![proptest_config(Config {
        cases: 24,
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))),
        ..Config::default()
    })]

    /// Random add/remove/replace sequences over two tool sets sharing one cache: every SDK is
    /// the fresh render of its set, and each step prints at most the one new definition.
    #[test]
    fn random_changes_render_as_fresh(ops in proptest::collection::vec((op(), any::<bool>()), 1..40)) {
        let cache = SdkCache::new();
        let mut sets: [Vec<ToolDefinition>; 2] = [Vec::new(), Vec::new()];
        let mut held: [Option<RenderedSdk>; 2] = [None, None];
        let mut version = 0;
        for (op, second) in ops {
            let set = &mut sets[usize::from(second)];
            version += 1;
            let printed = cache.printed();
            let new = match op {
                Op::Add(i) => {
                    set.insert(i.min(set.len()), definition(i, version));
                    true
                }
                Op::Remove(i) if !set.is_empty() => {
                    set.remove(i % set.len());
                    false
                }
                Op::Replace(i) if !set.is_empty() => {
                    let at = i % set.len();
                    set[at] = definition(i, version);
                    true
                }
                _ => false,
            };
            let rendered = cache.render(set);
            prop_assert_eq!(rendered.text(), fresh(set));
            prop_assert!(cache.printed() <= printed + u64::from(new));
            held[usize::from(second)] = Some(rendered);
        }
    }
}
