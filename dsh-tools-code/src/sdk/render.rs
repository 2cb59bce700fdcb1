//! The `tools:sdk` prompt section (`docs/CONTRACTS.md`, "The SDK"): instructions, then the
//! declarations built as a swc TypeScript AST and printed by `swc_ecma_codegen`.

use std::borrow::Cow;

use dsh_tools::ToolDefinition;
use dsh_tools::json::{json_quote, utf16_cmp};
use serde_json::Value;
use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_common::{DUMMY_SP, SourceMap};
use swc_ecma_ast::{Decl, ModuleItem, Stmt, TsType, TsTypeAliasDecl, TsTypeElement};

use super::INSTRUCTIONS;
use super::assemble::{MemberText, assemble, push_interface};
use super::ast::{AstBuilder, ident, property};
use super::doc::doc_text;
use super::fixed::{head_items, tail_items};
use super::fragment::{Fragment, MemberPiece, print_member};
use super::ir::{TyId, Types};
use super::print::print_items;
use super::ts_type::lower;
use crate::fence::push_fenced;

/// One tool as the SDK sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkTool {
    /// The tool's name (a key of `ToolArgsMap`/`ToolOutputMap`, quoted when not an identifier).
    pub name: String,
    /// The tool's description (the doc line of its `ToolArgsMap` member when non-empty).
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// The JSON Schema of the canonical output value.
    pub output: Value,
}

/// What the doc line of a tool that may ask for approval ends with (both SDKs).
pub(crate) const APPROVAL_MARK: &str = "(may ask for approval)";

/// The SDK view of a tool definition: name, description, parameters and output schema.
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::code::sdk::sdk_tool_from;
/// use serde_json::json;
///
/// let echo = ToolDefinition::builder("echo")
///     .description("Echo the text back.")
///     .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
///     .output_json(json!({"type": "string"}))
///     .execute(|args, _ctx| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// let tool = sdk_tool_from(&echo);
/// assert_eq!((tool.name.as_str(), tool.output.clone()), ("echo", json!({"type": "string"})));
/// ```
pub fn sdk_tool_from(def: &ToolDefinition) -> SdkTool {
    SdkTool {
        name: def.name().to_owned(),
        description: sdk_description(def).into_owned(),
        parameters: def.parameters().clone(),
        output: def.output_schema().clone(),
    }
}

/// The SDK section: [`INSTRUCTIONS`], then a fenced `ts` block holding the `JsonValue` alias
/// and the declarations ([`sdk_declarations`]). The fence is longer than any run of backticks
/// in the declarations (three when there is none).
///
/// Tools are sorted by name in UTF-16 code-unit order (equal names keep their input order);
/// the text is byte-identical for the same input. The layout is compact (`docs/CONTRACTS.md`,
/// "The SDK"): no indentation, each description a `//` line above its member, `JsonObject` for
/// `Record<string, JsonValue>`, and a map member typed exactly like an earlier one refers to it
/// (`b: ToolOutputMap["a"];`) when that is shorter.
///
/// ```
/// use dsh_tools_runtime::code::sdk::{SdkTool, render_tools_sdk};
/// use serde_json::json;
///
/// let sdk = render_tools_sdk(&[SdkTool {
///     name: "read_file".into(),
///     description: "Read a file.".into(),
///     parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
///     output: json!({"type": "string"}),
/// }]);
/// assert!(sdk.starts_with("## Writing code for run_code"));
/// assert!(sdk.contains("The available tools:\n\n```ts\ntype JsonValue = "));
/// assert!(sdk.contains(
///     "interface ToolArgsMap {\n// Read a file.\nread_file: {\npath: string;\n} & JsonObject;\n}"
/// ));
/// assert!(sdk.contains("interface ToolOutputMap {\nread_file: string;\n}"));
/// assert!(sdk.ends_with(
///     "[K in ToolName]: (args: ToolArgsMap[K]) => Promise<K extends keyof ToolOutputMap ? ToolOutputMap[K] : JsonValue>;\n};\n```"
/// ));
/// ```
pub fn render_tools_sdk(tools: &[SdkTool]) -> String {
    assembled(tools, true).unwrap_or_else(|| section(&sdk_declarations_whole(tools)))
}

/// The SDK section around `declarations`.
pub(crate) fn section(declarations: &str) -> String {
    let mut out = String::with_capacity(INSTRUCTIONS.len() + declarations.len() + 16);
    out.push_str(INSTRUCTIONS);
    out.push_str("\n\n");
    push_fenced(&mut out, "ts", declarations);
    out
}

/// The TypeScript inside the SDK section's fence: `JsonValue`, `JsonObject`, `ToolArgsMap`,
/// `ToolOutputMap` (the tools whose output is typed),
/// `ToolName`, `ToolCallError`, `tools`, separated by blank lines, then the aliases the types
/// need: `$Name` for each recursive schema (a `$ref` cycle, e.g. `type $TreeEntry = { …;
/// children?: $TreeEntry[] }`) and `DeepType<n>` for types nested too deep to print in one piece.
/// A valid `.d.ts` script on its own (checked with `tsc --strict` in the tests).
///
/// Each tool is printed on its own (its members and aliases, with placeholders for the alias
/// names) and the pieces are assembled; the text is byte-identical to printing the whole set as
/// one AST ([`sdk_declarations_whole`]), which is what happens when the tools together exceed
/// the print budget. [`SdkCache`](super::SdkCache) keeps the pieces between calls.
pub fn sdk_declarations(tools: &[SdkTool]) -> String {
    assembled(tools, false).unwrap_or_else(|| sdk_declarations_whole(tools))
}

/// The declarations (or the `section`) from per-tool fragments; `None` past the print budget.
fn assembled(tools: &[SdkTool], section: bool) -> Option<String> {
    let mut sorted: Vec<&SdkTool> = tools.iter().collect();
    sorted.sort_by(|a, b| name_order(&a.name, &b.name));
    let mut types = Types::for_ast();
    let fragments: Vec<Fragment> = sorted
        .iter()
        .map(|tool| Fragment::of_in(ToolView::from(*tool), &mut types))
        .collect();
    assemble(&fragments.iter().collect::<Vec<_>>(), section)
}

/// The SDK's tool order: by name in UTF-16 code-unit order (byte order when both are ASCII,
/// where the two agree).
pub(crate) fn name_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        utf16_cmp(a, b)
    }
}

/// [`sdk_declarations`] printed as one AST: the whole tool set's declarations built, then
/// printed, in one piece (the reference the assembled text is tested against).
pub fn sdk_declarations_whole(tools: &[SdkTool]) -> String {
    let mut sorted: Vec<&SdkTool> = tools.iter().collect();
    sorted.sort_by(|a, b| name_order(&a.name, &b.name));
    let comments = SingleThreadedComments::default();
    let mut builder = AstBuilder::new(&comments);
    let mut types = Types::for_ast();
    let mut args = Vec::with_capacity(sorted.len());
    let mut outputs = Vec::with_capacity(sorted.len());
    for (i, tool) in sorted.iter().enumerate() {
        let (arg, output) = members(&mut builder, &mut types, ToolView::from(*tool));
        args.push((i, arg));
        outputs.extend(output.map(|output| (i, output)));
    }
    // Each member printed on its own, as a fragment prints it (see `assemble`).
    let quoted: Vec<String> = sorted.iter().map(|tool| json_quote(&tool.name)).collect();
    let cm: Lrc<SourceMap> = Lrc::default();
    let print = |members: Vec<(usize, TsTypeElement)>| -> Vec<(usize, MemberPiece)> {
        members
            .into_iter()
            .map(|(i, member)| (i, print_member(&cm, member, &sorted[i].name, &comments)))
            .collect()
    };
    let (args, outputs) = (print(args), print(outputs));
    let mut out = print_items(&head_items(), &comments);
    out.push_str("\n\n");
    push_interface(&mut out, "ToolArgsMap", &texts(&args, &quoted));
    out.push_str("\n\n");
    push_interface(&mut out, "ToolOutputMap", &texts(&outputs, &quoted));
    out.push_str("\n\n");
    let mut items = tail_items();
    let mut next = 0;
    while let Some((name, ty)) = builder.deferred_decl(&types, next) {
        next += 1;
        items.push(alias(&name, ty));
    }
    out.push_str(&print_items(&items, &comments));
    out
}

/// Printed members `(tool index, member)` as [`push_interface`] takes them.
fn texts<'a>(members: &'a [(usize, MemberPiece)], quoted: &'a [String]) -> Vec<MemberText<'a>> {
    members
        .iter()
        .map(|(i, member)| MemberText {
            quoted: &quoted[*i],
            text: Cow::Borrowed(&member.piece.text),
            type_at: member.type_at,
        })
        .collect()
}

/// The parts of one tool the SDK reads, borrowed from an [`SdkTool`] or a [`ToolDefinition`].
#[derive(Debug, Clone)]
pub(crate) struct ToolView<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: std::borrow::Cow<'a, str>,
    pub(crate) parameters: &'a Value,
    pub(crate) output: &'a Value,
}

impl<'a> From<&'a SdkTool> for ToolView<'a> {
    fn from(tool: &'a SdkTool) -> Self {
        ToolView {
            name: &tool.name,
            description: std::borrow::Cow::Borrowed(&tool.description),
            parameters: &tool.parameters,
            output: &tool.output,
        }
    }
}

/// The doc line of `def` in an SDK: its description, and for a tool that asks (declared, or
/// destructive: what `DeclaredOrDestructive` and the CLI ask about) [`APPROVAL_MARK`]; the
/// instructions say what a refusal looks like.
fn sdk_description(def: &ToolDefinition) -> std::borrow::Cow<'_, str> {
    let asks = def.requires_approval() || def.annotations().destructive_hint == Some(true);
    match (asks, def.description().is_empty()) {
        (false, _) => def.description().into(),
        (true, true) => APPROVAL_MARK.into(),
        (true, false) => format!("{} {APPROVAL_MARK}", def.description()).into(),
    }
}

impl<'a> From<&'a ToolDefinition> for ToolView<'a> {
    fn from(def: &'a ToolDefinition) -> Self {
        ToolView {
            name: def.name(),
            description: sdk_description(def),
            parameters: def.parameters(),
            output: def.output_schema(),
        }
    }
}

/// One tool's members: of `ToolArgsMap` (with the description as its doc), and of
/// `ToolOutputMap` unless the output is any JSON value.
pub(crate) fn members<'s>(
    builder: &mut AstBuilder<'_>,
    types: &mut Types<'s>,
    tool: ToolView<'s>,
) -> (TsTypeElement, Option<TsTypeElement>) {
    let id = lower(types, tool.parameters);
    let ty = builder.ty(types, id);
    let span = if tool.description.is_empty() {
        DUMMY_SP
    } else {
        builder.doc_span(&doc_text(&tool.description))
    };
    let args = property(span, tool.name, false, ty);
    let id = lower(types, tool.output);
    if id == TyId::JSON {
        return (args, None);
    }
    // The output schema's own description has no member of its own to stand on.
    let span = match tool.output.get("description").and_then(Value::as_str) {
        Some(description) if !description.trim().is_empty() => {
            builder.doc_span(&doc_text(description))
        }
        _ => DUMMY_SP,
    };
    let output = property(span, tool.name, false, builder.ty(types, id));
    (args, Some(output))
}

pub(crate) fn decl(decl: Decl) -> ModuleItem {
    ModuleItem::Stmt(Stmt::Decl(decl))
}

pub(crate) fn alias(name: &str, ty: Box<TsType>) -> ModuleItem {
    decl(Decl::TsTypeAlias(Box::new(TsTypeAliasDecl {
        span: DUMMY_SP,
        declare: false,
        id: ident(name),
        type_params: None,
        type_ann: ty,
    })))
}
