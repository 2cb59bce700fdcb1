//! Leaf checks shared by the fast check and the message builder: scalar types, literals, bounds.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::compiled::{ArrayNode, Bound, Literals, ScalarExtra, ScalarNode, ScalarType};
use super::unique::first_duplicate;
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

/// `minItems` / `maxItems`, the closed tuple's length and `uniqueItems`.
#[inline(always)]
pub(crate) fn array_ok(node: &ArrayNode, elements: &[Value]) -> bool {
    let length = elements.len();
    node.min_items
        .as_ref()
        .is_none_or(|min| min.cmp_count(length) != Ordering::Less)
        && node
            .max_items
            .as_ref()
            .is_none_or(|max| max.cmp_count(length) != Ordering::Greater)
        && !(node.closed && length > node.prefix.len())
        && !(node.unique && first_duplicate(elements).is_some())
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
        && node
            .extra
            .as_deref()
            .is_none_or(|extra| extra_ok(extra, value))
}

/// The rarer assertions of a scalar that passed its type test.
#[inline(never)]
pub(crate) fn extra_ok(extra: &ScalarExtra, value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            extra
                .exclusive_min
                .as_ref()
                .is_none_or(|min| min.cmp_number(n) == Ordering::Greater)
                && extra
                    .exclusive_max
                    .as_ref()
                    .is_none_or(|max| max.cmp_number(n) == Ordering::Less)
                && extra
                    .multiple_of
                    .as_ref()
                    .is_none_or(|m| is_multiple(number_to_f64(n), m.double))
        }
        Value::String(s) => {
            extra.format.is_none_or(|f| f.is_valid(s))
                && extra.pattern.as_ref().is_none_or(|p| p.is_match(s))
        }
        _ => true,
    }
}

/// Whether `x` is an integer multiple of `m > 0`, read as the decimals JavaScript prints for
/// both (`String(x)`): `0.0075` is a multiple of `0.0001` and `0.3` of `0.1`, although their
/// doubles' quotients are not integers (`docs/CONTRACTS.md`, "Numbers").
pub(crate) fn is_multiple(x: f64, m: f64) -> bool {
    if x == 0.0 {
        return true;
    }
    let (Some((a, p)), Some((b, q))) = (decimal(x), decimal(m)) else {
        return (x / m).fract() == 0.0;
    };
    if b == 0 {
        return false;
    }
    // x / m = (a / b) · 10^(p − q), with a, b < 10^17.
    if p >= q {
        let exponent = u32::try_from(p - q).unwrap_or(u32::MAX);
        (mod_pow10(exponent, b) * (a % b)).is_multiple_of(b)
    } else {
        let shift = q - p;
        if shift > 17 {
            return false;
        }
        let divisor = b * 10u128.pow(u32::try_from(shift).unwrap_or(0));
        a.is_multiple_of(divisor)
    }
}

/// `|x|` as `digits · 10^exponent`, from its shortest round-trip decimal.
fn decimal(x: f64) -> Option<(u128, i64)> {
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i64 = exponent.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    Some((digits, exponent - frac.len() as i64))
}

/// `10^e mod m` (`m < 10^17`, so products fit in a `u128`).
fn mod_pow10(mut e: u32, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut base = 10 % m;
    while e > 0 {
        if e & 1 == 1 {
            result = result * base % m;
        }
        base = base * base % m;
        e >>= 1;
    }
    result
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
