//! A depth-bounded copy of the input, so that every later pass may recurse.
//!
//! The renderers are recursive (schemas are trees and recursion reads best); the input is not
//! trusted to be shallow. This iterative copy cuts every container nested deeper than
//! [`MAX_JSON_DEPTH`] and puts an empty object (the schema that accepts anything) in its place,
//! reporting each cut. `serde_json` refuses to parse text nested deeper than 128 levels, so a
//! schema that arrived as JSON text is never cut: only values built in memory can be.

use serde_json::{Map, Value, map};

use super::issue::{IssueKind, Issues, child};

/// Containers deeper than this (the root container is at depth 1) are cut.
pub(crate) const MAX_JSON_DEPTH: usize = 128;

enum Frame<'a> {
    Array {
        source: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
        out: Vec<Value>,
        path: String,
    },
    Object {
        source: map::Iter<'a>,
        out: Map<String, Value>,
        path: String,
        key: String,
    },
}

/// Copies `value`, cutting containers deeper than [`MAX_JSON_DEPTH`].
pub(crate) fn bounded_copy(value: &Value, issues: &mut Issues) -> Value {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let Some(frame) = open(value, String::from("#")) else {
        return value.clone();
    };
    stack.push(frame);
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            return Value::Null;
        };
        let next = match top {
            Frame::Array { source, path, .. } => {
                source.next().map(|(i, v)| (v, format!("{path}/{i}")))
            }
            Frame::Object {
                source, path, key, ..
            } => source.next().map(|(k, v)| {
                *key = k.clone();
                (v, child(path, k))
            }),
        };
        match next {
            Some((v, path)) => {
                let copied = match v {
                    Value::Array(_) | Value::Object(_) if depth >= MAX_JSON_DEPTH => {
                        issues.push(
                            &path,
                            IssueKind::Degraded,
                            format!(
                                "nested deeper than {MAX_JSON_DEPTH} JSON levels: replaced with an empty schema"
                            ),
                        );
                        Value::Object(Map::new())
                    }
                    Value::Array(_) | Value::Object(_) => {
                        if let Some(frame) = open(v, path) {
                            stack.push(frame);
                        }
                        continue;
                    }
                    scalar => scalar.clone(),
                };
                attach(&mut stack, copied);
            }
            None => {
                let Some(done) = stack.pop() else {
                    return Value::Null;
                };
                let finished = close(done);
                if stack.is_empty() {
                    return finished;
                }
                attach(&mut stack, finished);
            }
        }
    }
}

fn open(value: &Value, path: String) -> Option<Frame<'_>> {
    match value {
        Value::Array(items) => Some(Frame::Array {
            source: items.iter().enumerate(),
            out: Vec::with_capacity(items.len()),
            path,
        }),
        Value::Object(map) => Some(Frame::Object {
            source: map.iter(),
            out: Map::new(),
            path,
            key: String::new(),
        }),
        _ => None,
    }
}

fn close(frame: Frame<'_>) -> Value {
    match frame {
        Frame::Array { out, .. } => Value::Array(out),
        Frame::Object { out, .. } => Value::Object(out),
    }
}

fn attach(stack: &mut [Frame<'_>], value: Value) {
    match stack.last_mut() {
        Some(Frame::Array { out, .. }) => out.push(value),
        Some(Frame::Object { out, key, .. }) => {
            out.insert(std::mem::take(key), value);
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shallow_values_are_copied_exactly() {
        let mut issues = Issues::default();
        let v = json!({"a": [1, {"b": null}], "c": "d", "e": {}});
        assert_eq!(bounded_copy(&v, &mut issues), v);
        assert_eq!(bounded_copy(&json!(3), &mut issues), json!(3));
        assert!(issues.into_vec().is_empty());
    }

    #[test]
    fn deep_values_are_cut_once_per_chain() {
        let mut v = json!({"type": "string"});
        for _ in 0..5_000 {
            // Not `json!`, which would serialise `v` recursively.
            let mut wrapper = Map::new();
            wrapper.insert("items".into(), v);
            v = Value::Object(wrapper);
        }
        let mut issues = Issues::default();
        let copy = bounded_copy(&v, &mut issues);
        let issues = issues.into_vec();
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].kind, IssueKind::Degraded);
        assert_eq!(issues[0].path.matches("/items").count(), MAX_JSON_DEPTH);
        let mut node = &copy;
        let mut levels = 0;
        while let Some(next) = node.get("items") {
            node = next;
            levels += 1;
        }
        assert_eq!(levels, MAX_JSON_DEPTH);
        assert_eq!(node, &json!({}));
        // Dropping a 5,000-deep `Value` recurses: leak it (the copy is shallow).
        std::mem::forget(v);
    }
}
