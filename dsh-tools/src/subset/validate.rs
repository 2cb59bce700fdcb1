//! Value validation with the exact messages of `docs/CONTRACTS.md`, "Validating a value".

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::compiled::ANY;
use super::compiled::{
    ArrayNode, CompiledSchema, Node, NodeId, ObjectNode, ScalarExtra, ScalarNode, ScalarType,
};
use super::messages::{bound, missing_required, push_index, push_key, quoted};
use super::scalar::{bound_ord, is_multiple, literal_ok, scalar_type_ok};
use super::unique::first_duplicate;
use crate::json::{is_lossless, json_quote, number_to_f64};

/// A container whose children are being validated.
struct Frame<'s, 'v> {
    /// Length of this frame's own path in the shared path buffer.
    path_len: usize,
    violations: Vec<String>,
    kind: Kind<'s, 'v>,
}

enum Kind<'s, 'v> {
    Object {
        node: &'s ObjectNode,
        map: &'v Map<String, Value>,
        props: std::slice::Iter<'s, super::compiled::Prop>,
        /// Undeclared entries, validated against the map-value schema after the properties.
        extras: serde_json::map::Iter<'v>,
        tail: Vec<String>,
    },
    Array {
        node: &'s ArrayNode,
        elements: std::iter::Enumerate<std::slice::Iter<'v, Value>>,
    },
}

enum Step<'s, 'v> {
    Done(Vec<String>),
    Enter(Frame<'s, 'v>),
}

impl CompiledSchema {
    /// Every violation of `value`, with the exact texts and order of `docs/CONTRACTS.md`,
    /// "Validating a value" (plus the bound messages of
    /// [`Vocabulary::Parameters`](super::Vocabulary::Parameters)). `path` labels the value; `""` is
    /// the parameter-root sentinel (displayed `arguments`, children bare keys). Runs
    /// [`is_valid`](Self::is_valid) first, so a valid value costs no allocation.
    ///
    /// ```
    /// use dsh_tools::subset::{CompiledSchema, Vocabulary};
    /// use serde_json::json;
    /// let schema = json!({"type": "object", "properties": {
    ///     "servers": {"type": "array", "items": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}},
    ///     "mode": {"type": "string", "enum": ["a", "b"]}
    /// }});
    /// let compiled = CompiledSchema::compile(&schema, Vocabulary::Reference).unwrap();
    /// assert_eq!(compiled.validate(&json!([]), ""), vec!["\"arguments\" must be an object"]);
    /// assert_eq!(
    ///     compiled.validate(&json!({"servers": [{"host": "h"}, {}], "mode": "c"}), ""),
    ///     vec!["missing required property \"servers[1].host\"", "\"mode\" must be one of [\"a\",\"b\"]"]
    /// );
    /// assert_eq!(compiled.validate(&json!({"mode": 1}), "value"), vec!["\"value.mode\" must be a string"]);
    /// ```
    pub fn validate(&self, value: &Value, path: &str) -> Vec<String> {
        if self.is_valid(value) {
            return Vec::new();
        }
        self.violations(value, path)
    }

    /// The violation list, without the fast pre-check.
    pub(crate) fn violations(&self, value: &Value, path: &str) -> Vec<String> {
        self.walk(0, value, path, true)
    }

    /// The violations of `value` against `node`; `hints` names the closest branch of a union no
    /// branch matches (`union.rs`).
    pub(super) fn walk(&self, node: NodeId, value: &Value, path: &str, hints: bool) -> Vec<String> {
        let mut path = String::from(path);
        let mut stack: Vec<Frame<'_, '_>> = match self.enter(node, value, &path, hints) {
            Step::Done(violations) => return violations,
            Step::Enter(frame) => vec![frame],
        };
        while let Some(frame) = stack.last_mut() {
            path.truncate(frame.path_len);
            let child = match &mut frame.kind {
                Kind::Object {
                    node,
                    map,
                    props,
                    extras,
                    ..
                } => props
                    .find_map(|prop| {
                        map.get(&*prop.name).map(|child| {
                            push_key(&mut path, &prop.name);
                            (prop.node, child)
                        })
                    })
                    .or_else(|| {
                        if node.extra == ANY {
                            return None;
                        }
                        extras
                            .find(|(key, _)| node.lookup(key).is_none())
                            .map(|(key, child)| {
                                push_key(&mut path, key);
                                (node.extra, child)
                            })
                    }),
                Kind::Array { node, elements } => elements.next().map(|(index, child)| {
                    push_index(&mut path, index);
                    (node.item(index), child)
                }),
            };
            let result = match child {
                Some((node, child)) => match self.enter(node, child, &path, hints) {
                    Step::Done(violations) => violations,
                    Step::Enter(child_frame) => {
                        stack.push(child_frame);
                        continue;
                    }
                },
                None => {
                    let Some(done) = stack.pop() else { break };
                    finish(done, &path)
                }
            };
            match stack.last_mut() {
                Some(parent) => parent.violations.extend(result),
                None => return result,
            }
        }
        Vec::new()
    }

    fn enter<'s, 'v>(
        &'s self,
        node: NodeId,
        value: &'v Value,
        path: &str,
        hints: bool,
    ) -> Step<'s, 'v> {
        match self.node(self.union_target(node, value)) {
            Node::Any if is_lossless(value) => Step::Done(Vec::new()),
            Node::Any => Step::Done(vec![quoted(path, "must be a lossless JSON value")]),
            Node::OneOf(branches) => {
                Step::Done(self.union_violations(branches, value, path, hints))
            }
            Node::Object(node) => match value {
                Value::Object(map) => {
                    Step::Enter(enter_object(node, map, path, self.tool.as_deref()))
                }
                _ => Step::Done(vec![quoted(path, "must be an object")]),
            },
            Node::Array(node) => match value {
                Value::Array(elements) => enter_array(node, elements, path),
                _ => Step::Done(vec![quoted(path, "must be an array")]),
            },
            Node::Scalar(node) => Step::Done(scalar_violations(node, value, path)),
        }
    }
}

fn enter_object<'s, 'v>(
    node: &'s ObjectNode,
    map: &'v Map<String, Value>,
    path: &str,
    tool: Option<&str>,
) -> Frame<'s, 'v> {
    let mut child = String::from(path);
    let mut violations = Vec::new();
    for required in &node.required {
        if !map.contains_key(&*required.name) {
            child.truncate(path.len());
            push_key(&mut child, &required.name);
            violations.push(missing_required(&child));
        }
    }
    let count = map.len();
    if let Some(min) = &node.min_props
        && min.cmp_count(count) == Ordering::Less
    {
        violations.push(bound(
            path,
            "must have at least",
            &min.number,
            " properties",
            " property",
        ));
    }
    if let Some(max) = &node.max_props
        && max.cmp_count(count) == Ordering::Greater
    {
        violations.push(bound(
            path,
            "must have at most",
            &max.number,
            " properties",
            " property",
        ));
    }
    let tail = if node.closed {
        super::unknown::violations(node, map, path, tool)
    } else {
        Vec::new()
    };
    Frame {
        path_len: path.len(),
        violations,
        kind: Kind::Object {
            node,
            map,
            props: node.props.iter(),
            extras: map.iter(),
            tail,
        },
    }
}

fn enter_array<'s, 'v>(node: &'s ArrayNode, elements: &'v [Value], path: &str) -> Step<'s, 'v> {
    let mut violations = Vec::new();
    let length = elements.len();
    if let Some(min) = &node.min_items
        && min.cmp_count(length) == Ordering::Less
    {
        violations.push(bound(
            path,
            "must have at least",
            &min.number,
            " items",
            " item",
        ));
    }
    if let Some(max) = &node.max_items
        && max.cmp_count(length) == Ordering::Greater
    {
        violations.push(bound(
            path,
            "must have at most",
            &max.number,
            " items",
            " item",
        ));
    } else if node.closed && length > node.prefix.len() {
        violations.push(bound(
            path,
            "must have at most",
            &Number::from(node.prefix.len()),
            " items",
            " item",
        ));
    }
    if node.unique
        && let Some((i, j)) = first_duplicate(elements)
    {
        violations.push(quoted(
            path,
            &format!("must not contain duplicate items (items {i} and {j} are equal)"),
        ));
    }
    if node.items == ANY && node.prefix.is_empty() {
        if violations.is_empty() && !elements.iter().all(is_lossless) {
            violations.push(quoted(path, "must be a dense lossless JSON array"));
        }
        return Step::Done(violations);
    }
    Step::Enter(Frame {
        path_len: path.len(),
        violations,
        kind: Kind::Array {
            node,
            elements: elements.iter().enumerate(),
        },
    })
}

/// Completes a container: tail violations, then the lossless check when nothing else failed.
/// Validated children are lossless by construction, so only undeclared values need the check.
fn finish(frame: Frame<'_, '_>, path: &str) -> Vec<String> {
    let Frame {
        mut violations,
        kind,
        ..
    } = frame;
    match kind {
        Kind::Object {
            node, map, tail, ..
        } => {
            violations.extend(tail);
            if violations.is_empty()
                && !map
                    .iter()
                    .all(|(key, v)| node.lookup(key).is_some() || is_lossless(v))
            {
                violations.push(quoted(path, "must be a lossless JSON object"));
            }
        }
        Kind::Array { .. } => {}
    }
    violations
}

fn scalar_violations(node: &ScalarNode, value: &Value, path: &str) -> Vec<String> {
    if !scalar_type_ok(node.ty, value) {
        let message = match (node.ty, value) {
            (ScalarType::String, _) => "must be a string",
            (ScalarType::Number, Value::Number(_)) => "must be a finite JSON number",
            (ScalarType::Number, _) => "must be a number",
            (ScalarType::Integer, _) => "must be an integer",
            (ScalarType::Boolean, _) => "must be a boolean",
            (ScalarType::Null, _) => "must be null",
        };
        return vec![quoted(path, message)];
    }
    let mut violations = Vec::new();
    if let Some(enumeration) = &node.enumeration
        && !literal_ok(Some(enumeration), value)
    {
        violations.push(quoted(
            path,
            &format!("must be one of {}", enumeration.json),
        ));
    } else if let Some(constant) = &node.constant
        && !literal_ok(Some(constant), value)
    {
        violations.push(quoted(path, &format!("must be {}", constant.json)));
    }
    let (at_least, at_most, tail, tail_one) = match node.ty {
        ScalarType::String => (
            "must be at least",
            "must be at most",
            " characters long",
            " character long",
        ),
        _ => ("must be at least", "must be at most", "", ""),
    };
    if let Some(min) = &node.min
        && bound_ord(value, min) == Some(Ordering::Less)
    {
        violations.push(bound(path, at_least, &min.number, tail, tail_one));
    }
    if let Some(max) = &node.max
        && bound_ord(value, max) == Some(Ordering::Greater)
    {
        violations.push(bound(path, at_most, &max.number, tail, tail_one));
    }
    if let Some(extra) = node.extra.as_deref() {
        extra_violations(extra, value, path, &mut violations);
    }
    violations
}

/// `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `pattern`, `format`, in this order.
fn extra_violations(extra: &ScalarExtra, value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Number(n) => {
            if let Some(min) = &extra.exclusive_min
                && min.cmp_number(n) != Ordering::Greater
            {
                out.push(bound(path, "must be greater than", &min.number, "", ""));
            }
            if let Some(max) = &extra.exclusive_max
                && max.cmp_number(n) != Ordering::Less
            {
                out.push(bound(path, "must be less than", &max.number, "", ""));
            }
            if let Some(m) = &extra.multiple_of
                && !is_multiple(number_to_f64(n), m.double)
            {
                out.push(bound(path, "must be a multiple of", &m.number, "", ""));
            }
        }
        Value::String(s) => {
            if let Some(pattern) = &extra.pattern
                && !pattern.is_match(s)
            {
                out.push(quoted(
                    path,
                    &format!("must match the pattern {}", json_quote(&pattern.source)),
                ));
            }
            if let Some(format) = extra.format
                && !format.is_valid(s)
            {
                out.push(quoted(path, format.message()));
            }
        }
        _ => {}
    }
}

/// Validates `value` against a raw `schema` with the exact messages of `docs/CONTRACTS.md`,
/// "Validating a value" (and the bound messages when bound keywords are present). Total: never
/// panics, even for schemas outside the subset, which are interpreted best effort (what is not
/// understood accepts any lossless value).
///
/// ```
/// use dsh_tools::subset::validate_value;
/// use serde_json::json;
/// let schema = json!({"oneOf": [{"type": "string"}, {"type": "number"}]});
/// assert!(validate_value(&schema, &json!("x"), "value").is_empty());
/// assert_eq!(validate_value(&schema, &json!(null), "value"),
///     vec!["\"value\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"value\" must be a string"]);
/// let limit = json!({"type": "object", "properties": {"limit": {"oneOf": [
///     {"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}]}}});
/// assert_eq!(validate_value(&limit, &json!({"limit": 51}), ""), vec!["\"limit\" must be at most 50"]);
/// assert_eq!(validate_value(&json!({"type": "number", "enum": [1e21, 0.1, 1e-7]}), &json!(2), "x"),
///     vec!["\"x\" must be one of [1e+21,0.1,1e-7]"]);
/// ```
pub fn validate_value(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    CompiledSchema::compile_lenient(schema).validate(value, path)
}

#[cfg(test)]
mod tests {
    use super::super::messages::display;
    use super::*;
    use serde_json::json;

    #[test]
    fn display_of_root_sentinel() {
        assert_eq!(display(""), "arguments");
        let compiled = CompiledSchema::compile_lenient(
            &json!({"type": "string", "minLength": 2, "maxLength": 1}),
        );
        assert_eq!(
            compiled.validate(&json!("abc"), "s"),
            vec!["\"s\" must be at most 1 character long"]
        );
        assert_eq!(
            compiled.validate(&json!("a"), "s"),
            vec!["\"s\" must be at least 2 characters long"]
        );
    }
}
