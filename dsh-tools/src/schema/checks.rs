//! Applying [`Checks`] (constraint attributes) to the node they reach, intersected with the
//! type's own bounds: the narrower of the two always wins, so a value that validates still
//! deserialises.

use serde_json::{Map, Value};

use super::compile::literal;
use super::spec::{Checks, Literal, NumberBounds, SizeBounds};
use crate::error::JsonSchemaError;

fn fail<T>(message: String) -> Result<T, JsonSchemaError> {
    Err(JsonSchemaError::new(vec![message]))
}

/// `outer` (the wrappers' checks) over `own` (the node's): the tighter bound of each pair, the
/// outer pattern/format where both set one.
pub(super) fn merge(own: Checks, outer: Checks) -> Checks {
    if outer.is_empty() {
        return own;
    }
    Checks {
        minimum: tighter(own.minimum, outer.minimum, true),
        maximum: tighter(own.maximum, outer.maximum, false),
        exclusive_minimum: tighter(own.exclusive_minimum, outer.exclusive_minimum, true),
        exclusive_maximum: tighter(own.exclusive_maximum, outer.exclusive_maximum, false),
        multiple_of: outer.multiple_of.or(own.multiple_of),
        min_length: max_opt(own.min_length, outer.min_length),
        max_length: min_opt(own.max_length, outer.max_length),
        pattern: outer.pattern.or(own.pattern),
        format: outer.format.or(own.format),
        unique_items: own.unique_items || outer.unique_items,
    }
}

fn as_f64(literal: &Literal) -> f64 {
    match *literal {
        Literal::Int(i) => i as f64,
        Literal::UInt(u) => u as f64,
        Literal::Float(f) => f,
        Literal::Null | Literal::Bool(_) | Literal::Str(_) => f64::NAN,
    }
}

/// The tighter of two bounds: the larger lower bound or the smaller upper bound.
fn tighter(a: Option<Literal>, b: Option<Literal>, lower: bool) -> Option<Literal> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let a_wins = if lower {
                as_f64(&a) >= as_f64(&b)
            } else {
                as_f64(&a) <= as_f64(&b)
            };
            Some(if a_wins { a } else { b })
        }
        (a, b) => a.or(b),
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn has_numeric(checks: &Checks) -> bool {
    checks.minimum.is_some()
        || checks.maximum.is_some()
        || checks.exclusive_minimum.is_some()
        || checks.exclusive_maximum.is_some()
        || checks.multiple_of.is_some()
}

fn has_length(checks: &Checks) -> bool {
    checks.min_length.is_some() || checks.max_length.is_some()
}

fn has_textual(checks: &Checks) -> bool {
    checks.pattern.is_some() || checks.format.is_some()
}

/// Fails when any check is set on a node none applies to.
pub(super) fn none_apply(checks: &Checks, path: &str, what: &str) -> Result<(), JsonSchemaError> {
    if checks.is_empty() {
        return Ok(());
    }
    fail(format!(
        "{path}: constraint attributes do not apply to {what} (`range` applies to numbers, `length` to strings, arrays and maps, `regex`/`email`/`url`/`format` to strings)"
    ))
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
///
/// `shown` leaves out the bounds that only restate the Rust type's width (`maximum: 4294967295`
/// on a `u32`, ±(2^53 − 1) on 64-bit integers): a type's own minimum is kept only when it is 0
/// or 1 (the sign, or `NonZero*`), a bound from a constraint attribute always. The schema a
/// tool validates with keeps every bound (`docs/CONTRACTS.md`, "Arguments").
pub(super) fn numeric(
    out: &mut Map<String, Value>,
    bounds: NumberBounds,
    checks: &Checks,
    path: &str,
    shown: bool,
) -> Result<(), JsonSchemaError> {
    if has_length(checks) || has_textual(checks) || checks.unique_items {
        return fail(format!(
            "{path}: `length`, `regex`, `email`, `url` and `format` do not apply to a number"
        ));
    }
    let minimum = tighter(bounds.minimum, checks.minimum, true);
    let maximum = tighter(bounds.maximum, checks.maximum, false);
    let width_only = |bound: Option<Literal>, own: Option<Literal>, lower: bool| {
        shown
            && bound.is_some()
            && bound == own
            && !(lower && bound.is_some_and(|b| matches!(as_f64(&b), 0.0 | 1.0)))
    };
    let entries = [
        (
            "minimum",
            minimum.filter(|_| !width_only(minimum, bounds.minimum, true)),
        ),
        (
            "maximum",
            maximum.filter(|_| !width_only(maximum, bounds.maximum, false)),
        ),
        ("exclusiveMinimum", checks.exclusive_minimum),
        ("exclusiveMaximum", checks.exclusive_maximum),
        ("multipleOf", checks.multiple_of),
    ];
    for (key, value) in entries {
        if let Some(value) = value {
            out.insert(key.into(), literal(&value, path)?);
        }
    }
    Ok(())
}

/// `minLength`, `maxLength`, `pattern`, `format`.
pub(super) fn string(
    out: &mut Map<String, Value>,
    size: SizeBounds,
    checks: &Checks,
    path: &str,
) -> Result<(), JsonSchemaError> {
    if has_numeric(checks) || checks.unique_items {
        return fail(format!("{path}: `range` does not apply to a string"));
    }
    if let Some(min) = max_opt(size.min, checks.min_length) {
        out.insert("minLength".into(), min.into());
    }
    if let Some(max) = min_opt(size.max, checks.max_length) {
        out.insert("maxLength".into(), max.into());
    }
    if let Some(pattern) = checks.pattern {
        out.insert("pattern".into(), pattern.into());
    }
    if let Some(format) = checks.format {
        out.insert("format".into(), format.into());
    }
    Ok(())
}

/// `minItems`, `maxItems`, `uniqueItems`.
pub(super) fn array(
    out: &mut Map<String, Value>,
    size: SizeBounds,
    checks: &Checks,
    path: &str,
) -> Result<(), JsonSchemaError> {
    if has_numeric(checks) || has_textual(checks) {
        return fail(format!(
            "{path}: only `length` applies to an array (`range`, `regex` and `format` apply to its items' types)"
        ));
    }
    if let Some(min) = max_opt(size.min, checks.min_length) {
        out.insert("minItems".into(), min.into());
    }
    if let Some(max) = min_opt(size.max, checks.max_length) {
        out.insert("maxItems".into(), max.into());
    }
    if checks.unique_items {
        out.insert("uniqueItems".into(), true.into());
    }
    Ok(())
}

/// `minProperties`, `maxProperties` (a map's number of entries).
pub(super) fn map(
    out: &mut Map<String, Value>,
    checks: &Checks,
    path: &str,
) -> Result<(), JsonSchemaError> {
    if has_numeric(checks) || has_textual(checks) || checks.unique_items {
        return fail(format!(
            "{path}: only `length` applies to a map (`range`, `regex` and `format` apply to its values' types)"
        ));
    }
    if let Some(min) = checks.min_length {
        out.insert("minProperties".into(), min.into());
    }
    if let Some(max) = checks.max_length {
        out.insert("maxProperties".into(), max.into());
    }
    Ok(())
}
