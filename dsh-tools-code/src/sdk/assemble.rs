//! The SDK declarations assembled from per-tool [`Fragment`]s: byte-identical to printing the
//! whole tool set as one AST ([`sdk_declarations`](super::sdk_declarations)).
//!
//! Printing the whole set declares, in order: `JsonValue`, `ToolArgsMap` (one member per tool),
//! `ToolOutputMap`, `ToolName`, `ToolCallError`, `tools`, then the aliases in creation order. The
//! aliases made while building the maps come first (tool by tool), then those made while
//! building their bodies, and so on: a queue, so generation by generation, tool by tool within a
//! generation, each tool's in its own order. Names are given in that same order (`DeepType<n>`
//! counts up, `$Name` takes the first free number), so assembly replays it over the fragments'
//! [`AliasPiece`]s and writes each name where its placeholder stands.
//!
//! The one thing a fragment cannot know is the SDK-wide print budget: when the fragments
//! together take more than [`PRINT_BUDGET`] nodes, the whole-set print cuts types to `unknown`
//! somewhere, and assembly declines (`None`) so the caller prints the whole set instead.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use swc_common::comments::SingleThreadedComments;

use super::INSTRUCTIONS;
use super::ast::unique_name;
use super::fixed::{head_items, tail_items};
use super::fragment::{AliasPiece, Fragment, MemberPiece, Piece};
use super::print::print_items;
use super::text::PRINT_BUDGET;
use crate::fence::fence_for;

/// The declarations of `fragments` (one per tool, in SDK order: by name in UTF-16 order), alone
/// or (`section`) as the whole SDK section — [`INSTRUCTIONS`] and the declarations fenced
/// (written in one buffer: the fence is known from the fragments); `None` past the print budget.
pub(crate) fn assemble(fragments: &[&Fragment], section: bool) -> Option<String> {
    let mut nodes: usize = 0;
    for fragment in fragments {
        nodes = nodes.checked_add(fragment.nodes?)?;
    }
    if nodes > PRINT_BUDGET {
        return None;
    }
    let names = AliasNames::of(fragments);
    let (head, tail) = fixed();
    let mut len = head.len() + tail.len() + 96;
    for fragment in fragments {
        len += fragment.args.piece.text.len() + 1;
        len += fragment
            .output
            .as_ref()
            .map_or(0, |p| p.piece.text.len() + 1);
        len += fragment
            .aliases
            .iter()
            .map(|a| a.decl.text.len() + 2)
            .sum::<usize>();
    }
    len += names
        .order
        .iter()
        .map(|(f, a)| names.name(*f, *a).len())
        .sum::<usize>()
        * 2;
    let backticks = fragments.iter().map(|f| f.backticks).max().unwrap_or(0);
    let fence = fence_for(backticks);
    if section {
        len += INSTRUCTIONS.len() + 2 * fence.len() + 8;
    }
    let mut out = String::with_capacity(len);
    if section {
        out.push_str(INSTRUCTIONS);
        out.push_str("\n\n");
        out.push_str(&fence);
        out.push_str("ts\n");
    }
    out.push_str(head);
    out.push_str("\n\n");
    let args = fragments.iter().enumerate().map(|(i, f)| (i, &f.args));
    let args = resolved(fragments, args, &names);
    push_interface(&mut out, "ToolArgsMap", &args);
    out.push_str("\n\n");
    let outputs = fragments
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((i, f.output.as_ref()?)));
    let outputs = resolved(fragments, outputs, &names);
    push_interface(&mut out, "ToolOutputMap", &outputs);
    out.push_str("\n\n");
    out.push_str(tail);
    for &(fragment, alias) in &names.order {
        out.push_str("\n\n");
        let decl = &fragments[fragment].aliases[alias].decl;
        push_piece(&mut out, decl, fragment, &names);
    }
    if section {
        // Declarations end with `;` or `}`, never a line break.
        out.push('\n');
        out.push_str(&fence);
    }
    Some(out)
}

/// The fixed declarations before and after the two maps, printed once.
fn fixed() -> (&'static str, &'static str) {
    static FIXED: OnceLock<(String, String)> = OnceLock::new();
    let (head, tail) = FIXED.get_or_init(|| {
        let comments = SingleThreadedComments::default();
        (
            print_items(&head_items(), &comments),
            print_items(&tail_items(), &comments),
        )
    });
    (head, tail)
}

/// A member of `ToolArgsMap` or `ToolOutputMap` with its alias names written in.
pub(crate) struct MemberText<'a> {
    /// The tool's name as a JSON string.
    pub(crate) quoted: &'a str,
    /// The doc line (if any), key and type, ending with `;`.
    pub(crate) text: Cow<'a, str>,
    /// Where the type starts in `text`.
    pub(crate) type_at: usize,
}

/// The members `(fragment, member)` with their placeholders replaced by alias names.
fn resolved<'a>(
    fragments: &[&'a Fragment],
    members: impl Iterator<Item = (usize, &'a MemberPiece)>,
    names: &AliasNames,
) -> Vec<MemberText<'a>> {
    members
        .map(|(fragment, member)| {
            let piece = &member.piece;
            let text = if piece.marks.is_empty() {
                Cow::Borrowed(piece.text.as_str())
            } else {
                let mut text = String::with_capacity(piece.text.len() + 16 * piece.marks.len());
                push_piece(&mut text, piece, fragment, names);
                Cow::Owned(text)
            };
            MemberText {
                quoted: &fragments[fragment].quoted,
                text,
                type_at: member.type_at,
            }
        })
        .collect()
}

/// `interface <map> {…}` with one member a line (`{}` when there is none). A member whose type
/// is printed exactly like an earlier member's, and longer than a reference to it, refers to
/// the first such member instead (`b: ToolOutputMap["a"];`, its own doc line kept).
pub(crate) fn push_interface(out: &mut String, map: &str, members: &[MemberText<'_>]) {
    out.push_str("interface ");
    out.push_str(map);
    out.push_str(" {");
    let mut first: HashMap<&str, &str> = HashMap::with_capacity(members.len());
    for member in members {
        out.push('\n');
        let text = member.text.as_ref();
        let ty = text
            .get(member.type_at..text.len().saturating_sub(1))
            .unwrap_or_default();
        match first.entry(ty) {
            // Never a reference to itself (two tools may share a name).
            Entry::Occupied(seen)
                if *seen.get() != member.quoted && ty.len() > map.len() + seen.get().len() + 2 =>
            {
                out.push_str(text.get(..member.type_at).unwrap_or_default());
                out.push_str(map);
                out.push('[');
                out.push_str(seen.get());
                out.push_str("];");
            }
            Entry::Occupied(_) => out.push_str(text),
            Entry::Vacant(slot) => {
                slot.insert(member.quoted);
                out.push_str(text);
            }
        }
    }
    out.push_str(if members.is_empty() { "}" } else { "\n}" });
}

/// `piece` of fragment `fragment`, with its placeholders replaced by their names.
fn push_piece(out: &mut String, piece: &Piece, fragment: usize, names: &AliasNames) {
    let mut from = 0;
    for mark in &piece.marks {
        out.push_str(piece.text.get(from..mark.at).unwrap_or_default());
        out.push_str(names.name(fragment, mark.alias as usize));
        from = mark.at;
    }
    out.push_str(piece.text.get(from..).unwrap_or_default());
}

/// The SDK-wide names of the fragments' aliases, and their declaration order.
struct AliasNames {
    /// Where each fragment's names start in `names`.
    start: Vec<usize>,
    names: Vec<String>,
    /// `(fragment, alias)` in declaration order.
    order: Vec<(usize, usize)>,
}

impl AliasNames {
    fn of(fragments: &[&Fragment]) -> Self {
        let mut start = Vec::with_capacity(fragments.len());
        let mut total = 0;
        for fragment in fragments {
            start.push(total);
            total += fragment.aliases.len();
        }
        let mut names = vec![String::new(); total];
        let mut order = Vec::with_capacity(total);
        // Each fragment's aliases are in generation order; `next` is each one's first unnamed.
        let with_aliases: Vec<usize> = (0..fragments.len())
            .filter(|i| !fragments[*i].aliases.is_empty())
            .collect();
        let mut next = vec![0; fragments.len()];
        let mut deep = 0;
        let mut used = HashSet::new();
        let mut generation = 0;
        while order.len() < total {
            for &i in &with_aliases {
                let aliases: &[AliasPiece] = &fragments[i].aliases;
                while let Some(alias) = aliases.get(next[i]).filter(|a| a.generation <= generation)
                {
                    names[start[i] + next[i]] = match &alias.base {
                        Some(base) => unique_name(&mut used, base),
                        None => {
                            deep += 1;
                            format!("DeepType{deep}")
                        }
                    };
                    order.push((i, next[i]));
                    next[i] += 1;
                }
            }
            generation += 1;
        }
        AliasNames {
            start,
            names,
            order,
        }
    }

    fn name(&self, fragment: usize, alias: usize) -> &str {
        self.start
            .get(fragment)
            .and_then(|start| self.names.get(start + alias))
            .map_or("unknown", String::as_str)
    }
}
