//! A TypeScript call's argument as the static check's [`Arg`]: literals, object and array
//! literals of literals are constant; an object literal keeps its literal keys (a spread or a
//! computed key opens it); anything else is computed. The walk against the schema is
//! [`super::literal`]'s, shared with Python.

use dsh_tools::json::js_number;
use serde_json::{Map, Number, Value};
use swc_common::{Span, Spanned};
use swc_ecma_ast::{Expr, Lit, ObjectLit, Prop, PropName, PropOrSpread};

use super::literal::{Arg, Entry, Shape};

/// The JSON value of a constant expression (`None`: computed, or not lossless JSON).
pub(super) fn constant(expr: &Expr) -> Option<Value> {
    match unwrap(expr) {
        Expr::Lit(Lit::Str(s)) => s.value.as_str().map(|s| Value::String(s.to_owned())),
        Expr::Lit(Lit::Num(n)) => number(n.value),
        Expr::Lit(Lit::Bool(b)) => Some(Value::Bool(b.value)),
        Expr::Lit(Lit::Null(_)) => Some(Value::Null),
        Expr::Tpl(tpl) if tpl.exprs.is_empty() => {
            let quasi = tpl.quasis.first()?;
            Some(Value::String(quasi.cooked.as_ref()?.as_str()?.to_owned()))
        }
        Expr::Unary(unary) if unary.op == swc_ecma_ast::UnaryOp::Minus => {
            let Expr::Lit(Lit::Num(n)) = unwrap(&unary.arg) else {
                return None;
            };
            number(-n.value)
        }
        Expr::Array(array) => array
            .elems
            .iter()
            .map(|elem| match elem {
                Some(elem) if elem.spread.is_none() => constant(&elem.expr),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Object(object) => {
            let mut map = Map::new();
            for prop in &object.props {
                let PropOrSpread::Prop(prop) = prop else {
                    return None;
                };
                let Prop::KeyValue(kv) = &**prop else {
                    return None;
                };
                map.insert(key(&kv.key)?, constant(&kv.value)?);
            }
            Some(Value::Object(map))
        }
        _ => None,
    }
}

/// The expression under parentheses and type-only wrappers (`as`, `satisfies`, `!`).
fn unwrap(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(inner) => unwrap(&inner.expr),
        Expr::TsAs(inner) => unwrap(&inner.expr),
        Expr::TsSatisfies(inner) => unwrap(&inner.expr),
        Expr::TsConstAssertion(inner) => unwrap(&inner.expr),
        Expr::TsNonNull(inner) => unwrap(&inner.expr),
        other => other,
    }
}

/// A lossless JSON number (integers up to 2^53 as integers; no `-0`, no NaN/∞).
fn number(value: f64) -> Option<Value> {
    if !value.is_finite() || (value == 0.0 && value.is_sign_negative()) {
        return None;
    }
    if value.fract() == 0.0 && value.abs() <= 9_007_199_254_740_991.0 {
        return Some(Value::Number(Number::from(value as i64)));
    }
    Number::from_f64(value).map(Value::Number)
}

/// A literal property key as JavaScript spells it (computed keys are not known).
fn key(name: &PropName) -> Option<String> {
    match name {
        PropName::Ident(ident) => Some(ident.sym.to_string()),
        PropName::Str(s) => s.value.as_str().map(str::to_owned),
        PropName::Num(n) => Some(js_number(n.value)),
        PropName::Computed(_) | PropName::BigInt(_) => None,
    }
}

/// The argument `expr` as the shared walk sees it.
pub(super) fn arg(expr: &Expr) -> Arg<Span> {
    let at = expr.span();
    let shape = match unwrap(expr) {
        Expr::Object(object) => object_shape(object),
        other => constant(other).map_or(Shape::Computed, Shape::Constant),
    };
    Arg { at, shape }
}

fn object_shape(object: &ObjectLit) -> Shape<Span> {
    let mut entries = Vec::new();
    let mut open = false;
    for prop in &object.props {
        let PropOrSpread::Prop(prop) = prop else {
            open = true;
            continue;
        };
        match &**prop {
            Prop::KeyValue(kv) => match key(&kv.key) {
                Some(name) => entries.push(Entry {
                    key: name,
                    key_at: kv.key.span(),
                    value: Some(arg(&kv.value)),
                }),
                None => open = true,
            },
            Prop::Shorthand(ident) => entries.push(Entry {
                key: ident.sym.to_string(),
                key_at: ident.span,
                value: None,
            }),
            // A getter or a method: a key whose value only running tells.
            _ => open = true,
        }
    }
    Shape::Object { entries, open }
}
