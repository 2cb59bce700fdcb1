//! The two ways a `$ref` cycle can be wrong (`docs/CONTRACTS.md`, "Schema vocabulary").
//!
//! Recursion is allowed when every cycle descends into a property or an item: validation then
//! consumes one level of the value per turn, and values are finite. A cycle through `$ref` and
//! `oneOf` branches alone ([`Problem::Unguarded`]) would validate the same value forever; a
//! cycle that every instance must take ([`Problem::NoBaseCase`], like a required property of
//! the schema's own type) describes no finite value at all.

use std::collections::HashMap;

use serde_json::Value;

use super::refs::resolve_schema_ref;

/// What is wrong with a `$ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Problem {
    /// It reaches itself through `$ref`s and `oneOf` branches only.
    Unguarded,
    /// Its target has no finite instance.
    NoBaseCase,
}

/// How a node's instances depend on other nodes.
enum Shape {
    /// `$ref` to a node.
    Ref(usize),
    /// `oneOf` branches.
    OneOf(Vec<usize>),
    /// Required properties, and the tuple prefix and items a minimal array must hold (`all`),
    /// plus the further entries `minProperties` asks for beyond the required ones (`more`).
    Needs { all: Vec<usize>, more: Option<More> },
    /// Accepts some value whatever the other nodes say (scalars, `{}`, empty containers).
    Leaf,
}

/// The entries an object needs beyond its required properties (`minProperties`): `count` of
/// the optional declared properties `candidates`, or any number of values of `values` (the
/// schema of undeclared keys; `None` when the object is closed).
struct More {
    count: usize,
    candidates: Vec<usize>,
    values: Option<usize>,
}

/// The schema nodes of a document, found by walking schema positions from the root.
struct Graph<'a> {
    index: HashMap<*const Value, usize>,
    nodes: Vec<&'a Value>,
}

impl<'a> Graph<'a> {
    fn id(&mut self, node: &'a Value, pending: &mut Vec<&'a Value>) -> usize {
        let key = std::ptr::from_ref(node);
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.nodes.len();
        self.index.insert(key, id);
        self.nodes.push(node);
        pending.push(node);
        id
    }
}

/// The problems of the `$ref` nodes `refs` (by their index in `refs`), in `refs` order. The
/// schema is otherwise inside the vocabulary (every `$ref` resolves).
pub(crate) fn problems(root: &Value, refs: &[&Value]) -> Vec<(usize, Problem)> {
    let mut graph = Graph {
        index: HashMap::new(),
        nodes: Vec::new(),
    };
    let mut pending = Vec::new();
    graph.id(root, &mut pending);
    let mut shapes: HashMap<usize, Shape> = HashMap::new();
    while let Some(node) = pending.pop() {
        let id = graph.index[&std::ptr::from_ref(node)];
        let shape = shape_of(root, node, &mut graph, &mut pending);
        shapes.insert(id, shape);
    }
    let count = graph.nodes.len();
    let shape = |id: usize| shapes.get(&id).unwrap_or(&Shape::Leaf);
    // Unguarded cycles: depth-first over `$ref` and `oneOf` edges (0 new, 1 open, 2 done).
    let mut color = vec![0u8; count];
    let mut on_cycle = vec![false; count];
    for start in 0..count {
        if color[start] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        color[start] = 1;
        while let Some(top) = path.last_mut() {
            let (node, next) = *top;
            let edges: &[usize] = match shape(node) {
                Shape::Ref(target) => std::slice::from_ref(target),
                Shape::OneOf(branches) => branches,
                _ => &[],
            };
            if let Some(&child) = edges.get(next) {
                top.1 += 1;
                match color[child] {
                    0 => {
                        color[child] = 1;
                        path.push((child, 0));
                    }
                    1 => {
                        let from = path.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        for (n, _) in &path[from..] {
                            on_cycle[*n] = true;
                        }
                    }
                    _ => {}
                }
            } else {
                color[node] = 2;
                path.pop();
            }
        }
    }
    // Productive nodes (having a finite instance): a least fixpoint. A node that has no
    // instance even when cycles may support themselves (the greatest fixpoint) is unsatisfiable
    // on its own (a closed object that needs more entries than it can hold): that is no
    // recursion problem, and like contradictory bounds it is not reported here.
    let productive = fixpoint(count, &shape, false);
    let satisfiable = fixpoint(count, &shape, true);
    let mut out = Vec::new();
    for (index, node) in refs.iter().enumerate() {
        let Some(&id) = graph.index.get(&std::ptr::from_ref(*node)) else {
            continue;
        };
        if on_cycle[id] {
            out.push((index, Problem::Unguarded));
        } else if !productive[id] && satisfiable[id] {
            out.push((index, Problem::NoBaseCase));
        }
    }
    out
}

/// Which nodes have an instance: the least fixpoint over the shapes (a finite instance), or
/// the greatest (`greatest`: an instance if cycles may support themselves, so what fails it
/// fails on its own, not through recursion).
fn fixpoint<'s>(count: usize, shape: &impl Fn(usize) -> &'s Shape, greatest: bool) -> Vec<bool> {
    let mut holds = vec![greatest; count];
    let mut changed = true;
    while changed {
        changed = false;
        for id in 0..count {
            if holds[id] != greatest {
                continue;
            }
            let now = match shape(id) {
                Shape::Leaf => true,
                Shape::Ref(target) => holds[*target],
                Shape::OneOf(branches) => branches.iter().any(|b| holds[*b]),
                Shape::Needs { all, more } => {
                    all.iter().all(|c| holds[*c])
                        && more.as_ref().is_none_or(|more| {
                            more.values.is_some_and(|v| holds[v])
                                || more.candidates.iter().filter(|c| holds[**c]).count()
                                    >= more.count
                        })
                }
            };
            if now != greatest {
                holds[id] = now;
                changed = true;
            }
        }
    }
    holds
}

/// The shape of one node, registering its sub-schemas.
fn shape_of<'a>(
    root: &'a Value,
    node: &'a Value,
    graph: &mut Graph<'a>,
    pending: &mut Vec<&'a Value>,
) -> Shape {
    let Value::Object(map) = node else {
        return Shape::Leaf;
    };
    if let Some(Value::Object(defs)) = map.get("$defs") {
        for def in defs.values() {
            graph.id(def, pending);
        }
    }
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve_schema_ref(root, r))
    {
        return Shape::Ref(graph.id(target, pending));
    }
    if let Some(Value::Array(branches)) = map.get("oneOf") {
        return Shape::OneOf(branches.iter().map(|b| graph.id(b, pending)).collect());
    }
    let mut needs = Vec::new();
    let mut more = None;
    let properties = map.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut candidates = Vec::new();
    for (name, schema) in properties.into_iter().flatten() {
        let id = graph.id(schema, pending);
        if required.contains(&name.as_str()) {
            needs.push(id);
        } else {
            candidates.push(id);
        }
    }
    let values = match map.get("additionalProperties") {
        Some(values @ Value::Object(_)) => Some(Some(graph.id(values, pending))),
        Some(Value::Bool(false)) => Some(None),
        // Undeclared keys take any value.
        _ => None,
    };
    // Without `type`, the assertions apply to objects and arrays only: `null` always fits.
    let typed = map.contains_key("type");
    let min_properties = map
        .get("minProperties")
        .and_then(Value::as_f64)
        .map_or(0, |n| n as usize);
    if let Some(values) = values
        && min_properties > needs.len()
    {
        more = Some(More {
            count: min_properties - needs.len(),
            candidates,
            values,
        });
    }
    let min_items = map
        .get("minItems")
        .and_then(Value::as_f64)
        .map_or(0, |n| n as usize);
    let prefix = map
        .get("prefixItems")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, schema) in prefix.iter().enumerate() {
        let id = graph.id(schema, pending);
        if i < min_items {
            needs.push(id);
        }
    }
    if let Some(items @ Value::Object(_)) = map.get("items") {
        let id = graph.id(items, pending);
        if min_items > prefix.len() {
            needs.push(id);
        }
    }
    if !typed || (needs.is_empty() && more.is_none()) {
        Shape::Leaf
    } else {
        Shape::Needs { all: needs, more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdicts(schema: &Value, pointers: &[&str]) -> Vec<(usize, Problem)> {
        let refs: Vec<&Value> = pointers
            .iter()
            .map(|p| {
                let (node, _) = super::super::resolve_ref(schema, p).expect("pointer");
                node
            })
            .collect();
        problems(schema, &refs)
    }

    #[test]
    fn guarded_recursion_is_fine() {
        let tree = json!({
            "$defs": {"Tree": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
            }, "required": ["children"]}},
            "$ref": "#/$defs/Tree"
        });
        assert_eq!(
            verdicts(&tree, &["#", "#/$defs/Tree/properties/children/items"]),
            vec![]
        );
    }

    #[test]
    fn left_recursion_and_missing_base_cases_are_found() {
        let left = json!({"$defs": {"A": {"oneOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]}}, "$ref": "#/$defs/A"});
        assert_eq!(
            verdicts(&left, &["#/$defs/A/oneOf/0"]),
            vec![(0, Problem::Unguarded)]
        );
        let endless = json!({"$defs": {"A": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]}}, "$ref": "#/$defs/A"});
        assert_eq!(
            verdicts(&endless, &["#", "#/$defs/A/properties/a"]),
            vec![(0, Problem::NoBaseCase), (1, Problem::NoBaseCase)]
        );
        let tuple =
            json!({"type": "array", "prefixItems": [{"$ref": "#"}], "items": false, "minItems": 1});
        assert_eq!(
            verdicts(&tuple, &["#/prefixItems/0"]),
            vec![(0, Problem::NoBaseCase)]
        );
        // Without `type`, `null` satisfies the assertions: a base case.
        let typeless = json!({"prefixItems": [{"$ref": "#"}], "items": false, "minItems": 1});
        assert_eq!(verdicts(&typeless, &["#/prefixItems/0"]), vec![]);
    }

    #[test]
    fn min_properties_counts_the_entries_a_minimal_object_needs() {
        // A map of itself that must hold an entry: no finite value.
        let map = json!({"$defs": {"T": {"type": "object", "additionalProperties": {"$ref": "#/$defs/T"}, "minProperties": 1}}, "$ref": "#/$defs/T"});
        assert_eq!(
            verdicts(&map, &["#", "#/$defs/T/additionalProperties"]),
            vec![(0, Problem::NoBaseCase), (1, Problem::NoBaseCase)]
        );
        let bounded_above = json!({"$defs": {"T": {"type": "object", "additionalProperties": {"$ref": "#/$defs/T"}, "maxProperties": 1}}, "$ref": "#/$defs/T"});
        assert_eq!(
            verdicts(&bounded_above, &["#/$defs/T/additionalProperties"]),
            vec![]
        );
        // An optional string property (or, when open, any undeclared key) is the base case.
        let with_leaf = json!({"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"type": "string"}}, "additionalProperties": false, "minProperties": 1});
        assert_eq!(verdicts(&with_leaf, &["#/properties/a"]), vec![]);
        let open =
            json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "minProperties": 1});
        assert_eq!(verdicts(&open, &["#/properties/a"]), vec![]);
        // Closed, and the only way to reach two entries goes through the recursion.
        let closed = json!({"type": "object", "properties": {"a": {"$ref": "#"}, "b": {"type": "string"}}, "additionalProperties": false, "minProperties": 2});
        assert_eq!(
            verdicts(&closed, &["#/properties/a"]),
            vec![(0, Problem::NoBaseCase)]
        );
        // A closed object that cannot hold the entries it needs is unsatisfiable on its own:
        // no recursion problem (like contradictory bounds, it is not reported here).
        let unsatisfiable = json!({"$defs": {"N": {"type": "object", "properties": {"a": {"type": "object", "additionalProperties": false, "minProperties": 1}}, "required": ["a"]}}, "$ref": "#/$defs/N"});
        assert_eq!(verdicts(&unsatisfiable, &["#"]), vec![]);
    }
}
