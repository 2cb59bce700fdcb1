//! Values across the boundary: Python objects ↔ lossless JSON (docs/CONTRACTS.md, "Code Mode:
//! Python").
//!
//! Out of the program (tool arguments, the completion value): `None`, `bool`, `int` within
//! ±(2^53 − 1), finite `float` other than `-0.0`, `str`, `list` and `tuple` (both become arrays),
//! `dict` with `str` keys. Anything else — sets, bytes, big integers, `nan`, other keys,
//! objects — is not lossless JSON. Into the program (tool results): objects become `dict`s,
//! arrays `list`s, integers `int`, other numbers `float`. Both directions are iterative and
//! depth-capped.

use monty_types::{DictPairs, MontyObject};
use serde_json::{Map, Number, Value};

/// The largest integer a JSON number carries exactly (docs/CONTRACTS.md, "Numbers").
pub(super) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why a value cannot cross.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lossy {
    /// A value JSON cannot hold exactly; the text names it (`a set`, `nan`, …).
    Value(String),
    /// Nested deeper than the limit.
    TooDeep,
}

impl Lossy {
    /// The detail after "must be lossless JSON": `: a set` or `: nested deeper than 1024 levels`.
    pub(crate) fn detail(&self, max_depth: usize) -> String {
        match self {
            Lossy::Value(what) => what.clone(),
            Lossy::TooDeep => format!("nested deeper than {max_depth} levels"),
        }
    }
}

fn scalar(obj: &MontyObject) -> Result<Option<Value>, Lossy> {
    Ok(Some(match obj {
        MontyObject::None => Value::Null,
        MontyObject::Bool(b) => Value::Bool(*b),
        MontyObject::Int(i) if i.abs() <= MAX_SAFE_INTEGER => Value::Number(Number::from(*i)),
        MontyObject::Int(_) | MontyObject::BigInt(_) => {
            return Err(Lossy::Value(
                "an int beyond ±(2**53 - 1), which JSON numbers do not carry exactly".to_owned(),
            ));
        }
        MontyObject::Float(x) if x.is_nan() => return Err(Lossy::Value("nan".to_owned())),
        MontyObject::Float(x) if x.is_infinite() => {
            return Err(Lossy::Value("an infinite float".to_owned()));
        }
        MontyObject::Float(x) if *x == 0.0 && x.is_sign_negative() => {
            return Err(Lossy::Value("-0.0".to_owned()));
        }
        MontyObject::Float(x) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
        MontyObject::String(s) => Value::String(s.clone()),
        MontyObject::List(_)
        | MontyObject::Tuple(_)
        | MontyObject::NamedTuple { .. }
        | MontyObject::Dict(_) => return Ok(None),
        other => return Err(Lossy::Value(describe(other))),
    }))
}

/// How a value that is not JSON is named in messages.
fn describe(obj: &MontyObject) -> String {
    match obj {
        MontyObject::Set(_) => "a set".to_owned(),
        MontyObject::FrozenSet(_) => "a frozenset".to_owned(),
        MontyObject::Bytes(_) => "bytes".to_owned(),
        MontyObject::Cycle(..) => "a value that contains itself".to_owned(),
        // The interpreter exports containers as deep as its recursion limit, and marks deeper
        // ones so.
        MontyObject::Repr(text) if text == "<deeply nested>" => {
            "nested deeper than the interpreter's recursion limit".to_owned()
        }
        MontyObject::Repr(text) => format!("an object ({text})"),
        MontyObject::Function { name, .. } => format!("the function {name}"),
        MontyObject::Exception { exc_type, .. } => format!("an exception ({exc_type})"),
        other => format!("a value of type {}", other.type_name()),
    }
}

/// An open container of the Python → JSON walk.
enum Open<'a> {
    Array(Vec<Value>, std::slice::Iter<'a, MontyObject>),
    Object(
        Map<String, Value>,
        std::slice::Iter<'a, (MontyObject, MontyObject)>,
        Option<String>,
    ),
}

fn open(obj: &MontyObject) -> Open<'_> {
    match obj {
        MontyObject::List(items) | MontyObject::Tuple(items) => {
            Open::Array(Vec::with_capacity(items.len()), items.iter())
        }
        MontyObject::NamedTuple { values, .. } => {
            Open::Array(Vec::with_capacity(values.len()), values.iter())
        }
        MontyObject::Dict(pairs) => Open::Object(Map::new(), pairs_slice(pairs).iter(), None),
        _ => Open::Array(Vec::new(), [].iter()),
    }
}

fn pairs_slice(pairs: &DictPairs) -> &[(MontyObject, MontyObject)] {
    // `&DictPairs` iterates a slice; collect its bounds once.
    let iter = pairs.into_iter();
    iter.as_slice()
}

/// The JSON value of a Python object, or why it is not lossless JSON.
pub(crate) fn to_json(obj: &MontyObject, max_depth: usize) -> Result<Value, Lossy> {
    if let Some(value) = scalar(obj)? {
        return Ok(value);
    }
    let mut stack: Vec<Open<'_>> = vec![open(obj)];
    loop {
        if stack.len() > max_depth {
            return Err(Lossy::TooDeep);
        }
        let top = stack.last_mut().expect("the stack is not empty");
        let next = match top {
            Open::Array(_, items) => items.next(),
            Open::Object(_, pairs, key) => match pairs.next() {
                Some((MontyObject::String(k), v)) => {
                    *key = Some(k.clone());
                    Some(v)
                }
                Some((other, _)) => {
                    return Err(Lossy::Value(format!(
                        "a dict key that is not a str ({})",
                        other.type_name()
                    )));
                }
                None => None,
            },
        };
        let value = match next {
            Some(child) => match scalar(child)? {
                Some(value) => value,
                None => {
                    stack.push(open(child));
                    continue;
                }
            },
            None => {
                let done = match stack.pop().expect("the stack is not empty") {
                    Open::Array(items, _) => Value::Array(items),
                    Open::Object(map, _, _) => Value::Object(map),
                };
                if stack.is_empty() {
                    return Ok(done);
                }
                done
            }
        };
        match stack.last_mut().expect("the stack is not empty") {
            Open::Array(items, _) => items.push(value),
            Open::Object(map, _, key) => {
                map.insert(key.take().unwrap_or_default(), value);
            }
        }
    }
}

/// The depth of a JSON value (a scalar is 0), counted iteratively up to `limit + 1`.
fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// The Python object of a JSON value: integers (within ±(2^53 − 1)) become `int`, other
/// numbers `float`. Refused: deeper than `max_depth`, integers beyond ±(2^53 − 1), `-0`.
pub(crate) fn from_json(value: &Value, max_depth: usize) -> Result<MontyObject, Lossy> {
    if depth_exceeds(value, max_depth) {
        return Err(Lossy::TooDeep);
    }
    build(value)
}

/// Recursive, bounded by the depth checked in [`from_json`].
fn build(value: &Value) -> Result<MontyObject, Lossy> {
    Ok(match value {
        Value::Null => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(*b),
        Value::Number(n) => number(n)?,
        Value::String(s) => MontyObject::String(s.clone()),
        Value::Array(items) => {
            MontyObject::List(items.iter().map(build).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => MontyObject::Dict(
            map.iter()
                .map(|(k, v)| Ok((MontyObject::String(k.clone()), build(v)?)))
                .collect::<Result<Vec<_>, Lossy>>()?
                .into(),
        ),
    })
}

fn number(n: &Number) -> Result<MontyObject, Lossy> {
    let beyond = || Lossy::Value("an integer beyond ±(2^53 - 1)".to_owned());
    if let Some(i) = n.as_i64() {
        return if i.abs() <= MAX_SAFE_INTEGER {
            Ok(MontyObject::Int(i))
        } else {
            Err(beyond())
        };
    }
    if n.is_u64() {
        return Err(beyond());
    }
    match n.as_f64() {
        Some(x) if x == 0.0 && x.is_sign_negative() => Err(Lossy::Value("-0".to_owned())),
        Some(x) if x.is_finite() => Ok(MontyObject::Float(x)),
        _ => Err(Lossy::Value("a number that is not finite".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_of_json() {
        let value = json!({"a": [1, 2.5, "x", null, true, {"b": []}], "__proto__": {}});
        let obj = from_json(&value, 64).unwrap();
        assert_eq!(to_json(&obj, 64).unwrap(), value);
    }

    #[test]
    fn tuples_are_arrays_and_exotic_values_are_refused() {
        let tuple = MontyObject::Tuple(vec![MontyObject::Int(1), MontyObject::String("a".into())]);
        assert_eq!(to_json(&tuple, 8).unwrap(), json!([1, "a"]));
        let refused = [
            (MontyObject::Float(f64::NAN), "nan"),
            (MontyObject::Float(-0.0), "-0.0"),
            (MontyObject::Int(1 << 53), "an int beyond"),
            (MontyObject::Set(vec![]), "a set"),
            (MontyObject::Bytes(vec![1]), "bytes"),
            (
                MontyObject::Dict(vec![(MontyObject::Int(1), MontyObject::None)].into()),
                "a dict key that is not a str (int)",
            ),
        ];
        for (obj, what) in refused {
            let wrapped = MontyObject::List(vec![obj]);
            match to_json(&wrapped, 8) {
                Err(Lossy::Value(text)) => assert!(text.starts_with(what), "{text}"),
                other => panic!("{what}: {other:?}"),
            }
        }
    }

    #[test]
    fn depth_is_capped_both_ways() {
        let mut obj = MontyObject::List(vec![]);
        let mut value = json!([]);
        for _ in 0..10 {
            obj = MontyObject::List(vec![obj]);
            value = json!([value]);
        }
        assert_eq!(to_json(&obj, 11).unwrap(), value);
        assert_eq!(to_json(&obj, 10), Err(Lossy::TooDeep));
        assert!(from_json(&value, 11).is_ok());
        assert_eq!(from_json(&value, 10), Err(Lossy::TooDeep));
        assert_eq!(
            from_json(&json!(9007199254740993_u64), 1),
            Err(Lossy::Value("an integer beyond ±(2^53 - 1)".to_owned()))
        );
    }
}
