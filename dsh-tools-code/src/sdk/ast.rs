//! swc TypeScript AST builders: [`Types`] nodes as `TsType`s, and the small node constructors
//! the SDK declarations need.
//!
//! Doc comments are attached through swc's comment map at synthetic, even byte positions (one
//! per documented member), so the code generator prints them in front of their member.
//!
//! Depth: swc's code generator and `Drop` recurse once per nested type, so a type nested deeper
//! than [`MAX_DEPTH`] is cut: the deeper sub-tree becomes a named alias (`DeepType<n>`), declared
//! after the SDK's other declarations. An alias is transparent, so the meaning is unchanged.
//! Nested unions and intersections are flattened (one level, however long), as their text is.
//!
//! Recursive schemas (`Ty::Alias`) become named aliases `$<Name>` (from the schema's `title` or
//! its `$ref` pointer; `$` keeps them apart from the SDK's and the standard library's names, a
//! number suffix from each other), declared after the SDK's other declarations.
//!
//! Alias names are numbered across the whole SDK. A builder made [`AstBuilder::for_fragment`]
//! (one tool at a time, see [`super::fragment`]) names its aliases by placeholders `#<n>` instead
//! (`n`: the alias's index in [`AstBuilder::deferred`]), and records each alias's generation, so
//! the names can be given once the whole tool set is known.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use swc_common::comments::{Comment, CommentKind, Comments, SingleThreadedComments};
use swc_common::{BytePos, DUMMY_SP, Span};
use swc_ecma_ast::{
    Ident, TsArrayType, TsEntityName, TsIntersectionType, TsOptionalType, TsParenthesizedType,
    TsRestType, TsTupleElement, TsTupleType, TsType, TsTypeLit, TsTypeParamInstantiation,
    TsTypeRef, TsUnionOrIntersectionType, TsUnionType,
};

use super::ir::{ElemKind, Kw, Ty, TyId, Types};
pub(crate) use super::nodes::{annotation, ident, keyword, literal, property, string, type_ref};
use super::text::PRINT_BUDGET;

/// How deep one declaration's types may nest before the rest moves to an alias.
pub(crate) const MAX_DEPTH: usize = 24;

/// An alias to declare after the SDK's other declarations.
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    /// The name (or placeholder `#<n>`).
    pub(crate) name: String,
    /// `Some($<Name>)` for a recursive alias (its name before numbering), `None` for a
    /// `DeepType<n>`.
    pub(crate) base: Option<String>,
    /// 0 when made while building a declaration's type, else one more than the generation of the
    /// alias whose body was being built.
    pub(crate) generation: u32,
    id: TyId,
    /// The inline-only recursive aliases around it.
    inlining: Vec<u32>,
}

/// Builds `TsType`s from [`Types`], attaching doc comments to `comments`.
pub(crate) struct AstBuilder<'c> {
    comments: &'c SingleThreadedComments,
    next_pos: u32,
    /// Aliases to declare, in creation order.
    pub(crate) deferred: Vec<Deferred>,
    /// Names aliases by placeholders (see the module documentation).
    placeholders: bool,
    /// The generation of the aliases made now.
    generation: u32,
    /// The inline-only recursive aliases whose body is being built (they recur as `unknown`).
    inlining: Vec<u32>,
    aliases: usize,
    /// The declared name of each recursive alias.
    names: HashMap<u32, String>,
    used: HashSet<String>,
    budget: usize,
    /// `JsonValue`, `JsonObject` and `Record`, made once (swc interns identifier text on every
    /// creation).
    json_value: Box<TsType>,
    json_object: Box<TsType>,
    record: Ident,
    /// The text of the doc comment being made.
    doc_buf: String,
}

impl<'c> AstBuilder<'c> {
    pub(crate) fn new(comments: &'c SingleThreadedComments) -> Self {
        AstBuilder {
            comments,
            next_pos: 2,
            deferred: Vec::new(),
            placeholders: false,
            generation: 0,
            inlining: Vec::new(),
            aliases: 0,
            names: HashMap::new(),
            used: HashSet::new(),
            budget: PRINT_BUDGET,
            json_value: type_ref("JsonValue", None),
            json_object: type_ref("JsonObject", None),
            record: ident("Record"),
            doc_buf: String::new(),
        }
    }

    /// A builder for one tool's declarations: aliases are named by placeholders.
    pub(crate) fn for_fragment(comments: &'c SingleThreadedComments) -> Self {
        AstBuilder {
            placeholders: true,
            ..Self::new(comments)
        }
    }

    /// How many nodes the builds so far took from the print budget; `None` once it ran out
    /// (a type may have been cut to `unknown`).
    pub(crate) fn budget_used(&self) -> Option<usize> {
        (self.budget > 0).then_some(PRINT_BUDGET - self.budget)
    }

    /// A fresh span whose start carries `doc` as a `// …` leading comment (a line of its own;
    /// `doc` is one line already, a stray line terminator would become a space); no comment
    /// (`DUMMY_SP`) for an empty `doc`.
    pub(crate) fn doc_span(&mut self, doc: &str) -> Span {
        if doc.is_empty() {
            return DUMMY_SP;
        }
        let pos = BytePos(self.next_pos);
        self.next_pos = self.next_pos.saturating_add(2);
        // The comment's text is interned (copied) by swc: written in a reused buffer.
        let text = &mut self.doc_buf;
        text.clear();
        text.push(' ');
        // U+2028 and U+2029 are the only line terminators outside ASCII (both start with 0xE2).
        if doc.bytes().any(|b| matches!(b, b'\n' | b'\r' | 0xe2)) {
            text.extend(doc.chars().map(|c| {
                if matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') {
                    ' '
                } else {
                    c
                }
            }));
        } else {
            text.push_str(doc);
        }
        self.comments.add_leading(
            pos,
            Comment {
                kind: CommentKind::Line,
                span: DUMMY_SP,
                text: text.as_str().into(),
            },
        );
        Span::new(pos, pos)
    }

    /// The type of node `id` (a fresh declaration: depth 0).
    pub(crate) fn ty(&mut self, types: &Types<'_>, id: TyId) -> Box<TsType> {
        self.build(types, id, 0)
    }

    /// The body of deferred alias `index` of [`AstBuilder::deferred`], or `None` past the end.
    pub(crate) fn deferred_decl(
        &mut self,
        types: &Types<'_>,
        index: usize,
    ) -> Option<(String, Box<TsType>)> {
        let entry = self.deferred.get(index)?;
        let (name, id, generation) = (entry.name.clone(), entry.id, entry.generation);
        let saved = std::mem::replace(&mut self.inlining, entry.inlining.clone());
        self.generation = generation + 1;
        let ty = self.build(types, id, 0);
        self.inlining = saved;
        Some((name, ty))
    }

    fn build(&mut self, types: &Types<'_>, id: TyId, depth: usize) -> Box<TsType> {
        if self.budget == 0 {
            return keyword(Kw::Unknown);
        }
        self.budget -= 1;
        let node = types.get(id);
        match node {
            Ty::Kw(kw) => return keyword(*kw),
            Ty::JsonValue => return self.json_value.clone(),
            Ty::Lit(lit) => return literal(lit),
            Ty::Alias(index) => return self.alias(types, *index, depth),
            _ if depth >= MAX_DEPTH => {
                self.aliases += 1;
                let name = if self.placeholders {
                    format!("#{}", self.deferred.len())
                } else {
                    format!("DeepType{}", self.aliases)
                };
                let reference = type_ref(&name, None);
                self.defer(name, None, id, self.inlining.clone());
                return reference;
            }
            _ => {}
        }
        let depth = depth + 1;
        Box::new(match node {
            Ty::Union(members) => {
                let members = flatten(types, id, members, |t| matches!(t, Ty::Union(_)));
                let types = members
                    .iter()
                    .map(|m| self.build(types, *m, depth))
                    .collect();
                TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(
                    TsUnionType {
                        span: DUMMY_SP,
                        types,
                    },
                ))
            }
            Ty::Inter(members) => {
                let members = flatten(types, id, members, |t| matches!(t, Ty::Inter(_)));
                let types = members
                    .iter()
                    .map(|m| {
                        let paren = matches!(printed_node(types, *m), Ty::Union(_));
                        paren_if(paren, self.build(types, *m, depth))
                    })
                    .collect();
                TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsIntersectionType(
                    TsIntersectionType {
                        span: DUMMY_SP,
                        types,
                    },
                ))
            }
            Ty::Array(item) => TsType::TsArrayType(TsArrayType {
                span: DUMMY_SP,
                elem_type: paren_if(needs_paren(types, *item), self.build(types, *item, depth)),
            }),
            Ty::Tuple(elems) => TsType::TsTupleType(TsTupleType {
                span: DUMMY_SP,
                elem_types: elems
                    .iter()
                    .map(|elem| {
                        let inner = self.build(types, elem.ty, depth);
                        let ty = match elem.kind {
                            ElemKind::Required => inner,
                            ElemKind::Optional => {
                                Box::new(TsType::TsOptionalType(TsOptionalType {
                                    span: DUMMY_SP,
                                    type_ann: paren_if(needs_paren(types, elem.ty), inner),
                                }))
                            }
                            ElemKind::Rest => Box::new(TsType::TsRestType(TsRestType {
                                span: DUMMY_SP,
                                type_ann: inner,
                            })),
                        };
                        TsTupleElement {
                            span: DUMMY_SP,
                            label: None,
                            ty,
                        }
                    })
                    .collect(),
            }),
            // `Record<string, JsonValue>` has a name of its own in the SDK.
            Ty::Record(value) if matches!(types.get(*value), Ty::JsonValue) => {
                return self.json_object.clone();
            }
            Ty::Record(value) => TsType::TsTypeRef(TsTypeRef {
                span: DUMMY_SP,
                type_name: TsEntityName::Ident(self.record.clone()),
                type_params: Some(Box::new(TsTypeParamInstantiation {
                    span: DUMMY_SP,
                    params: vec![keyword(Kw::String), self.build(types, *value, depth)],
                })),
            }),
            Ty::Object(members) => TsType::TsTypeLit(TsTypeLit {
                span: DUMMY_SP,
                members: members
                    .iter()
                    .map(|m| {
                        let ty = self.build(types, m.ty, depth);
                        let span = match &m.doc {
                            Some(doc) => self.doc_span(doc),
                            None => DUMMY_SP,
                        };
                        property(span, m.key, m.optional, ty)
                    })
                    .collect(),
            }),
            Ty::Kw(_) | Ty::JsonValue | Ty::Lit(_) | Ty::Alias(_) => return keyword(Kw::Unknown),
        })
    }

    /// A reference to recursive alias `index`, declared (deferred) on first use.
    fn alias(&mut self, types: &Types<'_>, index: u32, depth: usize) -> Box<TsType> {
        if let Some(name) = self.names.get(&index) {
            return type_ref(name, None);
        }
        let Some(alias) = types.alias(index) else {
            return keyword(Kw::Unknown);
        };
        if alias.inline {
            if self.inlining.contains(&index) {
                return keyword(Kw::Unknown);
            }
            self.inlining.push(index);
            let ty = self.build(types, alias.body, depth);
            self.inlining.pop();
            return ty;
        }
        let mut base = String::from("$");
        for c in alias.hint.chars() {
            base.push(if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            });
        }
        let name = if self.placeholders {
            format!("#{}", self.deferred.len())
        } else {
            unique_name(&mut self.used, &base)
        };
        self.names.insert(index, name.clone());
        let reference = type_ref(&name, None);
        self.defer(name, Some(base), alias.body, Vec::new());
        reference
    }

    /// Declares alias `name` of node `id` later (inside the inline-only aliases `inlining`).
    fn defer(&mut self, name: String, base: Option<String>, id: TyId, inlining: Vec<u32>) {
        self.deferred.push(Deferred {
            name,
            base,
            generation: self.generation,
            id,
            inlining,
        });
    }
}

/// `base`, or `base` with the first number from 2 that makes it unused; marked used.
pub(crate) fn unique_name(used: &mut HashSet<String>, base: &str) -> String {
    let mut name = base.to_owned();
    let mut n = 1;
    while used.contains(&name) {
        n += 1;
        name = format!("{base}{n}");
    }
    used.insert(name.clone());
    name
}

/// The node printed for `id`: an inline-only recursive alias prints its body in place (up to a
/// few hops; a named alias prints its name).
fn printed_node<'t, 's>(types: &'t Types<'s>, id: TyId) -> &'t Ty<'s> {
    let mut node = types.get(id);
    for _ in 0..8 {
        match node {
            Ty::Alias(index) => match types.alias(*index) {
                Some(alias) if alias.inline => node = types.get(alias.body),
                _ => break,
            },
            _ => break,
        }
    }
    node
}

/// Whether an array item or optional tuple element is parenthesised: when it prints as a union
/// or an intersection (the reference's rule is textual — any `|` or `&` in the item's text, an
/// object's members and string literals included — and costs the SDK parentheses that change
/// nothing).
fn needs_paren(types: &Types<'_>, id: TyId) -> bool {
    matches!(printed_node(types, id), Ty::Union(_) | Ty::Inter(_))
}

/// The members of the union/intersection `id` (its own `members` when none is of the same
/// kind), with nested ones of the same kind spliced in.
fn flatten<'t>(
    types: &Types<'_>,
    id: TyId,
    members: &'t [TyId],
    same: impl Fn(&Ty<'_>) -> bool,
) -> Cow<'t, [TyId]> {
    if !members.iter().any(|m| same(types.get(*m))) {
        return Cow::Borrowed(members);
    }
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(next) = stack.pop() {
        match types.get(next) {
            Ty::Union(members) | Ty::Inter(members) if same(types.get(next)) => {
                stack.extend(members.iter().rev());
            }
            _ => out.push(next),
        }
    }
    Cow::Owned(out)
}

fn paren_if(paren: bool, ty: Box<TsType>) -> Box<TsType> {
    if paren {
        Box::new(TsType::TsParenthesizedType(TsParenthesizedType {
            span: DUMMY_SP,
            type_ann: ty,
        }))
    } else {
        ty
    }
}
