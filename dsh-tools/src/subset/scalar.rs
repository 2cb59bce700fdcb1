//! Leaf checks shared by the fast check and the message builder: scalar types, literals, bounds.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::compiled::{ArrayNode, Bound, Literals, ScalarNode, ScalarType};
use crate::json::{is_integer, is_lossless_number, number_to_f64, numbers_equal};

impl Bound {
    /// `n` compared with the bound as JavaScript compares two numbers (see `json::cmp_numbers`).
    #[inline(always)]
    pub(crate) fn cmp_number(&self, n: &Number) -> Ordering {
        cmp_doubles(number_to_f64(n), self.double)
    }

    /// A count (length) compared with the bound. Counts are far below 2^53, so the conversion to a
    /// double is exact.
    #[inline(always)]
    pub(crate) fn cmp_count(&self, count: usize) -> Ordering {
        cmp_doubles(count as f64, self.double)
    }
}

/// Two finite doubles compared (JSON numbers are never NaN).
#[inline(always)]
fn cmp_doubles(x: f64, y: f64) -> Ordering {
    x.partial_cmp(&y).unwrap_or_else(|| x.total_cmp(&y))
}

/// `minItems` / `maxItems`.
#[inline(always)]
pub(crate) fn array_bounds_ok(node: &ArrayNode, length: usize) -> bool {
    node.min_items
        .as_ref()
        .is_none_or(|min| min.cmp_count(length) != Ordering::Less)
        && node
            .max_items
            .as_ref()
            .is_none_or(|max| max.cmp_count(length) != Ordering::Greater)
}

/// Whether the value has the node's scalar type (REFERENCE §3 rule 5).
#[inline(always)]
pub(crate) fn scalar_type_ok(ty: ScalarType, value: &Value) -> bool {
    match (ty, value) {
        (ScalarType::String, Value::String(_))
        | (ScalarType::Boolean, Value::Bool(_))
        | (ScalarType::Null, Value::Null) => true,
        (ScalarType::Number, Value::Number(n)) => is_lossless_number(n),
        (ScalarType::Integer, Value::Number(n)) => is_lossless_number(n) && is_integer(n),
        _ => false,
    }
}

/// Whether the scalar value is one of the literals (numbers compared mathematically).
#[inline(always)]
pub(crate) fn literal_ok(literals: Option<&Literals>, value: &Value) -> bool {
    let Some(literals) = literals else {
        return true;
    };
    let mut candidates = literals.values.iter();
    match value {
        Value::String(s) => candidates.any(|c| matches!(c, Value::String(x) if short_eq(x, s))),
        Value::Number(n) => {
            candidates.any(|c| matches!(c, Value::Number(x) if numbers_equal(x, n)))
        }
        Value::Bool(b) => candidates.any(|c| c.as_bool() == Some(*b)),
        Value::Null => candidates.any(Value::is_null),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// The magnitude a bound constrains: the number itself, or a string's length in code points.
#[inline(always)]
pub(crate) fn bound_ord(value: &Value, bound: &Bound) -> Option<Ordering> {
    match value {
        Value::Number(n) => Some(bound.cmp_number(n)),
        Value::String(s) => Some(bound.cmp_count(s.chars().count())),
        _ => None,
    }
}

/// Type, `enum`, `const` and bounds of a scalar.
#[inline(always)]
pub(crate) fn scalar_ok(node: &ScalarNode, value: &Value) -> bool {
    scalar_type_ok(node.ty, value)
        && literal_ok(node.enumeration.as_ref(), value)
        && literal_ok(node.constant.as_ref(), value)
        && node
            .min
            .as_ref()
            .is_none_or(|min| bound_ord(value, min) != Some(Ordering::Less))
        && node
            .max
            .as_ref()
            .is_none_or(|max| bound_ord(value, max) != Some(Ordering::Greater))
}

/// Annotation-only, decided without looking inside a non-empty container.
#[inline(always)]
pub(crate) fn shallow_any(value: &Value) -> Option<bool> {
    match value {
        Value::Number(n) => Some(is_lossless_number(n)),
        Value::Array(elements) if !elements.is_empty() => None,
        Value::Object(map) if !map.is_empty() => None,
        _ => Some(true),
    }
}

/// String equality without a library call for the short keys of tool arguments: up to 16 bytes
/// are compared with two overlapping word loads.
#[inline(always)]
pub(crate) fn short_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0 => true,
        1..4 => {
            a.first() == b.first()
                && a.get(a.len() / 2) == b.get(b.len() / 2)
                && a.last() == b.last()
        }
        4..8 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        8..=16 => {
            a.first_chunk::<8>() == b.first_chunk::<8>()
                && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}
