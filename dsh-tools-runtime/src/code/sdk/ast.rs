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

use std::collections::{HashMap, HashSet};

use dsh_tools::json::json_quote;
use swc_common::comments::{Comment, CommentKind, Comments, SingleThreadedComments};
use swc_common::{BytePos, DUMMY_SP, Span};
use swc_ecma_ast::{
    Bool, Expr, Ident, Lit as JsLit, Number, Str, TsArrayType, TsEntityName, TsIntersectionType,
    TsKeywordType, TsKeywordTypeKind, TsLit, TsLitType, TsOptionalType, TsParenthesizedType,
    TsPropertySignature, TsRestType, TsTupleElement, TsTupleType, TsType, TsTypeAnn, TsTypeElement,
    TsTypeLit, TsTypeParamInstantiation, TsTypeRef, TsUnionOrIntersectionType, TsUnionType,
};

use super::ir::{ElemKind, Kw, Lit, Ty, TyId, Types, is_bare_key};
use super::text::PRINT_BUDGET;

/// How deep one declaration's types may nest before the rest moves to an alias.
pub(crate) const MAX_DEPTH: usize = 24;

/// Builds `TsType`s from [`Types`], attaching doc comments to `comments`.
pub(crate) struct AstBuilder<'c> {
    comments: &'c SingleThreadedComments,
    next_pos: u32,
    /// Aliases to declare: `(name, node, inlined recursive aliases around it)`, in creation order.
    pub(crate) deferred: Vec<(String, TyId, Vec<u32>)>,
    /// The inline-only recursive aliases whose body is being built (they recur as `unknown`).
    inlining: Vec<u32>,
    aliases: usize,
    /// The declared name of each recursive alias.
    names: HashMap<u32, String>,
    used: HashSet<String>,
    budget: usize,
    /// `JsonValue` and `Record`, made once (swc interns identifier text on every creation).
    json_value: Box<TsType>,
    record: Ident,
}

impl<'c> AstBuilder<'c> {
    pub(crate) fn new(comments: &'c SingleThreadedComments) -> Self {
        AstBuilder {
            comments,
            next_pos: 2,
            deferred: Vec::new(),
            inlining: Vec::new(),
            aliases: 0,
            names: HashMap::new(),
            used: HashSet::new(),
            budget: PRINT_BUDGET,
            json_value: type_ref("JsonValue", None),
            record: ident("Record"),
        }
    }

    /// A fresh span whose start carries `doc` as a `/** … */` leading comment.
    pub(crate) fn doc_span(&mut self, doc: &str) -> Span {
        let pos = BytePos(self.next_pos);
        self.next_pos = self.next_pos.saturating_add(2);
        self.comments.add_leading(
            pos,
            Comment {
                kind: CommentKind::Block,
                span: DUMMY_SP,
                text: {
                    let mut text = String::with_capacity(doc.len() + 3);
                    text.push_str("* ");
                    text.push_str(doc);
                    text.push(' ');
                    text.into()
                },
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
        let (name, id, inlining) = self.deferred.get(index).cloned()?;
        let saved = std::mem::replace(&mut self.inlining, inlining);
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
                let name = format!("DeepType{}", self.aliases);
                let reference = type_ref(&name, None);
                self.deferred.push((name, id, self.inlining.clone()));
                return reference;
            }
            _ => {}
        }
        let depth = depth + 1;
        Box::new(match node {
            Ty::Union(_) => {
                let members = flatten(types, id, |t| matches!(t, Ty::Union(_)));
                let types = members
                    .into_iter()
                    .map(|m| self.build(types, m, depth))
                    .collect();
                TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(
                    TsUnionType {
                        span: DUMMY_SP,
                        types,
                    },
                ))
            }
            Ty::Inter(_) => {
                let members = flatten(types, id, |t| matches!(t, Ty::Inter(_)));
                let types = members
                    .into_iter()
                    .map(|m| {
                        let paren = matches!(types.get(m), Ty::Union(_)) && !is_alias(types, m);
                        paren_if(paren, self.build(types, m, depth))
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
        let mut name = base.clone();
        let mut n = 1;
        while self.used.contains(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        self.used.insert(name.clone());
        self.names.insert(index, name.clone());
        self.deferred.push((name.clone(), alias.body, Vec::new()));
        type_ref(&name, None)
    }
}

fn is_alias(types: &Types<'_>, id: TyId) -> bool {
    matches!(types.get(id), Ty::Alias(_))
}

/// Whether an array item or optional tuple element is parenthesised: when its text contains `|`
/// or `&` (the reference rule), except for alias names.
fn needs_paren(types: &Types<'_>, id: TyId) -> bool {
    types.bar_amp(id) && !is_alias(types, id)
}

/// The members of the union/intersection `id`, with nested ones of the same kind spliced in.
fn flatten(types: &Types<'_>, id: TyId, same: impl Fn(&Ty<'_>) -> bool) -> Vec<TyId> {
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
    out
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

/// A keyword type.
pub(crate) fn keyword(kw: Kw) -> Box<TsType> {
    let kind = match kw {
        Kw::String => TsKeywordTypeKind::TsStringKeyword,
        Kw::Number => TsKeywordTypeKind::TsNumberKeyword,
        Kw::Boolean => TsKeywordTypeKind::TsBooleanKeyword,
        Kw::Null => TsKeywordTypeKind::TsNullKeyword,
        Kw::Unknown => TsKeywordTypeKind::TsUnknownKeyword,
        Kw::Never => TsKeywordTypeKind::TsNeverKeyword,
    };
    Box::new(TsType::TsKeywordType(TsKeywordType {
        span: DUMMY_SP,
        kind,
    }))
}

/// A literal type with the `JSON.stringify` text as its raw text.
pub(crate) fn literal(lit: &Lit<'_>) -> Box<TsType> {
    let lit = match lit {
        Lit::Str(s) => TsLit::Str(string(s)),
        Lit::Num(text, value) => TsLit::Number(Number {
            span: DUMMY_SP,
            value: *value,
            raw: Some(text.as_str().into()),
        }),
        Lit::Bool(value) => TsLit::Bool(Bool {
            span: DUMMY_SP,
            value: *value,
        }),
    };
    Box::new(TsType::TsLitType(TsLitType {
        span: DUMMY_SP,
        lit,
    }))
}

/// A string literal printed with `JSON.stringify` quoting.
pub(crate) fn string(s: &str) -> Str {
    Str {
        span: DUMMY_SP,
        value: s.into(),
        raw: Some(json_quote(s).into()),
    }
}

/// An identifier.
pub(crate) fn ident(name: &str) -> Ident {
    Ident::new_no_ctxt(name.into(), DUMMY_SP)
}

/// A type reference `name<params…>`.
#[allow(
    clippy::vec_box,
    reason = "swc's TsTypeParamInstantiation holds Vec<Box<TsType>>"
)]
pub(crate) fn type_ref(name: &str, params: Option<Vec<Box<TsType>>>) -> Box<TsType> {
    Box::new(TsType::TsTypeRef(TsTypeRef {
        span: DUMMY_SP,
        type_name: TsEntityName::Ident(ident(name)),
        type_params: params.map(|params| {
            Box::new(TsTypeParamInstantiation {
                span: DUMMY_SP,
                params,
            })
        }),
    }))
}

/// A type annotation.
pub(crate) fn annotation(ty: Box<TsType>) -> Box<TsTypeAnn> {
    Box::new(TsTypeAnn {
        span: DUMMY_SP,
        type_ann: ty,
    })
}

/// A property signature `key?: ty`; the key is bare or JSON-quoted (`docs/CONTRACTS.md`, "The
/// SDK").
pub(crate) fn property(span: Span, key: &str, optional: bool, ty: Box<TsType>) -> TsTypeElement {
    let key = if is_bare_key(key) {
        Box::new(Expr::Ident(ident(key)))
    } else {
        Box::new(Expr::Lit(JsLit::Str(string(key))))
    };
    TsTypeElement::TsPropertySignature(TsPropertySignature {
        span,
        readonly: false,
        key,
        computed: false,
        optional,
        type_ann: Some(annotation(ty)),
    })
}
