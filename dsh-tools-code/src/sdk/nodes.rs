//! Small swc AST node constructors of the SDK declarations.

use dsh_tools::json::json_quote;
use swc_common::{DUMMY_SP, Span};
use swc_ecma_ast::{
    Bool, Expr, Ident, Lit as JsLit, Number, Str, TsEntityName, TsKeywordType, TsKeywordTypeKind,
    TsLit, TsLitType, TsPropertySignature, TsType, TsTypeAnn, TsTypeElement,
    TsTypeParamInstantiation, TsTypeRef,
};

use super::ir::{Kw, Lit, is_bare_key};

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
#[expect(
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
