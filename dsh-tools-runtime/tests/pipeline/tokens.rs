//! What a real tool set costs in tokens, natively and in Code Mode (`docs/CONTRACTS.md`,
//! "Tokens"; figures in BENCHMARKS.md, "Tokens").
//!
//! The corpus `tests/fixtures/mcp-tools/*.json` is the `tools/list` output of 26 published MCP
//! servers, one file per server (`PROVENANCE.md` there names the packages and how it was
//! captured). The ratios
//! measured on it are pinned as upper bounds: a change to the SDK that makes it costlier fails
//! here. Counts are `o200k_base` tokens, so the bounds are deterministic.

#![cfg(all(feature = "code-mode", feature = "tokens"))]

use std::collections::BTreeMap;

use dsh_tools::json::collapse_js_whitespace;
use dsh_tools_runtime::code::cost::{native_tokens, tool_set_cost};
use dsh_tools_runtime::code::flavour::TYPESCRIPT;
use dsh_tools_runtime::code::sdk::{SdkTool, render_tools_sdk};
use serde_json::{Value, json};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-tools");

/// Upper bounds of the measured figures (BENCHMARKS.md, "Tokens"): the SDK may only get cheaper.
/// The goals of issue 14 are 0.55 overall and 0.7 per server of 10+ tools; the servers above
/// 0.7 spend most of it on descriptions (desktop-commander's alone cost 0.67× its native form)
/// or on output types the native form does not carry (firecrawl, lara).
const OVERALL_RATIO: f64 = 0.647;
const PREAMBLE_TOKENS: usize = 649;
/// Per server of 10+ tools: `(sdk - preamble) / native`.
const SERVER_RATIOS: &[(&str, f64)] = &[
    ("airtable-mcp-server", 0.690),
    ("desktop-commander", 0.726),
    ("firecrawl-mcp", 1.081),
    ("hubspot-mcp-server", 0.715),
    ("lara-mcp", 0.908),
    ("mcp-server-kubernetes", 0.691),
    ("mcp-server-linear", 0.581),
    ("notion-mcp-server", 0.182),
    ("playwright-mcp", 0.598),
    ("playwright-mcp-server", 0.635),
    ("server-everything", 0.547),
    ("server-filesystem", 0.665),
    ("server-github", 0.465),
];

/// The corpus, by server (the file stem).
fn corpus() -> BTreeMap<String, Vec<SdkTool>> {
    let mut servers = BTreeMap::new();
    for entry in std::fs::read_dir(CORPUS).expect("the MCP tools corpus exists") {
        let path = entry.expect("a readable corpus entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable corpus file");
        let entries: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a JSON list: {e}", path.display()));
        let tools = entries
            .into_iter()
            .map(|entry| SdkTool {
                name: entry["name"].as_str().expect("a tool name").to_owned(),
                description: entry["description"].as_str().unwrap_or_default().to_owned(),
                parameters: entry["parameters"].clone(),
                output: entry.get("output").cloned().unwrap_or(json!({})),
            })
            .collect();
        let stem = path.file_stem().expect("a file name").to_string_lossy();
        servers.insert(stem.into_owned(), tools);
    }
    servers
}

fn all_tools(servers: &BTreeMap<String, Vec<SdkTool>>) -> Vec<SdkTool> {
    servers.values().flatten().cloned().collect()
}

#[test]
fn the_corpus_is_real_sized() {
    let servers = corpus();
    let tools = all_tools(&servers);
    assert_eq!((servers.len(), tools.len()), (26, 353));
}

#[test]
fn the_preamble_is_small() {
    let preamble = tool_set_cost(&[], &TYPESCRIPT).sdk;
    eprintln!("preamble: {preamble}");
    assert!(preamble <= PREAMBLE_TOKENS, "preamble {preamble} tokens");
}

#[test]
fn the_sdk_costs_at_most_the_pinned_share_of_the_native_form() {
    let tools = all_tools(&corpus());
    let cost = tool_set_cost(&tools, &TYPESCRIPT);
    eprintln!(
        "overall: native {} sdk {} ratio {:.3}",
        cost.native,
        cost.sdk,
        cost.ratio()
    );
    assert!(
        cost.ratio() <= OVERALL_RATIO,
        "overall {:.3} ({} / {})",
        cost.ratio(),
        cost.sdk,
        cost.native
    );
}

#[test]
fn every_large_server_costs_at_most_its_pinned_share_beyond_the_preamble() {
    let preamble = tool_set_cost(&[], &TYPESCRIPT).sdk;
    let mut measured = Vec::new();
    for (server, tools) in corpus().iter().filter(|(_, tools)| tools.len() >= 10) {
        let cost = tool_set_cost(tools, &TYPESCRIPT);
        let ratio = (cost.sdk - preamble) as f64 / native_tokens(tools) as f64;
        eprintln!("{server} ({} tools): {ratio:.3}", tools.len());
        measured.push((server.clone(), ratio));
    }
    assert_eq!(
        measured.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
        SERVER_RATIOS.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        "the servers of 10+ tools"
    );
    for ((server, ratio), (_, bound)) in measured.iter().zip(SERVER_RATIOS) {
        assert!(*ratio <= bound + 0.0005, "{server}: {ratio:.3} > {bound}");
    }
}

/// Every description of a schema node (a tool's, a member's, a branch's, an item's) as it is
/// written in a JSON Schema: the keys under which values are data, not schemas, are skipped.
fn descriptions<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("description", Value::String(text)) => out.push(text),
                    ("default" | "examples" | "const" | "enum" | "example", _) => {}
                    (
                        "properties" | "$defs" | "definitions" | "patternProperties",
                        Value::Object(members),
                    ) => {
                        members
                            .values()
                            .for_each(|member| descriptions(member, out));
                    }
                    _ => descriptions(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| descriptions(item, out)),
        _ => {}
    }
}

#[test]
fn no_description_is_lost() {
    let tools = all_tools(&corpus());
    let sdk = collapse_js_whitespace(&render_tools_sdk(&tools)).replace("*\\/", "*/");
    let mut lost = Vec::new();
    let mut total = 0;
    for tool in &tools {
        let mut texts = vec![tool.description.as_str()];
        descriptions(&tool.parameters, &mut texts);
        descriptions(&tool.output, &mut texts);
        for text in texts {
            let text = collapse_js_whitespace(text);
            if text.is_empty() {
                continue;
            }
            total += 1;
            if !sdk.contains(&text) {
                lost.push(format!("{}: {text:.60}", tool.name));
            }
        }
    }
    eprintln!("descriptions lost: {} of {total}", lost.len());
    assert!(total > 1000, "{total} descriptions");
    assert!(lost.is_empty(), "{} of {total} lost: {lost:#?}", lost.len());
}

#[test]
fn a_description_quoting_a_fence_stays_inside_the_section() {
    let tool = SdkTool {
        name: "run_query".into(),
        description: "Run a query, e.g.\n```sql\nselect 1\n```\nthen ```` four.".into(),
        parameters: json!({"type": "object"}),
        output: json!({}),
    };
    let sdk = render_tools_sdk(&[tool]);
    let start = sdk
        .find("\n`````ts\n")
        .expect("a fence of five backticks opens the block");
    assert!(sdk.ends_with("\n`````"), "{}", &sdk[start..]);
    assert_eq!(sdk.matches("`````").count(), 2);
}
