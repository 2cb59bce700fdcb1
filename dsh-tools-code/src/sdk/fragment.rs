//! One tool's share of the SDK declarations, printed on its own: its `ToolArgsMap` member (with
//! its doc comment), its `ToolOutputMap` member when its output is typed, and the aliases its
//! types need (`$Name` for recursive schemas, `DeepType<n>` for deep types).
//!
//! Alias names are numbered across the whole SDK (`$Node2`, `DeepType7`), so a fragment names
//! them by placeholders (see [`super::print`]) and [`super::assemble`] writes the names in. A
//! fragment depends on nothing but its tool: built once, it serves every tool set holding the
//! tool, in any scope.

use dsh_tools::json::json_quote;
use swc_common::SourceMap;
use swc_common::comments::SingleThreadedComments;
use swc_common::sync::Lrc;
use swc_ecma_ast::{ModuleItem, TsTypeElement};

use super::ast::AstBuilder;
use super::ir::{Types, is_bare_key};
use super::print::{Mark, print_item};
use super::render::{ToolView, alias, members};
use crate::fence::longest_backtick_run;

/// A printed text and the placeholders in it.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub(crate) text: String,
    /// In text order.
    pub(crate) marks: Vec<Mark>,
}

/// A member of `ToolArgsMap` or `ToolOutputMap`, printed: its doc line (if any), key and type,
/// ending with `;`.
#[derive(Debug, Clone)]
pub(crate) struct MemberPiece {
    pub(crate) piece: Piece,
    /// Where the type starts (after the key's `: `); no placeholder stands before it.
    pub(crate) type_at: usize,
}

/// An alias a tool's types need, declared after the SDK's other declarations.
#[derive(Debug, Clone)]
pub(crate) struct AliasPiece {
    /// See [`super::ast::Deferred::generation`]: aliases are declared (and numbered) generation
    /// by generation, tool by tool within one.
    pub(crate) generation: u32,
    /// `Some($<Name>)` for a recursive alias (numbered from 2 when taken), `None` for a
    /// `DeepType<n>`.
    pub(crate) base: Option<String>,
    /// `type #<i> = …;`.
    pub(crate) decl: Piece,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Fragment {
    /// The tool's name as a JSON string (how a later member with the same type refers to it:
    /// `ToolArgsMap["name"]`).
    pub(crate) quoted: String,
    /// The `ToolArgsMap` member, without a line break at either end.
    pub(crate) args: MemberPiece,
    /// The `ToolOutputMap` member, in the same form.
    pub(crate) output: Option<MemberPiece>,
    /// Placeholder `#<i>` stands for the name of `aliases[i]` (in creation order, so by
    /// generation).
    pub(crate) aliases: Vec<AliasPiece>,
    /// The nodes taken from the SDK's print budget; `None` when this tool alone ran it out.
    pub(crate) nodes: Option<usize>,
    /// The longest run of backticks in any piece (the SDK's fence must be longer).
    pub(crate) backticks: usize,
}

impl Fragment {
    /// Lowers and prints `tool`.
    pub(crate) fn of(tool: ToolView<'_>) -> Fragment {
        Self::of_in(tool, &mut Types::for_ast())
    }

    /// [`Fragment::of`], lowering into `types` (reset first; a caller printing many tools
    /// reuses one arena).
    pub(crate) fn of_in<'s>(tool: ToolView<'s>, types: &mut Types<'s>) -> Fragment {
        types.reset();
        let comments = SingleThreadedComments::default();
        let mut builder = AstBuilder::for_fragment(&comments);
        let (args, output) = members(&mut builder, types, tool.clone());
        let mut decls: Vec<ModuleItem> = Vec::new();
        while let Some((name, ty)) = builder.deferred_decl(types, decls.len()) {
            decls.push(alias(&name, ty));
        }
        let cm: Lrc<SourceMap> = Lrc::default();
        let args = print_member(&cm, args, tool.name, &comments);
        let output = output.map(|output| print_member(&cm, output, tool.name, &comments));
        let aliases: Vec<AliasPiece> = builder
            .deferred
            .iter()
            .zip(&decls)
            .map(|(deferred, decl)| {
                let (text, marks) = print_item(&cm, decl, &comments);
                AliasPiece {
                    generation: deferred.generation,
                    base: deferred.base.clone(),
                    decl: Piece { text, marks },
                }
            })
            .collect();
        let backticks = std::iter::once(&args.piece)
            .chain(output.as_ref().map(|o| &o.piece))
            .chain(aliases.iter().map(|a| &a.decl))
            .map(|piece| longest_backtick_run(&piece.text))
            .max()
            .unwrap_or(0);
        Fragment {
            quoted: json_quote(tool.name),
            args,
            output,
            aliases,
            nodes: builder.budget_used(),
            backticks,
        }
    }
}

/// The text of `member`, the map member of tool `name`, as a member of an interface.
pub(crate) fn print_member(
    cm: &Lrc<SourceMap>,
    member: TsTypeElement,
    name: &str,
    comments: &SingleThreadedComments,
) -> MemberPiece {
    // Printed on its own, a member reads as it does in an interface body (`;` included; the
    // body's line breaks around it are the interface's).
    let (text, marks) = print_item(cm, &member, comments);
    // A doc is one `//` line (its text has no line terminator); then the key, `: ` and the type.
    let key_at = if text.starts_with("//") {
        text.find('\n').map_or(0, |i| i + 1)
    } else {
        0
    };
    let key_len = if is_bare_key(name) {
        name.len()
    } else {
        json_quote(name).len()
    };
    let type_at = (key_at + key_len + 2).min(text.len());
    debug_assert_eq!(text.get(type_at - 2..type_at), Some(": "), "{text}");
    MemberPiece {
        piece: Piece { text, marks },
        type_at,
    }
}
