//! JSON-Schema equality (`enum`, `const`).

use serde_json::Value;

use super::number::numbers_equal;

/// JSON-Schema equality: numbers compare mathematically (`1 == 1.0`, `2^53 == 2^53.0`), booleans
/// never equal numbers (`false != 0`), objects compare key-order-insensitively, arrays in order.
/// Iterative.
///
/// ```
/// use dsh_tools::json::json_equal;
/// use serde_json::json;
/// assert!(json_equal(&json!({"a": 1, "b": [1.0]}), &json!({"b": [1], "a": 1.0})));
/// assert!(!json_equal(&json!([false]), &json!([0])));
/// assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
/// assert!(json_equal(&json!(9007199254740992u64), &json!(9007199254740992.0)));
/// ```
pub fn json_equal(a: &Value, b: &Value) -> bool {
    let mut stack: Vec<(&Value, &Value)> = Vec::new();
    let mut current = (a, b);
    loop {
        let equal = match current {
            (Value::Null, Value::Null) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
            (Value::String(x), Value::String(y)) => x == y,
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && {
                    stack.extend(x.iter().zip(y.iter()));
                    true
                }
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter().all(|(key, xv)| match y.get(key) {
                        Some(yv) => {
                            stack.push((xv, yv));
                            true
                        }
                        None => false,
                    })
            }
            _ => false,
        };
        if !equal {
            return false;
        }
        match stack.pop() {
            Some(next) => current = next,
            None => return true,
        }
    }
}

/// Equality of two scalars under [`json_equal`] without touching the stack allocator.
pub(crate) fn scalar_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => {
            json_equal(a, b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn suite_traps() {
        assert!(!json_equal(&json!(true), &json!(1)));
        assert!(!json_equal(&json!({"a": false}), &json!({"a": 0})));
        assert!(json_equal(&json!(-2), &json!(-2.0)));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(
            &json!({"a": 1, "c": 2}),
            &json!({"a": 1, "b": 2})
        ));
        assert!(!json_equal(&json!("\u{e9}"), &json!("e\u{301}")));
        assert!(json_equal(&json!(0), &json!(-0.0)));
        assert!(scalar_equal(&json!(3), &json!(3.0)));
        assert!(!scalar_equal(&json!("3"), &json!(3)));
    }

    #[test]
    fn deep_values_are_iterative() {
        let mut a = json!(1);
        let mut b = json!(1.0);
        for _ in 0..5_000 {
            a = Value::Object(
                std::iter::once((String::from("k"), Value::Array(vec![a]))).collect(),
            );
            b = Value::Object(
                std::iter::once((String::from("k"), Value::Array(vec![b]))).collect(),
            );
        }
        let equal = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let equal = json_equal(&a, &b);
                std::mem::forget((a, b));
                equal
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert!(equal);
    }
}
