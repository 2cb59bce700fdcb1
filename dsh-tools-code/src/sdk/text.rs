//! The text printer of [`Types`]: the `json_schema_to_ts` format (`docs/CONTRACTS.md`,
//! "TypeScript types").
//!
//! Objects print one member per line (`pad(indent + 1)`, 2 spaces a level), an optional doc
//! line above each member, and the closing brace at `pad(indent)`; object members' types print
//! at `indent + 1`, array items, union/intersection members, tuple elements and record values at
//! the current indent. An array item whose text contains `|` or `&` is parenthesised; so is a
//! union inside an intersection or an optional tuple element. Iterative, with a node budget
//! (shared sub-trees print once per use): past [`PRINT_BUDGET`] nodes the rest prints `unknown`.

use dsh_tools::json::write_json_quote;

use super::doc::escape_comment_end;
use super::ir::{ElemKind, Lit, Ty, TyId, Types, is_bare_key};

/// How many nodes one print may expand.
pub(crate) const PRINT_BUDGET: usize = 1_000_000;

/// One pending piece of output.
enum Piece<'a> {
    Node(TyId, usize),
    Str(&'a str),
    Pad(usize),
    Key(&'a str),
    /// A doc text, printed with every `*/` escaped as `*\/`.
    Doc(&'a str),
    /// The inline body of a recursive alias is printed.
    EndAlias(u32),
}

/// Prints `root` with the object indentation level `indent`.
pub(crate) fn print(types: &Types<'_>, root: TyId, indent: usize) -> String {
    let mut out = String::new();
    let mut stack = vec![Piece::Node(root, indent)];
    let mut pieces: Vec<Piece<'_>> = Vec::new();
    let mut budget = PRINT_BUDGET;
    let mut inlining: Vec<u32> = Vec::new();
    while let Some(piece) = stack.pop() {
        match piece {
            Piece::EndAlias(index) => {
                inlining.retain(|i| *i != index);
            }
            Piece::Str(s) => out.push_str(s),
            Piece::Pad(n) => {
                for _ in 0..n {
                    out.push_str("  ");
                }
            }
            Piece::Key(key) => write_key(&mut out, key),
            Piece::Doc(doc) => out.push_str(&escape_comment_end(doc)),
            Piece::Node(id, indent) => {
                if budget == 0 {
                    out.push_str("unknown");
                    continue;
                }
                budget -= 1;
                if let Ty::Alias(index) = types.get(id) {
                    // A recursive schema: inline its body once; where it recurs, `unknown`.
                    match types.alias(*index) {
                        Some(alias) if !inlining.contains(index) => {
                            inlining.push(*index);
                            stack.push(Piece::EndAlias(*index));
                            stack.push(Piece::Node(alias.body, indent));
                        }
                        _ => out.push_str("unknown"),
                    }
                    continue;
                }
                expand(types, id, indent, &mut out, &mut pieces);
                stack.extend(pieces.drain(..).rev());
            }
        }
    }
    out
}

/// Writes a leaf directly to `out`, or the pieces of a composite node (in order) to `pieces`.
fn expand<'a>(
    types: &'a Types<'_>,
    id: TyId,
    indent: usize,
    out: &mut String,
    pieces: &mut Vec<Piece<'a>>,
) {
    match types.get(id) {
        Ty::Kw(kw) => out.push_str(kw.text()),
        Ty::JsonValue => out.push_str("JsonValue"),
        Ty::Lit(lit) => write_lit(out, lit),
        Ty::Union(members) => {
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    pieces.push(Piece::Str(" | "));
                }
                pieces.push(Piece::Node(*member, indent));
            }
        }
        Ty::Inter(members) => {
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    pieces.push(Piece::Str(" & "));
                }
                let paren = matches!(types.get(*member), Ty::Union(_));
                wrapped(pieces, paren, Piece::Node(*member, indent));
            }
        }
        Ty::Array(item) => {
            wrapped(pieces, types.bar_amp(*item), Piece::Node(*item, indent));
            pieces.push(Piece::Str("[]"));
        }
        Ty::Tuple(elems) => {
            pieces.push(Piece::Str("["));
            for (i, elem) in elems.iter().enumerate() {
                if i > 0 {
                    pieces.push(Piece::Str(", "));
                }
                match elem.kind {
                    ElemKind::Required => pieces.push(Piece::Node(elem.ty, indent)),
                    ElemKind::Optional => {
                        let paren = types.bar_amp(elem.ty);
                        wrapped(pieces, paren, Piece::Node(elem.ty, indent));
                        pieces.push(Piece::Str("?"));
                    }
                    ElemKind::Rest => {
                        pieces.push(Piece::Str("..."));
                        pieces.push(Piece::Node(elem.ty, indent));
                    }
                }
            }
            pieces.push(Piece::Str("]"));
        }
        Ty::Record(value) => {
            pieces.push(Piece::Str("Record<string, "));
            pieces.push(Piece::Node(*value, indent));
            pieces.push(Piece::Str(">"));
        }
        Ty::Alias(_) => out.push_str("unknown"),
        Ty::Object(members) if members.is_empty() => out.push_str("{}"),
        Ty::Object(members) => {
            pieces.push(Piece::Str("{"));
            for member in members {
                pieces.push(Piece::Str("\n"));
                pieces.push(Piece::Pad(indent + 1));
                if let Some(doc) = &member.doc {
                    pieces.push(Piece::Str("/** "));
                    pieces.push(Piece::Doc(doc));
                    pieces.push(Piece::Str(" */\n"));
                    pieces.push(Piece::Pad(indent + 1));
                }
                pieces.push(Piece::Key(member.key));
                pieces.push(Piece::Str(if member.optional { "?: " } else { ": " }));
                pieces.push(Piece::Node(member.ty, indent + 1));
                pieces.push(Piece::Str(";"));
            }
            pieces.push(Piece::Str("\n"));
            pieces.push(Piece::Pad(indent));
            pieces.push(Piece::Str("}"));
        }
    }
}

fn wrapped<'a>(pieces: &mut Vec<Piece<'a>>, paren: bool, inner: Piece<'a>) {
    if paren {
        pieces.push(Piece::Str("("));
        pieces.push(inner);
        pieces.push(Piece::Str(")"));
    } else {
        pieces.push(inner);
    }
}

/// A property or tool name: bare, or as a JSON string literal.
pub(crate) fn write_key(out: &mut String, key: &str) {
    if is_bare_key(key) {
        out.push_str(key);
    } else {
        write_json_quote(out, key);
    }
}

/// A literal's `JSON.stringify` text.
pub(crate) fn write_lit(out: &mut String, lit: &Lit<'_>) {
    match lit {
        Lit::Str(s) => write_json_quote(out, s),
        Lit::Num(text, _) => out.push_str(text),
        Lit::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
    }
}
