//! The violations of a value no `oneOf` branch accepts (`docs/CONTRACTS.md`, "Validating a
//! value", rule 2).
//!
//! The reference reports one text, `"<d>" must match exactly one oneOf branch (matched <n>)`, and
//! drops what the branches said. A model cannot act on `matched 0`, and the commonest union is
//! `Option<T>` (`oneOf [T, null]`), so when no branch matches:
//!
//! - when exactly one branch admits the value's JSON type (a number against
//!   `oneOf [{integer, bounds}, null]`), that branch's own violations are the value's, under the
//!   same path (`"limit" must be at most 50`): [`CompiledSchema::union_target`];
//! - otherwise the reference text is kept and the closest branch (fewest violations, the first on
//!   a tie) is named with what it needed: [`CompiledSchema::union_violations`].
//!
//! Two or more matching branches keep the reference text alone.

use serde_json::Value;

use super::compiled::{CompiledSchema, Node, NodeId, ScalarType};
use super::messages::quoted;

/// At most this many of the closest branch's violations are quoted.
const CLOSEST_SHOWN: usize = 3;

impl CompiledSchema {
    /// The node whose violations stand for `node`'s: `node` itself, or, through `oneOf` nodes,
    /// the one branch that admits the value's JSON type. The other branches reject the value, so
    /// the union accepts it exactly when that branch does, and that branch's violations (none
    /// when it accepts) are the union's; walking it costs no more than the branch check would.
    /// Bounded by the node count (compilation already cuts `oneOf`-only cycles).
    pub(super) fn union_target(&self, mut node: NodeId, value: &Value) -> NodeId {
        for _ in 0..self.nodes.len() {
            let Node::OneOf(branches) = self.node(node) else {
                break;
            };
            match self.sole_branch(branches, value) {
                Some(branch) => node = branch,
                None => break,
            }
        }
        node
    }

    /// The one branch admitting `value`'s JSON type, if exactly one does.
    fn sole_branch(&self, branches: &[NodeId], value: &Value) -> Option<NodeId> {
        let mut admitting = branches
            .iter()
            .copied()
            .filter(|&branch| self.admits_type(branch, value));
        let first = admitting.next()?;
        admitting.next().is_none().then_some(first)
    }

    /// Whether `node` may accept a value of `value`'s JSON type; `false` is certain (the node
    /// rejects every such value). An integer node admits every number: `1.5` against
    /// `integer` is that branch's `must be an integer`.
    fn admits_type(&self, node: NodeId, value: &Value) -> bool {
        match (self.node(node), value) {
            (Node::Any | Node::OneOf(_), _)
            | (Node::Object(_), Value::Object(_))
            | (Node::Array(_), Value::Array(_)) => true,
            (Node::Scalar(scalar), _) => matches!(
                (scalar.ty, value),
                (ScalarType::String, Value::String(_))
                    | (ScalarType::Number | ScalarType::Integer, Value::Number(_))
                    | (ScalarType::Boolean, Value::Bool(_))
                    | (ScalarType::Null, Value::Null)
            ),
            _ => false,
        }
    }

    /// The violations of a `oneOf` node with more than one admitting branch (or none): none when
    /// exactly one branch matches, else the reference text, followed, when no branch matched and
    /// `hints` is on, by the closest branch and its violations (computed without hints, so
    /// nested unions never recurse further).
    pub(super) fn union_violations(
        &self,
        branches: &[NodeId],
        value: &Value,
        path: &str,
        hints: bool,
    ) -> Vec<String> {
        let matched = branches.iter().filter(|&&b| self.run(b, value)).count();
        if matched == 1 {
            return Vec::new();
        }
        let mut text = quoted(
            path,
            &format!("must match exactly one oneOf branch (matched {matched})"),
        );
        if matched > 0 || !hints {
            return vec![text];
        }
        let any_admits = branches.iter().any(|&b| self.admits_type(b, value));
        let closest = branches
            .iter()
            .enumerate()
            .filter(|&(_, &b)| !any_admits || self.admits_type(b, value))
            .map(|(index, &b)| (index, self.walk(b, value, path, false)))
            .filter(|(_, violations)| !violations.is_empty())
            .min_by_key(|(_, violations)| violations.len());
        if let Some((index, violations)) = closest {
            text.push_str(&format!("; closest is branch {index}: "));
            let shown = violations.len().min(CLOSEST_SHOWN);
            text.push_str(&violations[..shown].join("; "));
            if violations.len() > shown {
                text.push_str(&format!(" (and {} more)", violations.len() - shown));
            }
        }
        vec![text]
    }
}

#[cfg(test)]
mod tests {
    use crate::subset::validate_value;
    use serde_json::json;

    fn option(inner: serde_json::Value) -> serde_json::Value {
        json!({"type": "object", "properties": {"limit": {"oneOf": [inner, {"type": "null"}]}}})
    }

    #[test]
    fn the_sole_admitting_branch_speaks() {
        let schema = option(json!({"type": "integer", "minimum": 1, "maximum": 50}));
        assert_eq!(
            validate_value(&schema, &json!({"limit": 51}), ""),
            vec!["\"limit\" must be at most 50"]
        );
        assert_eq!(
            validate_value(&schema, &json!({"limit": 1.5}), ""),
            vec!["\"limit\" must be an integer"]
        );
        assert!(validate_value(&schema, &json!({"limit": null}), "").is_empty());
        let object = option(
            json!({"type": "object", "properties": {"n": {"type": "string"}},
            "required": ["n"], "additionalProperties": false}),
        );
        assert_eq!(
            validate_value(&object, &json!({"limit": {"m": 1}}), ""),
            vec![
                "missing required property \"limit.n\"",
                "\"limit.m\" is not a property of \"limit\"; its properties are \"n\""
            ]
        );
    }

    #[test]
    fn nested_unions_follow_the_admitting_branch() {
        let inner = json!({"oneOf": [{"type": "string", "minLength": 2}, {"type": "array"}]});
        let schema = option(inner);
        assert_eq!(
            validate_value(&schema, &json!({"limit": "a"}), ""),
            vec!["\"limit\" must be at least 2 characters long"]
        );
    }

    #[test]
    fn otherwise_the_closest_branch_is_named() {
        let schema = option(json!({"type": "integer"}));
        assert_eq!(
            validate_value(&schema, &json!({"limit": "5"}), ""),
            vec![
                "\"limit\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"limit\" must be an integer"
            ]
        );
        let two = json!({"oneOf": [
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a", "b"]},
            {"type": "object", "properties": {"c": {"type": "string"}}, "required": ["c"]}
        ]});
        assert_eq!(
            validate_value(&two, &json!({"a": 1}), "v"),
            vec![
                "\"v\" must match exactly one oneOf branch (matched 0); closest is branch 1: missing required property \"v.c\""
            ]
        );
        let many = json!({"oneOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "string"}, "minItems": 9}
        ]});
        assert_eq!(
            validate_value(&many, &json!([1, 2, 3, 4]), "v"),
            vec![
                "\"v\" must match exactly one oneOf branch (matched 0); closest is branch 0: \"v[0]\" must be a string; \"v[1]\" must be a string; \"v[2]\" must be a string (and 1 more)"
            ]
        );
    }

    #[test]
    fn two_matches_keep_the_reference_text() {
        let schema = json!({"oneOf": [{"type": "number"}, {"type": "number"}]});
        assert_eq!(
            validate_value(&schema, &json!(1), "v"),
            vec!["\"v\" must match exactly one oneOf branch (matched 2)"]
        );
    }
}
