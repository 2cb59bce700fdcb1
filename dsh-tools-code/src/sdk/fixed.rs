//! The SDK's fixed declarations (`docs/CONTRACTS.md`, "The SDK"): `JsonValue` and `JsonObject`
//! before the two maps; `ToolName`, `ToolCallError` and `tools` after them.

use swc_common::DUMMY_SP;
use swc_ecma_ast::{
    BindingIdent, Class, ClassDecl, ClassMember, ClassProp, Decl, Expr, IdentName, ModuleItem, Pat,
    PropName, TsConditionalType, TsFnOrConstructorType, TsFnParam, TsFnType, TsIndexSignature,
    TsIndexedAccessType, TsMappedType, TsType, TsTypeElement, TsTypeLit, TsTypeOperator,
    TsTypeOperatorOp, TsTypeParam, TsUnionOrIntersectionType, TsUnionType, VarDecl, VarDeclKind,
    VarDeclarator,
};

use super::ast::{annotation, ident, keyword, string, type_ref};
use super::ir::Kw;
use super::render::{alias, decl};

/// The declarations before the two maps: `JsonValue` and `JsonObject`.
pub(crate) fn head_items() -> Vec<ModuleItem> {
    vec![
        alias("JsonValue", json_value()),
        alias("JsonObject", json_object()),
    ]
}

/// The declarations after the two maps: `ToolName`, `ToolCallError`, `tools`.
pub(crate) fn tail_items() -> Vec<ModuleItem> {
    vec![
        alias(
            "ToolName",
            Box::new(TsType::TsTypeOperator(TsTypeOperator {
                span: DUMMY_SP,
                op: TsTypeOperatorOp::KeyOf,
                type_ann: type_ref("ToolArgsMap", None),
            })),
        ),
        tool_call_error(),
        tools_const(),
    ]
}

/// `null | boolean | number | string | JsonValue[] | JsonObject`.
fn json_value() -> Box<TsType> {
    let types = vec![
        keyword(Kw::Null),
        keyword(Kw::Boolean),
        keyword(Kw::Number),
        keyword(Kw::String),
        Box::new(TsType::TsArrayType(swc_ecma_ast::TsArrayType {
            span: DUMMY_SP,
            elem_type: type_ref("JsonValue", None),
        })),
        type_ref("JsonObject", None),
    ];
    Box::new(TsType::TsUnionOrIntersectionType(
        TsUnionOrIntersectionType::TsUnionType(TsUnionType {
            span: DUMMY_SP,
            types,
        }),
    ))
}

/// `{ [key: string]: JsonValue }`: what the SDK writes for `Record<string, JsonValue>` (an open
/// object's `& JsonObject`, an object without properties).
fn json_object() -> Box<TsType> {
    let index = TsTypeElement::TsIndexSignature(TsIndexSignature {
        params: vec![TsFnParam::Ident(BindingIdent {
            id: ident("key"),
            type_ann: Some(annotation(keyword(Kw::String))),
        })],
        type_ann: Some(annotation(type_ref("JsonValue", None))),
        readonly: false,
        is_static: false,
        span: DUMMY_SP,
    });
    Box::new(TsType::TsTypeLit(TsTypeLit {
        span: DUMMY_SP,
        members: vec![index],
    }))
}

/// `declare class ToolCallError extends Error { readonly name: "ToolCallError"; readonly
/// toolName: ToolName; }`.
fn tool_call_error() -> ModuleItem {
    let prop = |name: &str, ty: Box<TsType>| {
        ClassMember::ClassProp(ClassProp {
            key: PropName::Ident(IdentName::new(name.into(), DUMMY_SP)),
            type_ann: Some(annotation(ty)),
            readonly: true,
            ..ClassProp::default()
        })
    };
    let name_ty = Box::new(TsType::TsLitType(swc_ecma_ast::TsLitType {
        span: DUMMY_SP,
        lit: swc_ecma_ast::TsLit::Str(string("ToolCallError")),
    }));
    decl(Decl::Class(ClassDecl {
        ident: ident("ToolCallError"),
        declare: true,
        class: Box::new(Class {
            body: vec![
                prop("name", name_ty),
                prop("toolName", type_ref("ToolName", None)),
            ],
            super_class: Some(Box::new(Expr::Ident(ident("Error")))),
            ..Class::default()
        }),
    }))
}

/// `declare const tools: { [K in ToolName]: (args: ToolArgsMap[K]) => Promise<K extends keyof
/// ToolOutputMap ? ToolOutputMap[K] : JsonValue>; }`.
fn tools_const() -> ModuleItem {
    let indexed = |map: &str| {
        Box::new(TsType::TsIndexedAccessType(TsIndexedAccessType {
            span: DUMMY_SP,
            readonly: false,
            obj_type: type_ref(map, None),
            index_type: type_ref("K", None),
        }))
    };
    // `K extends keyof ToolOutputMap ? ToolOutputMap[K] : JsonValue`: a tool whose output is
    // any JSON value has no `ToolOutputMap` member.
    let output = Box::new(TsType::TsConditionalType(TsConditionalType {
        span: DUMMY_SP,
        check_type: type_ref("K", None),
        extends_type: Box::new(TsType::TsTypeOperator(TsTypeOperator {
            span: DUMMY_SP,
            op: TsTypeOperatorOp::KeyOf,
            type_ann: type_ref("ToolOutputMap", None),
        })),
        true_type: indexed("ToolOutputMap"),
        false_type: type_ref("JsonValue", None),
    }));
    let function = TsType::TsFnOrConstructorType(TsFnOrConstructorType::TsFnType(TsFnType {
        span: DUMMY_SP,
        params: vec![TsFnParam::Ident(BindingIdent {
            id: ident("args"),
            type_ann: Some(annotation(indexed("ToolArgsMap"))),
        })],
        type_params: None,
        type_ann: annotation(type_ref("Promise", Some(vec![output]))),
    }));
    let mapped = TsType::TsMappedType(TsMappedType {
        span: DUMMY_SP,
        readonly: None,
        type_param: TsTypeParam {
            span: DUMMY_SP,
            name: ident("K"),
            is_in: false,
            is_out: false,
            is_const: false,
            constraint: Some(type_ref("ToolName", None)),
            default: None,
        },
        name_type: None,
        optional: None,
        type_ann: Some(Box::new(function)),
    });
    decl(Decl::Var(Box::new(VarDecl {
        span: DUMMY_SP,
        ctxt: Default::default(),
        kind: VarDeclKind::Const,
        declare: true,
        decls: vec![VarDeclarator {
            span: DUMMY_SP,
            name: Pat::Ident(BindingIdent {
                id: ident("tools"),
                type_ann: Some(annotation(Box::new(mapped))),
            }),
            init: None,
            definite: false,
        }],
    })))
}
