//! A Python tool call's arguments before the program runs: the dict display of
//! `tools.name({...})` as the shared walk's [`Arg`] (constant parts checked against the tool's
//! schema, in the same words as in TypeScript), and the calls that cannot work whatever the
//! values (keyword arguments, no argument, a tool only the model may call).

use dsh_tools::ToolDefinition;
use ruff_python_ast::{self as ast, Expr, Number, UnaryOp};
use ruff_text_size::{Ranged, TextRange};
use serde_json::Value;

use super::convert::MAX_SAFE_INTEGER;
use crate::precheck::literal::{self, Arg, Entry, Shape};

/// One finding: where, what, and what to write instead (may be empty).
pub(super) type CallFinding = (TextRange, String, String);

/// The findings of `call`, a call of the tool `def` written `shown` (`tools.name`).
pub(super) fn findings(
    call: &ast::ExprCall,
    def: &ToolDefinition,
    shown: &str,
) -> Vec<CallFinding> {
    let at = call.func.range();
    if !def.callers().code() {
        let message = crate::precheck::native_only(shown);
        return vec![(at, message, String::new())];
    }
    let arguments = &call.arguments;
    if arguments.args.iter().any(Expr::is_starred_expr) {
        return Vec::new(); // `*args`: known only at run time
    }
    match (&*arguments.args, arguments.keywords.as_slice()) {
        ([only], []) => literal::check(def, &arg(only))
            .into_iter()
            .map(|(at, message)| (at, format!("{shown}: {message}"), String::new()))
            .collect(),
        (_, keywords) => {
            let keys: Vec<String> = keywords
                .iter()
                .filter_map(|k| k.arg.as_ref())
                .map(|k| format!("\"{k}\": …"))
                .collect();
            let hint = if keys.is_empty() || !arguments.args.is_empty() {
                format!("e.g. `await {shown}({{}})`")
            } else {
                format!("write `await {shown}({{{}}})`", keys.join(", "))
            };
            let message = if keywords.is_empty() {
                format!(
                    "{shown} takes one dict of arguments (called with {})",
                    match arguments.args.len() {
                        0 => "none".to_owned(),
                        n => n.to_string(),
                    }
                )
            } else {
                format!("{shown} takes one dict of arguments, not keyword arguments")
            };
            vec![(arguments.range, message, hint)]
        }
    }
}

/// The argument `expr` as the shared walk sees it.
fn arg(expr: &Expr) -> Arg<TextRange> {
    let shape = match expr {
        Expr::Dict(dict) => {
            let mut entries = Vec::new();
            let mut open = false;
            for item in &dict.items {
                match &item.key {
                    Some(Expr::StringLiteral(key)) => entries.push(Entry {
                        key: key.value.to_str().to_owned(),
                        key_at: key.range,
                        value: Some(arg(&item.value)),
                    }),
                    // `**other`, or a key that is not a string literal.
                    _ => open = true,
                }
            }
            Shape::Object { entries, open }
        }
        other => constant(other).map_or(Shape::Computed, Shape::Constant),
    };
    Arg {
        at: expr.range(),
        shape,
    }
}

/// The JSON value of a constant expression (`None`: computed, or not lossless JSON).
fn constant(expr: &Expr) -> Option<Value> {
    match expr {
        Expr::StringLiteral(s) => Some(Value::String(s.value.to_str().to_owned())),
        Expr::BooleanLiteral(b) => Some(Value::Bool(b.value)),
        Expr::NoneLiteral(_) => Some(Value::Null),
        Expr::NumberLiteral(n) => number(&n.value, false),
        Expr::UnaryOp(u) if u.op == UnaryOp::USub => match &*u.operand {
            Expr::NumberLiteral(n) => number(&n.value, true),
            _ => None,
        },
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => elts
            .iter()
            .map(|e| arg(e).constant())
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expr::Dict(_) => arg(expr).constant(),
        _ => None,
    }
}

/// A number literal (negated) as lossless JSON: integers within ±(2^53 − 1), finite floats but
/// `-0.0`.
fn number(number: &Number, negated: bool) -> Option<Value> {
    match number {
        Number::Int(int) => {
            let value = int.as_i64()?;
            let value = if negated { -value } else { value };
            (value.abs() <= MAX_SAFE_INTEGER).then(|| Value::from(value))
        }
        Number::Float(value) => {
            let value = if negated { -value } else { *value };
            if value == 0.0 && value.is_sign_negative() {
                return None;
            }
            serde_json::Number::from_f64(value).map(Value::Number)
        }
        Number::Complex { .. } => None,
    }
}
