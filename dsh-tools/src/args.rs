//! Argument validation (`docs/CONTRACTS.md`, "Arguments") and the bridge from validated JSON
//! arguments to typed Rust parameters.

use serde_json::{Number, Value};

use crate::error::ToolArgsError;
use crate::subset::CompiledSchema;

/// Validates model-written arguments against a compiled parameter schema.
///
/// The path is the parameter-root sentinel, so messages read `"arguments" must be an object`,
/// `missing required property "path"`, `"tags[1]" must be a string`,
/// `missing required property "servers[1].host"`. Every violation is reported, in validation order.
///
/// ```
/// use dsh_tools::args::validate_args;
/// use dsh_tools::subset::{CompiledSchema, Vocabulary};
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "s": {"type": "string"}}, "required": ["path"]});
/// let parameters = CompiledSchema::compile(&schema, Vocabulary::Parameters).unwrap();
/// assert!(validate_args(&parameters, &json!({"path": "/tmp", "extra": 1})).is_ok());
/// let err = validate_args(&parameters, &json!({"s": 1})).unwrap_err();
/// assert_eq!(err.to_string(), "invalid arguments: missing required property \"path\"; \"s\" must be a string");
/// assert_eq!(validate_args(&parameters, &json!(null)).unwrap_err().violations, vec!["\"arguments\" must be an object"]);
/// ```
pub fn validate_args(parameters: &CompiledSchema, args: &Value) -> Result<(), ToolArgsError> {
    if parameters.is_valid(args) {
        return Ok(());
    }
    Err(ToolArgsError::new(parameters.validate(args, "")))
}

/// 2^63 as a double.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
/// 2^64 as a double.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// Rewrites every `f64` number with a zero fraction that fits `u64` (non-negative) or `i64`
/// (negative) exactly into an integer [`Number`], everywhere inside `v` (iteratively).
///
/// JSON Schema (and JavaScript) treat `1.0` as the integer `1`, so a schema-valid argument may hold
/// `1.0` where a Rust parameter is an integer; `serde_json` refuses to deserialise an `f64` number
/// into an integer type. Running this before deserialisation closes that gap. Doubles outside the
/// 64-bit ranges (e.g. `1e300`) and fractional values stay as they are (the integer type then
/// rejects them), and so does `-0.0`, which is not lossless JSON and fails validation first.
///
/// ```
/// use dsh_tools::args::integral_floats_to_ints;
/// use serde_json::json;
/// let mut v = json!({"n": 1.0, "list": [2.0, -3.0, 2.5, 1e300]});
/// integral_floats_to_ints(&mut v);
/// assert_eq!(v, json!({"n": 1, "list": [2, -3, 2.5, 1e300]}));
/// assert!(v["n"].is_u64() && v["list"][1].is_i64());
/// let n: u8 = serde_json::from_value(v["n"].take()).unwrap();
/// assert_eq!(n, 1);
/// ```
pub fn integral_floats_to_ints(v: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![v];
    while let Some(current) = stack.pop() {
        match current {
            Value::Number(n) => {
                if let Some(integer) = integral_float(n) {
                    *n = integer;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
}

/// The integer form of an integral `f64` number that fits `u64`/`i64` exactly.
fn integral_float(n: &Number) -> Option<Number> {
    if !n.is_f64() {
        return None;
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 || (f == 0.0 && f.is_sign_negative()) {
        return None;
    }
    if (0.0..TWO_POW_64).contains(&f) {
        // Exact: integral and within the u64 range.
        Some(Number::from(f as u64))
    } else if (-TWO_POW_63..0.0).contains(&f) {
        // Exact: integral and within the i64 range.
        Some(Number::from(f as i64))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integral_floats_become_integers_at_the_edges() {
        let mut v = json!([
            18446744073709549568.0,
            18446744073709551616.0,
            -9223372036854775808.0,
            -9223372036854777856.0
        ]);
        integral_floats_to_ints(&mut v);
        assert_eq!(v[0].as_u64(), Some(18446744073709549568));
        assert!(v[1].is_f64());
        assert_eq!(v[2].as_i64(), Some(i64::MIN));
        assert!(v[3].is_f64());
        let mut zero = Value::Number(Number::from_f64(-0.0).expect("finite"));
        integral_floats_to_ints(&mut zero);
        assert!(zero.is_f64());
        let mut nan_free = json!(f64::NAN);
        integral_floats_to_ints(&mut nan_free);
        assert_eq!(nan_free, json!(null));
    }

    #[test]
    fn deep_values_are_iterative() {
        let mut v = json!(1.0);
        for _ in 0..5_000 {
            v = Value::Object(
                std::iter::once((String::from("k"), Value::Array(vec![v]))).collect(),
            );
        }
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                integral_floats_to_ints(&mut v);
                let mut cursor = &v;
                while let Some(next) = cursor.get("k").and_then(|a| a.get(0)) {
                    cursor = next;
                }
                assert!(cursor.is_u64());
                std::mem::forget(v);
            })
            .expect("spawn")
            .join()
            .expect("join");
    }
}
