//! The Python `tools:sdk` section: instructions, then one fenced Python module declaring the
//! tools (docs/CONTRACTS.md, "Code Mode: Python").

use dsh_tools::json::utf16_cmp;
use serde_json::Value;

use super::INSTRUCTIONS_PY;
use super::ir::{Classes, Py};
use super::lower::Lowerer;
use super::names::{ClassNames, camel, is_method_name};
use super::print::{Imports, type_text, write_class};
use super::text::{comment, docstring, write_string};
use crate::fence::push_fenced;
use crate::sdk::SdkTool;

/// `ToolCallError` in the SDK, as the Monty runtime binds it (`code/monty/program.rs`): the
/// builtin class it raises for tool failures only, under that name.
const TOOL_CALL_ERROR: &str = "# A failed tool call raises ToolCallError; str(e) is \"<tool name>: <what went wrong>\".\n# The interpreter cannot define exception classes: ToolCallError is the builtin\n# NotADirectoryError under another name, raised for tool failures only.\nToolCallError = NotADirectoryError\n";

/// The Python SDK section: [`INSTRUCTIONS_PY`], then a fenced `python` block holding
/// [`sdk_declarations_py`].
///
/// ```
/// use dsh_tools_runtime::code::sdk::SdkTool;
/// use dsh_tools_runtime::code::sdk_py::render_tools_sdk_py;
/// use serde_json::json;
///
/// let sdk = render_tools_sdk_py(&[SdkTool {
///     name: "read_file".into(),
///     description: "Read a file.".into(),
///     parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
///     output: json!({"type": "string"}),
/// }]);
/// assert!(sdk.starts_with("## Writing code for run_code"));
/// assert!(sdk.contains("```python\nfrom typing import Protocol, TypedDict\n"));
/// assert!(sdk.contains("class ReadFileArgs(TypedDict):\n    path: str\n"));
/// assert!(sdk.contains(
///     "class Tools(Protocol):\n    async def read_file(self, args: ReadFileArgs) -> str:\n        \"\"\"Read a file.\"\"\"\n"
/// ));
/// assert!(sdk.ends_with("tools: Tools\n```"));
/// ```
pub fn render_tools_sdk_py(tools: &[SdkTool]) -> String {
    let declarations = sdk_declarations_py(tools);
    let mut out = String::with_capacity(INSTRUCTIONS_PY.len() + declarations.len() + 20);
    out.push_str(INSTRUCTIONS_PY);
    out.push_str("\n\n");
    push_fenced(&mut out, "python", &declarations);
    out
}

/// One tool, lowered.
struct Lowered<'t> {
    tool: &'t SdkTool,
    args: Py,
    output: Py,
}

/// The Python module inside the SDK section: the `typing` import (only the names used),
/// `ToolCallError`, one `TypedDict` class per object type (nested classes first, names from
/// the tool and property names: `ReadFileArgs`, `ReadFileArgsOptions`, `ReadFileOutput`), the
/// `Tools` protocol and `tools: Tools`.
///
/// Tools are sorted by name in UTF-16 order (a repeated name keeps its first entry). A tool
/// whose name is a [method name](super::is_method_name) is an `async def` of `Tools` with its
/// description as docstring; any other is reached by subscript, `tools["my-tool"]`, declared
/// by a comment and a `__getitem__` overload. A valid Python module that `mypy --strict`
/// accepts (checked in the tests).
pub fn sdk_declarations_py(tools: &[SdkTool]) -> String {
    let (mut imports, classes, protocol) = lowered_blocks(tools);
    let mut blocks = vec![TOOL_CALL_ERROR.to_owned()];
    blocks.extend(classes);
    blocks.push(protocol);
    blocks.push("tools: Tools\n".to_owned());
    imports.add("Protocol");
    let mut out = imports.line();
    out.push_str("\n\n\n");
    out.push_str(&blocks.join("\n\n"));
    out
}

/// One tool's Python declaration on its own, for tool search in programs
/// (`tools["$search"]`, `tools["$describe"]`): its `TypedDict` classes and its member of the
/// `Tools` protocol, as [`sdk_declarations_py`] would declare them for that one tool (without
/// the import line, `ToolCallError` and `tools: Tools`, which the SDK already has).
pub(crate) fn signature_py(tool: &SdkTool) -> String {
    let (_, mut blocks, protocol) = lowered_blocks(std::slice::from_ref(tool));
    blocks.push(protocol);
    blocks.join("\n\n")
}

/// [`signature_py`] of a registered tool.
pub(crate) fn signature_py_of(def: &dsh_tools::ToolDefinition) -> String {
    signature_py(&crate::sdk::sdk_tool_from(def))
}

/// The `typing` names used, the printed classes, and the `Tools` protocol of `tools`.
fn lowered_blocks(tools: &[SdkTool]) -> (Imports, Vec<String>, String) {
    let mut sorted: Vec<&SdkTool> = tools.iter().collect();
    sorted.sort_by(|a, b| utf16_cmp(&a.name, &b.name));
    sorted.dedup_by(|a, b| a.name == b.name);
    let mut classes = Classes::default();
    let mut names = ClassNames::default();
    let mut lowerer = Lowerer {
        classes: &mut classes,
        names: &mut names,
    };
    let lowered: Vec<Lowered<'_>> = sorted
        .into_iter()
        .map(|tool| {
            let base = camel(&tool.name).unwrap_or_else(|| "Tool".to_owned());
            let args = lowerer.lower(&tool.parameters, &format!("{base}Args"));
            let output = lowerer.lower(&tool.output, &format!("{base}Output"));
            Lowered { tool, args, output }
        })
        .collect();
    let mut imports = Imports::default();
    let mut blocks = Vec::with_capacity(classes.list.len());
    for class in &classes.list {
        let mut block = String::new();
        write_class(&mut block, class, &classes, &mut imports);
        blocks.push(block);
    }
    let protocol = tools_protocol(&lowered, &classes, &mut imports);
    (imports, blocks, protocol)
}

/// `class Tools(Protocol)`: a method per method-named tool, then a comment and a
/// `__getitem__` overload per other tool.
fn tools_protocol(tools: &[Lowered<'_>], classes: &Classes, imports: &mut Imports) -> String {
    let mut methods: Vec<String> = Vec::new();
    let mut subscripts: Vec<String> = Vec::new();
    let subscripted = tools
        .iter()
        .filter(|t| !is_method_name(&t.tool.name))
        .count();
    for tool in tools {
        let args = type_text(&tool.args, classes, imports);
        let output = type_text(&tool.output, classes, imports);
        let description = super::text::one_line(&tool.tool.description);
        let mut member = String::new();
        if is_method_name(&tool.tool.name) {
            member.push_str("    async def ");
            member.push_str(&tool.tool.name);
            member.push_str("(self, args: ");
            member.push_str(&args);
            member.push_str(") -> ");
            member.push_str(&output);
            if description.is_empty() {
                member.push_str(": ...\n");
            } else {
                member.push_str(":\n        ");
                member.push_str(&docstring(&description));
                member.push('\n');
            }
            methods.push(member);
        } else {
            imports.add("Literal");
            imports.add("Callable");
            imports.add("Awaitable");
            let mut key = String::new();
            write_string(&mut key, &tool.tool.name);
            member.push_str("    # tools[");
            member.push_str(&comment(&key));
            member.push(']');
            if !description.is_empty() {
                member.push_str(": ");
                member.push_str(&comment(&description));
            }
            member.push('\n');
            if subscripted > 1 {
                imports.add("overload");
                member.push_str("    @overload\n");
            }
            member.push_str("    def __getitem__(self, name: Literal[");
            member.push_str(&key);
            member.push_str("]) -> Callable[[");
            member.push_str(&args);
            member.push_str("], Awaitable[");
            member.push_str(&output);
            member.push_str("]]: ...\n");
            subscripts.push(member);
        }
    }
    let mut out = String::from("class Tools(Protocol):\n");
    if methods.is_empty() && subscripts.is_empty() {
        out.push_str("    pass\n");
        return out;
    }
    out.push_str(&methods.join("\n"));
    if !methods.is_empty() && !subscripts.is_empty() {
        out.push('\n');
    }
    // The overloads of `__getitem__` must follow each other.
    out.push_str(&subscripts.join(""));
    out
}

/// The Python type of the values a JSON Schema accepts: its annotation, preceded by the
/// `TypedDict` classes it names (nested first, the outermost named `Schema`). Nodes that cannot
/// be typed degrade to `Any` where they stand.
///
/// ```
/// use dsh_tools_runtime::code::sdk_py::json_schema_to_py;
/// use serde_json::json;
///
/// assert_eq!(json_schema_to_py(&json!({"type": ["string", "null"]})), "str | None");
/// assert_eq!(json_schema_to_py(&json!({"enum": ["a", 1, true]})), "Literal[\"a\", 1, True]");
/// assert_eq!(
///     json_schema_to_py(&json!({"type": "object", "properties": {"n": {"type": "integer"}}})),
///     "class Schema(TypedDict):\n    n: NotRequired[int]\n\n\nSchema"
/// );
/// ```
pub fn json_schema_to_py(schema: &Value) -> String {
    let mut classes = Classes::default();
    let mut names = ClassNames::default();
    let ty = Lowerer {
        classes: &mut classes,
        names: &mut names,
    }
    .lower(schema, "Schema");
    let mut imports = Imports::default();
    let mut blocks: Vec<String> = Vec::new();
    for class in &classes.list {
        let mut block = String::new();
        write_class(&mut block, class, &classes, &mut imports);
        blocks.push(block);
    }
    blocks.push(type_text(&ty, &classes, &mut imports));
    blocks.join("\n\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> SdkTool {
        SdkTool {
            name: name.to_owned(),
            description: "Archive an issue.".to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "labels": {"type": "array", "items": {
                    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]
                }}},
                "required": ["id"],
            }),
            output: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
        }
    }

    #[test]
    fn a_signature_is_the_sdk_s_declaration_of_that_one_tool() {
        for name in ["archive_issue", "archive-issue"] {
            let signature = signature_py(&tool(name));
            let sdk = sdk_declarations_py(&[tool(name)]);
            // Every line of the signature is the SDK's, and the SDK's own frame is left out.
            for line in signature.lines() {
                assert!(sdk.contains(line), "{name}: the SDK declares {line:?}");
            }
            assert!(signature.contains("class Tools(Protocol):"), "{signature}");
            for frame in ["from typing import", "ToolCallError =", "tools: Tools"] {
                assert!(
                    !signature.contains(frame),
                    "{name}: {frame:?} in {signature}"
                );
            }
            assert!(signature.contains("(TypedDict):"), "{signature}");
        }
    }

    #[cfg(feature = "python")]
    #[test]
    fn a_signature_is_valid_python() {
        use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
        for name in ["archive_issue", "archive-issue"] {
            let signature = signature_py(&tool(name));
            let parsed = parse_unchecked(&signature, ParseOptions::from(Mode::Module));
            assert!(
                parsed.errors().is_empty(),
                "{:?}\n{signature}",
                parsed.errors()
            );
        }
    }
}
