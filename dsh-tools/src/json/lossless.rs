//! Lossless JSON: values a JSON round trip reproduces exactly.
//!
//! `serde_json::Value` already excludes most exotic shapes; what remains is the numbers. A
//! `serde_json::Number` can hold `-0.0` (through [`Number::from_f64`]) which JSON text cannot
//! carry, and numbers entering from untyped sources (runtime programs, FFI) may be `NaN` or
//! infinite. Everything here is iterative, so arbitrarily deep values are fine.

use serde_json::{Number, Value};

use super::escape::write_json_quote;

/// Why a double is not lossless JSON.
///
/// ```
/// use dsh_tools::json::{number_from_f64, LossyNumber};
/// assert_eq!(number_from_f64(-0.0), Err(LossyNumber::NegativeZero));
/// assert_eq!(LossyNumber::NegativeZero.to_string(), "-0 is not lossless JSON");
/// assert_eq!(LossyNumber::NaN.to_string(), "NaN is not lossless JSON");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum LossyNumber {
    /// Negative zero (JSON text would read back as `0`).
    #[error("-0 is not lossless JSON")]
    NegativeZero,
    /// Not a number.
    #[error("NaN is not lossless JSON")]
    NaN,
    /// Positive infinity.
    #[error("Infinity is not lossless JSON")]
    Infinity,
    /// Negative infinity.
    #[error("-Infinity is not lossless JSON")]
    NegativeInfinity,
}

/// Checks a double entering from an untyped source and wraps it as a JSON number.
///
/// Rejects `NaN`, `±Infinity` and `-0.0`; every other double becomes an `f64` [`Number`].
///
/// ```
/// use dsh_tools::json::{number_from_f64, LossyNumber};
/// assert_eq!(number_from_f64(1.5).unwrap().as_f64(), Some(1.5));
/// assert_eq!(number_from_f64(f64::INFINITY), Err(LossyNumber::Infinity));
/// assert_eq!(number_from_f64(f64::NEG_INFINITY), Err(LossyNumber::NegativeInfinity));
/// assert_eq!(number_from_f64(f64::NAN), Err(LossyNumber::NaN));
/// ```
pub fn number_from_f64(x: f64) -> Result<Number, LossyNumber> {
    if x.is_nan() {
        return Err(LossyNumber::NaN);
    }
    if x.is_infinite() {
        return Err(if x > 0.0 {
            LossyNumber::Infinity
        } else {
            LossyNumber::NegativeInfinity
        });
    }
    if x == 0.0 && x.is_sign_negative() {
        return Err(LossyNumber::NegativeZero);
    }
    Number::from_f64(x).ok_or(LossyNumber::NaN)
}

/// Whether a JSON number is lossless: finite and not negative zero.
///
/// ```
/// use dsh_tools::json::is_lossless_number;
/// use serde_json::Number;
/// assert!(is_lossless_number(&Number::from(0)));
/// assert!(!is_lossless_number(&Number::from_f64(-0.0).unwrap()));
/// ```
pub fn is_lossless_number(n: &Number) -> bool {
    match n.as_f64() {
        Some(f) if n.is_f64() => f.is_finite() && !(f == 0.0 && f.is_sign_negative()),
        _ => true,
    }
}

/// Whether the value is lossless JSON: `false` iff some number inside is `-0.0` (or non-finite).
///
/// Iterative: a 5,000-deep value is fine.
///
/// ```
/// use dsh_tools::json::is_lossless;
/// use serde_json::{json, Number, Value};
/// assert!(is_lossless(&json!({"a": [1, 0.0, "x"]})));
/// let negative_zero = Value::Number(Number::from_f64(-0.0).unwrap());
/// assert!(!is_lossless(&json!({"a": [1, negative_zero]})));
/// ```
pub fn is_lossless(v: &Value) -> bool {
    // Only nested containers wait on the stack: a flat value is checked without allocating.
    let mut stack: Vec<&Value> = Vec::new();
    let mut current = v;
    loop {
        let lossless = match current {
            Value::Number(n) => is_lossless_number(n),
            Value::Array(items) => items.iter().all(|item| member_lossless(item, &mut stack)),
            Value::Object(map) => map.values().all(|item| member_lossless(item, &mut stack)),
            _ => true,
        };
        if !lossless {
            return false;
        }
        match stack.pop() {
            Some(next) => current = next,
            None => return true,
        }
    }
}

/// A member of a container: a number is checked now, a container later (from `stack`).
fn member_lossless<'a>(member: &'a Value, stack: &mut Vec<&'a Value>) -> bool {
    match member {
        Value::Number(n) => is_lossless_number(n),
        Value::Array(_) | Value::Object(_) => {
            stack.push(member);
            true
        }
        _ => true,
    }
}

/// The path of the first (document order) number that is not lossless, or `None`.
///
/// Paths are JSONPath-like: `$` is the root, `.key` an identifier-like key, `["key"]` any other key
/// (JSON-quoted), `[i]` an array index.
///
/// ```
/// use dsh_tools::json::find_lossy;
/// use serde_json::{json, Number, Value};
/// let negative_zero = Value::Number(Number::from_f64(-0.0).unwrap());
/// let v = json!({"ok": 0, "a b": [1, {"x": negative_zero}]});
/// assert_eq!(find_lossy(&v).as_deref(), Some(r#"$["a b"][1].x"#));
/// assert_eq!(find_lossy(&json!([1, 2])), None);
/// ```
pub fn find_lossy(v: &Value) -> Option<String> {
    if is_lossless(v) {
        return None;
    }
    let mut stack: Vec<(&Value, String)> = vec![(v, String::from("$"))];
    while let Some((current, path)) = stack.pop() {
        match current {
            Value::Number(n) if !is_lossless_number(n) => return Some(path),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate().rev() {
                    stack.push((item, format!("{path}[{index}]")));
                }
            }
            Value::Object(map) => {
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (key, item) in entries.into_iter().rev() {
                    let mut child = path.clone();
                    push_path_key(&mut child, key);
                    stack.push((item, child));
                }
            }
            _ => {}
        }
    }
    None
}

fn push_path_key(path: &mut String, key: &str) {
    let mut chars = key.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        write_json_quote(path, key);
        path.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn neg_zero() -> Value {
        Value::Number(Number::from_f64(-0.0).expect("finite"))
    }

    #[test]
    fn detects_negative_zero_anywhere() {
        assert!(is_lossless(&json!(null)));
        assert!(!is_lossless(&neg_zero()));
        assert!(!is_lossless(&json!([[[neg_zero()]]])));
        assert!(!is_lossless(&json!({"a": 1, "b": neg_zero()})));
        assert!(!is_lossless(&json!(["x", {"y": [2, neg_zero()]}])));
        assert!(is_lossless(&json!({"a": 1, "b": [0.5, {"c": "d"}]})));
        assert_eq!(find_lossy(&neg_zero()).as_deref(), Some("$"));
        assert_eq!(
            find_lossy(&json!([0, [neg_zero()]])).as_deref(),
            Some("$[1][0]")
        );
        assert_eq!(
            find_lossy(&json!({"_a1": neg_zero()})).as_deref(),
            Some("$._a1")
        );
        assert_eq!(
            find_lossy(&json!({"1a": neg_zero()})).as_deref(),
            Some("$[\"1a\"]")
        );
    }

    #[test]
    fn deep_values_do_not_overflow() {
        let mut v = neg_zero();
        for _ in 0..5_000 {
            v = Value::Array(vec![v]);
        }
        let result = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let out = (is_lossless(&v), find_lossy(&v).map(|p| p.len()));
                std::mem::forget(v);
                out
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert_eq!(result, (false, Some(1 + 3 * 5_000)));
    }
}
