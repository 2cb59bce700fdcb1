//! The constant parts of a call's arguments against the tool's parameter schema.
//!
//! A fully constant argument (literals, object and array literals of literals) is validated
//! whole, with the tool's own validator. A partly constant object literal is walked alongside
//! the schema: a key the schema closes out, a required key missing from a literal without
//! spreads or computed keys, and every constant property value are checked; anything computed
//! is left to run time.

use dsh_tools::ToolDefinition;
use dsh_tools::json::js_number;
use dsh_tools::subset::{unknown_key_violation, validate_value};
use serde_json::{Map, Number, Value};
use swc_common::{Span, Spanned};
use swc_ecma_ast::{Expr, Lit, ObjectLit, Prop, PropName, PropOrSpread};

/// A violation and where it is.
pub(super) type Violation = (Span, String);

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

/// The violations of the constant parts of `argument` (the call's first argument).
pub(super) fn check(def: &ToolDefinition, argument: &Expr, span: Span) -> Vec<Violation> {
    if !def.validates_args() {
        return Vec::new(); // raw tools (MCP) validate their own input
    }
    let mut out = Vec::new();
    let root = def.parameters();
    match unwrap(argument) {
        Expr::Object(object) if plain_object(root).is_some() => {
            walk_object(object, root, "", Some(def.name()), span, &mut out);
        }
        other => {
            if let Some(value) = constant(other)
                && let Err(error) = def.validate_args(&value)
            {
                out.extend(error.violations.into_iter().map(|v| (span, v)));
            }
        }
    }
    out
}

/// The path of `key` under `path` (`""` is the arguments object itself).
fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The keywords of an object schema the walk checks completely (the others annotate).
const PLAIN: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "$schema",
    "$defs",
    "definitions",
];

/// `schema` as an object schema the walk checks completely (`None`: leave it to validation).
fn plain_object(schema: &Value) -> Option<&Map<String, Value>> {
    let object = schema.as_object()?;
    let plain = object
        .keys()
        .all(|keyword| PLAIN.contains(&keyword.as_str()));
    (plain && object.get("type").is_some_and(|t| t == "object")).then_some(object)
}

/// `tool` names the tool when `object` is the arguments object itself.
fn walk_object(
    object: &ObjectLit,
    schema: &Value,
    path: &str,
    tool: Option<&str>,
    span: Span,
    out: &mut Vec<Violation>,
) {
    let Some(schema) = plain_object(schema) else {
        return;
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let additional = schema.get("additionalProperties");
    let closed = additional == Some(&Value::Bool(false));
    let mut seen = Vec::new();
    let mut open = false;
    for prop in &object.props {
        let PropOrSpread::Prop(prop) = prop else {
            open = true;
            continue;
        };
        let (name, value, key_at) = match &**prop {
            Prop::KeyValue(kv) => match key(&kv.key) {
                Some(name) => (name, Some(&*kv.value), kv.key.span()),
                None => {
                    open = true;
                    continue;
                }
            },
            Prop::Shorthand(ident) => (ident.sym.to_string(), None, ident.span),
            _ => continue,
        };
        let object_path = path;
        let path = child(path, &name);
        match properties.get(&name) {
            Some(property) => {
                if let Some(value) = value {
                    walk_value(value, property, &path, value.span(), out);
                }
            }
            None if closed => {
                let declared: Vec<&str> = properties.keys().map(String::as_str).collect();
                let message = unknown_key_violation(tool, object_path, &name, &declared);
                out.push((key_at, message));
            }
            None => {
                if let (Some(schema @ Value::Object(_)), Some(value)) = (additional, value) {
                    walk_value(value, schema, &path, value.span(), out);
                }
            }
        }
        seen.push(name);
    }
    if open {
        return;
    }
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !seen.iter().any(|seen| seen == name) {
            out.push((
                span,
                format!("missing required property \"{}\"", child(path, name)),
            ));
        }
    }
}

fn walk_value(value: &Expr, schema: &Value, path: &str, span: Span, out: &mut Vec<Violation>) {
    match unwrap(value) {
        Expr::Object(object) if plain_object(schema).is_some() => {
            walk_object(object, schema, path, None, span, out);
        }
        other => {
            if let Some(constant) = constant(other) {
                let violations = validate_value(schema, &constant, path);
                out.extend(violations.into_iter().map(|message| (span, message)));
            }
        }
    }
}
