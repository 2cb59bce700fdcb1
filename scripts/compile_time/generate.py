#!/usr/bin/env python3
"""Generates the compile-time benchmark workspace used by `scripts/compile-time`.

Usage: generate.py OUT_DIR REPO_ROOT [--tools N]

Writes a cargo workspace with three library crates holding the same N tools (default 100):

- `ours`: `#[dsh_tools::tool]` async fns (parameters as fn arguments, `///` docs on each);
- `rmcp_side`: `#[rmcp::tool]` methods in one `#[tool_router]` impl, parameters in a
  `Parameters<T>` struct deriving `Deserialize + schemars::JsonSchema`;
- `baseline`: the same functions hand-written, serde argument structs and a plain `match`
  dispatch, no schema and no tool macro (the common cost to subtract).

The output is deterministic: same arguments, same bytes. Tool 50 (the middle one) carries the
marker `(edit 0)` in its body, which the benchmark rewrites for the incremental build.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

RMCP_VERSION = "=3.11.0"
# The schemars major that rmcp 3.11 depends on (`schemars = "1.0"`, resolved to 1.2.x).
SCHEMARS_VERSION = "1.0"
SERDE_VERSION = "1.0.228"
SERDE_JSON_VERSION = "1.0.145"

EDITED_TOOL = 50

VERBS = ["read", "write", "list", "find", "count", "check", "move", "tag", "sync", "show"]
NOUNS = ["file", "dir", "branch", "commit", "issue", "note", "task", "user", "config", "log"]


@dataclass(frozen=True)
class Param:
    name: str
    ty: str
    doc: str


P = Param
# Ten parameter shapes (0 to 6 parameters), cycled over the tools. `Mode` is a small unit
# enum, `Span` a nested struct; both are shared by every tool of a crate.
SHAPES: list[list[Param]] = [
    [],
    [P("path", "String", "The file or directory, absolute or relative to the workspace.")],
    [
        P("path", "String", "The file to read."),
        P("offset", "Option<u64>", "First line to return (1-based)."),
        P("limit", "Option<u32>", "How many lines to return at most."),
    ],
    [
        P("pattern", "String", "The regular expression to look for."),
        P("paths", "Vec<String>", "Where to look (files or directories)."),
        P("case_sensitive", "bool", "Whether letter case must match."),
        P("max_results", "Option<u32>", "Stop after this many matches."),
    ],
    [
        P("command", "String", "The program to run."),
        P("args", "Vec<String>", "Its arguments, one per element."),
        P("timeout_ms", "Option<u64>", "Kill the program after this many milliseconds."),
        P("env", "Option<Vec<String>>", "Extra environment variables as KEY=VALUE."),
        P("mode", "Mode", "How thorough the run is."),
    ],
    [
        P("path", "String", "The file to change."),
        P("span", "Span", "The lines to change."),
        P("mode", "Option<Mode>", "How thorough the change is (default fast)."),
        P("dry_run", "bool", "Report the change without making it."),
        P("label", "Option<String>", "A label recorded with the change."),
        P("depth", "i64", "How many levels to follow (negative: all)."),
    ],
    [
        P("name", "String", "The item's name."),
        P("count", "i32", "How many to take."),
    ],
    [P("enabled", "bool", "Whether the feature is on.")],
    [
        P("query", "String", "What to search for."),
        P("tags", "Vec<String>", "Only items with all of these tags."),
        P("mode", "Mode", "How thorough the search is."),
        P("limit", "Option<u64>", "How many results to return at most."),
        P("verbose", "Option<bool>", "Include each item's details."),
    ],
    [
        P("span", "Span", "The range to walk."),
        P("step", "Option<u32>", "Stride between visited lines (default 1)."),
        P("names", "Option<Vec<String>>", "Only these names."),
    ],
]


@dataclass(frozen=True)
class Tool:
    index: int
    name: str
    doc: str
    params: list[Param]
    # A per-tool output struct (every fourth tool) or `String`.
    output_struct: str | None

    def body_text(self) -> str:
        """The Rust expression of the text the body returns, using every parameter."""
        marker = " (edit 0)" if self.index == EDITED_TOOL else ""
        if not self.params:
            return f'format!("{self.name}{marker}")'
        holes = " ".join("{:?}" for _ in self.params)
        values = ", ".join(p.name for p in self.params)
        return f'format!("{self.name}{marker}: {holes}", {values})'


def tools(count: int) -> list[Tool]:
    out = []
    for i in range(count):
        verb, noun = VERBS[i % 10], NOUNS[(i // 10) % 10]
        suffix = "" if i < 100 else f"_{i // 100}"
        name = f"{verb}_{noun}{suffix}"
        params = SHAPES[i % len(SHAPES)]
        doc = (
            f"{verb.capitalize()} a {noun}: tool {i:03} of the compile-time benchmark.\n"
            f"Takes {len(params)} parameter{'s' if len(params) != 1 else ''} and returns "
            + ("a summary and a count." if i % 4 == 3 else "a line of text.")
        )
        output = f"{camel(name)}Output" if i % 4 == 3 else None
        out.append(Tool(i, name, doc, params, output))
    return out


def camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def doc_lines(text: str, indent: str) -> str:
    return "".join(f"{indent}/// {line}\n" for line in text.split("\n"))


HEADER = "// @generated by scripts/compile_time/generate.py for scripts/compile-time: do not edit.\n"


def shared_types(derive: str, extra_uses: str = "") -> str:
    """`Mode` and `Span` with the side's derives."""
    return f"""{extra_uses}
/// How thorough an operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, {derive})]
#[serde(rename_all = "snake_case")]
pub enum Mode {{
    /// Quick and approximate.
    Fast,
    /// Slower, more complete.
    Thorough,
    /// Exact matches only.
    Exact,
}}

/// A range of lines.
#[derive(Debug, Clone, PartialEq, Eq, {derive})]
pub struct Span {{
    /// First line (1-based).
    pub start: u64,
    /// Last line (inclusive).
    pub end: u64,
}}
"""


def output_struct(tool: Tool, derive: str) -> str:
    return f"""
/// What `{tool.name}` returns.
#[derive(Debug, Clone, {derive})]
pub struct {tool.output_struct} {{
    /// One line about what was done.
    pub summary: String,
    /// How many items were touched.
    pub count: u64,
}}
"""


def result_value(tool: Tool, wrap: str = "") -> str:
    """`Ok(...)` of the body: the text, or the output struct around it."""
    text = tool.body_text()
    if tool.output_struct is None:
        return f"Ok({text})"
    value = f"{tool.output_struct} {{ summary: {text}, count: {tool.index} }}"
    return f"Ok({wrap}({value}))" if wrap else f"Ok({value})"


def count_test(count: int) -> str:
    """A sanity test (`cargo test` in the generated workspace; never part of the timed builds)."""
    return f"""
#[cfg(test)]
mod tests {{
    #[test]
    fn every_tool_is_there() {{
        assert_eq!(super::tool_count(), {count});
    }}
}}
"""


# ---------------------------------------------------------------------------------------------
# ours: #[dsh_tools::tool]


def gen_ours(ts: list[Tool]) -> str:
    parts = [
        HEADER,
        "//! The benchmark's tools written with `#[dsh_tools::tool]`.\n",
        "use dsh_tools::{ToolError, ToolSchema, tool};\nuse serde::{Deserialize, Serialize};\n",
        shared_types("Serialize, Deserialize, ToolSchema"),
    ]
    for t in ts:
        if t.output_struct:
            parts.append(output_struct(t, "Serialize, Deserialize, ToolSchema"))
        params = "".join(f"    /// {p.doc}\n    {p.name}: {p.ty},\n" for p in t.params)
        ret = t.output_struct or "String"
        parts.append(
            f"\n{doc_lines(t.doc, '')}#[tool]\npub async fn {t.name}(\n{params}) -> Result<{ret}, ToolError> {{\n"
            f"    {result_value(t)}\n}}\n"
        )
    parts.append(
        """
/// How many tools this crate registered (all of them, through `inventory`).
pub fn tool_count() -> usize {
    dsh_tools::collected_tools().expect("every tool builds").len()
}
"""
        + count_test(len(ts))
    )
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# rmcp_side: #[rmcp::tool] in a #[tool_router] impl


def gen_rmcp(ts: list[Tool]) -> str:
    parts = [
        HEADER,
        "//! The benchmark's tools written with rmcp's `#[tool]` in a `#[tool_router]` impl.\n",
        "use rmcp::handler::server::wrapper::{Json, Parameters};\n"
        "use rmcp::{ErrorData, tool, tool_router};\n"
        "use schemars::JsonSchema;\n"
        "use serde::{Deserialize, Serialize};\n",
        shared_types("Serialize, Deserialize, JsonSchema"),
    ]
    for t in ts:
        if t.output_struct:
            parts.append(output_struct(t, "Serialize, Deserialize, JsonSchema"))
        if t.params:
            fields = "".join(f"    /// {p.doc}\n    pub {p.name}: {p.ty},\n" for p in t.params)
            parts.append(
                f"\n/// The arguments of `{t.name}`.\n"
                f"#[derive(Debug, Deserialize, JsonSchema)]\npub struct {camel(t.name)}Args {{\n{fields}}}\n"
            )
    parts.append(
        """
/// The server whose methods are the tools.
#[derive(Debug, Clone, Default)]
pub struct Server;

#[tool_router(vis = "pub")]
impl Server {"""
    )
    for t in ts:
        if t.params:
            names = ", ".join(p.name for p in t.params)
            arg = f", Parameters({camel(t.name)}Args {{ {names} }}): Parameters<{camel(t.name)}Args>"
        else:
            arg = ""
        ret = f"Json<{t.output_struct}>" if t.output_struct else "String"
        parts.append(
            f"\n{doc_lines(t.doc, '    ')}    #[tool]\n    pub async fn {t.name}(&self{arg}) -> Result<{ret}, ErrorData> {{\n"
            f"        {result_value(t, 'Json')}\n    }}\n"
        )
    parts.append(
        """}

/// How many tools the router holds.
pub fn tool_count() -> usize {
    Server::tool_router().list_all().len()
}
"""
        + count_test(len(ts))
    )
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# baseline: hand-written, no macros but serde's derives


def gen_baseline(ts: list[Tool]) -> str:
    parts = [
        HEADER,
        "//! The benchmark's tools hand-written: serde argument structs and a `match` dispatch.\n",
        "use serde::{Deserialize, Serialize};\nuse serde_json::Value;\n",
        shared_types("Serialize, Deserialize"),
    ]
    for t in ts:
        if t.output_struct:
            parts.append(output_struct(t, "Serialize, Deserialize"))
        if t.params:
            fields = "".join(f"    /// {p.doc}\n    pub {p.name}: {p.ty},\n" for p in t.params)
            parts.append(
                f"\n/// The arguments of `{t.name}`.\n"
                f"#[derive(Debug, Deserialize)]\npub struct {camel(t.name)}Args {{\n{fields}}}\n"
            )
        params = "".join(f"    {p.name}: {p.ty},\n" for p in t.params)
        ret = t.output_struct or "String"
        parts.append(
            f"\n{doc_lines(t.doc, '')}pub async fn {t.name}(\n{params}) -> Result<{ret}, String> {{\n"
            f"    {result_value(t)}\n}}\n"
        )
    listing = "".join(f"    ({json.dumps(t.name)}, {json.dumps(t.doc)}),\n" for t in ts)
    parts.append(f"\n/// Every tool's name and description.\npub const TOOLS: &[(&str, &str)] = &[\n{listing}];\n")
    arms = []
    for t in ts:
        if t.params:
            fields = ", ".join(f"a.{p.name}" for p in t.params)
            arms.append(
                f'        "{t.name}" => {{\n'
                f"            let a: {camel(t.name)}Args = serde_json::from_value(args).map_err(|e| e.to_string())?;\n"
                f"            output({t.name}({fields}).await)\n        }}\n"
            )
        else:
            arms.append(f'        "{t.name}" => output({t.name}().await),\n')
    parts.append(
        """
fn output<T: Serialize>(outcome: Result<T, String>) -> Result<Value, String> {
    serde_json::to_value(outcome?).map_err(|e| e.to_string())
}

/// Calls the tool `name` with its JSON arguments.
pub async fn dispatch(name: &str, args: Value) -> Result<Value, String> {
    match name {
"""
        + "".join(arms)
        + """        _ => Err(format!("unknown tool {name}")),
    }
}

/// How many tools there are.
pub fn tool_count() -> usize {
    TOOLS.len()
}
"""
        + count_test(len(ts))
    )
    return "".join(parts)


# ---------------------------------------------------------------------------------------------


def manifest(name: str, deps: str) -> str:
    return f"""# @generated by scripts/compile_time/generate.py: do not edit.
[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
{deps}"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--tools", type=int, default=100)
    a = parser.parse_args()
    out: Path = a.out
    ts = tools(a.tools)
    dsh_tools = os.path.relpath(a.repo.resolve() / "dsh-tools", (out / "ours").resolve())
    serde = f'serde = {{ version = "{SERDE_VERSION}", features = ["derive"] }}\n'
    serde_json = f'serde_json = "{SERDE_JSON_VERSION}"\n'
    write(
        out / "Cargo.toml",
        """# @generated by scripts/compile_time/generate.py: do not edit.
[workspace]
resolver = "3"
members = ["ours", "rmcp_side", "baseline"]

# The default dev profile on every side: what a developer iterating on a tools crate builds.
""",
    )
    write(
        out / "ours" / "Cargo.toml",
        manifest("ours", f'dsh-tools = {{ path = "{dsh_tools}" }}\n{serde}'),
    )
    write(
        out / "rmcp_side" / "Cargo.toml",
        manifest(
            "rmcp_side",
            f'rmcp = {{ version = "{RMCP_VERSION}", default-features = false, features = ["macros", "server"] }}\n'
            f'schemars = "{SCHEMARS_VERSION}"\n{serde}',
        ),
    )
    write(out / "baseline" / "Cargo.toml", manifest("baseline", serde + serde_json))
    write(out / "ours" / "src" / "lib.rs", gen_ours(ts))
    write(out / "rmcp_side" / "src" / "lib.rs", gen_rmcp(ts))
    write(out / "baseline" / "src" / "lib.rs", gen_baseline(ts))


if __name__ == "__main__":
    main()
