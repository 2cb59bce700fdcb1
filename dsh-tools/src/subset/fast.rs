//! The fast validity check: an explicit-stack machine that stops at the first failure.
//!
//! Containers are first scanned inline, one level deep, deciding every child that needs no look
//! further down; a frame is only built from the first child that does. The frame being worked on
//! lives in a local and only its suspended ancestors go to the heap, so typical arguments (an
//! object of scalars and arrays of scalars) are validated without allocating. Nothing recurses.

use serde_json::{Map, Value, map};

use super::compiled::{ANY, CompiledSchema, Node, NodeId, ObjectNode};
use super::scalar::{array_ok, scalar_ok, shallow_any};

/// A container being validated.
enum Frame<'s, 'v> {
    Object {
        node: &'s ObjectNode,
        map: &'v Map<String, Value>,
        entries: map::Iter<'v>,
        seen_required: usize,
        hint: usize,
    },
    /// Array elements against `prefix[i]`, then `items` ([`ANY`] for item-less and
    /// annotation-only arrays); `index` is the next element's.
    Array {
        items: NodeId,
        prefix: &'s [NodeId],
        index: usize,
        elements: std::slice::Iter<'v, Value>,
    },
    /// The values of an object under an annotation-only schema.
    AnyObject(map::Values<'v>),
    OneOf {
        branches: &'s [NodeId],
        next: usize,
        matches: u32,
        value: &'v Value,
    },
}

/// The outcome of entering a node for a value.
enum Step<'s, 'v> {
    Done(bool),
    Enter(Frame<'s, 'v>),
}

/// The outcome of an inline scan over a container's children.
enum Scan<'v> {
    Decided(bool),
    /// Stopped at an object entry that needs a frame (iterator positioned at it).
    ObjectAt {
        entries: map::Iter<'v>,
        seen_required: usize,
        hint: usize,
    },
    /// Stopped at the array element (or object value) with this index / position.
    At(usize),
}

impl CompiledSchema {
    /// Whether `value` is valid (no violations), as fast as possible: no messages, no allocation
    /// for typical arguments, stops at the first failure.
    ///
    /// ```
    /// use dsh_tools::subset::{CompiledSchema, Vocabulary};
    /// use serde_json::json;
    /// let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    /// let compiled = CompiledSchema::compile(&schema, Vocabulary::Reference).unwrap();
    /// assert!(compiled.is_valid(&json!({"a": "x"})));
    /// assert!(!compiled.is_valid(&json!({"a": "x", "b": 1})));
    /// ```
    pub fn is_valid(&self, value: &Value) -> bool {
        self.run(0, value)
    }

    /// Whether `value` is valid against node `node`.
    pub(crate) fn run(&self, node: NodeId, value: &Value) -> bool {
        let mut current = match self.step(node, value) {
            Step::Done(ok) => return ok,
            Step::Enter(frame) => frame,
        };
        let mut parents: Vec<Frame<'_, '_>> = Vec::new();
        let mut delivered = None;
        loop {
            match self.advance(&mut current, delivered.take()) {
                Step::Enter(child) => parents.push(std::mem::replace(&mut current, child)),
                Step::Done(ok) => match parents.pop() {
                    Some(parent) => {
                        current = parent;
                        delivered = Some(ok);
                    }
                    None => return ok,
                },
            }
        }
    }

    /// Decides `value` against `node` without looking inside a non-empty container.
    #[inline(always)]
    fn shallow(&self, node: NodeId, value: &Value) -> Option<bool> {
        match self.node(node) {
            Node::Any => shallow_any(value),
            Node::Scalar(node) => Some(scalar_ok(node, value)),
            Node::Object(node) => match value {
                Value::Object(map) if !node.count_ok(map.len()) => Some(false),
                Value::Object(map) if map.is_empty() => Some(node.required.is_empty()),
                Value::Object(_) => None,
                _ => Some(false),
            },
            Node::Array(node) => match value {
                Value::Array(elements) if !array_ok(node, elements) => Some(false),
                Value::Array(elements) if elements.is_empty() => Some(true),
                Value::Array(_) => None,
                _ => Some(false),
            },
            Node::OneOf(_) => None,
        }
    }

    /// Decides `value` against `node` looking at most one level down (children decided
    /// shallowly), or `None`.
    #[inline(always)]
    fn level(&self, node: NodeId, value: &Value) -> Option<bool> {
        match self.shallow(node, value) {
            Some(ok) => Some(ok),
            None => self.level_below(node, value),
        }
    }

    /// [`Self::level`] for a value [`Self::shallow`] could not decide.
    #[inline(never)]
    fn level_below(&self, node: NodeId, value: &Value) -> Option<bool> {
        let scan = match (self.node(node), value) {
            (Node::OneOf(branches), _) => {
                let mut matches = 0u32;
                for &branch in branches.iter() {
                    matches += u32::from(self.shallow(branch, value)?);
                    if matches > 1 {
                        return Some(false);
                    }
                }
                return Some(matches == 1);
            }
            (Node::Object(node), Value::Object(map)) => {
                self.scan_object::<false>(node, map, map.iter(), 0, 0)
            }
            (Node::Array(node), Value::Array(elements)) => {
                self.scan_values::<false>(node.items, &node.prefix, elements.iter())
            }
            (Node::Any, Value::Array(elements)) => {
                self.scan_values::<false>(ANY, &[], elements.iter())
            }
            (Node::Any, Value::Object(map)) => self.scan_values::<false>(ANY, &[], map.values()),
            _ => Scan::Decided(false),
        };
        match scan {
            Scan::Decided(ok) => Some(ok),
            Scan::ObjectAt { .. } | Scan::At(_) => None,
        }
    }

    /// Enters `node` for `value`: decides it inline when every child is decidable one level
    /// down, else returns a frame positioned at the first child that is not.
    fn step<'s, 'v>(&'s self, node: NodeId, value: &'v Value) -> Step<'s, 'v> {
        if let Some(ok) = self.shallow(node, value) {
            return Step::Done(ok);
        }
        let (items, scan) = match (self.node(node), value) {
            (Node::OneOf(branches), _) => {
                return Step::Enter(Frame::OneOf {
                    branches,
                    next: 0,
                    matches: 0,
                    value,
                });
            }
            (Node::Object(node), Value::Object(map)) => {
                return match self.scan_object::<true>(node, map, map.iter(), 0, 0) {
                    Scan::Decided(ok) => Step::Done(ok),
                    Scan::ObjectAt {
                        entries,
                        seen_required,
                        hint,
                    } => Step::Enter(Frame::Object {
                        node,
                        map,
                        entries,
                        seen_required,
                        hint,
                    }),
                    Scan::At(_) => Step::Done(false),
                };
            }
            (Node::Any, Value::Object(map)) => {
                return match self.scan_values::<true>(ANY, &[], map.values()) {
                    Scan::Decided(ok) => Step::Done(ok),
                    Scan::At(position) => {
                        let mut values = map.values();
                        if position > 0 {
                            values.nth(position - 1);
                        }
                        Step::Enter(Frame::AnyObject(values))
                    }
                    Scan::ObjectAt { .. } => Step::Done(false),
                };
            }
            (Node::Array(node), Value::Array(elements)) => (
                (node.items, &*node.prefix),
                self.scan_values::<true>(node.items, &node.prefix, elements.iter()),
            ),
            (Node::Any, Value::Array(elements)) => (
                (ANY, &[][..]),
                self.scan_values::<true>(ANY, &[], elements.iter()),
            ),
            _ => return Step::Done(false),
        };
        let Value::Array(elements) = value else {
            return Step::Done(false);
        };
        let (items, prefix) = items;
        match scan {
            Scan::Decided(ok) => Step::Done(ok),
            Scan::At(index) => Step::Enter(Frame::Array {
                items,
                prefix,
                index,
                elements: elements.get(index..).unwrap_or_default().iter(),
            }),
            Scan::ObjectAt { .. } => Step::Done(false),
        }
    }

    /// Decides a child: one level down when `DEEP`, else shallowly.
    #[inline(always)]
    fn decide<const DEEP: bool>(&self, node: NodeId, value: &Value) -> Option<bool> {
        if DEEP {
            self.level(node, value)
        } else {
            self.shallow(node, value)
        }
    }

    /// The inline pass over an object's entries from `entries` on, deciding children with
    /// [`Self::decide`]; stops at the first child it cannot settle.
    #[inline(always)]
    fn scan_object<'v, const DEEP: bool>(
        &self,
        node: &ObjectNode,
        map: &'v Map<String, Value>,
        mut entries: map::Iter<'v>,
        mut seen_required: usize,
        mut hint: usize,
    ) -> Scan<'v> {
        loop {
            let before = entries.clone();
            let hint_before = hint;
            let Some((key, child)) = entries.next() else {
                return Scan::Decided(required_ok(node, map, seen_required));
            };
            let (child_node, required) = match node.lookup_hinted(key, &mut hint) {
                Some(prop) => (prop.node, prop.required),
                None if node.closed => return Scan::Decided(false),
                None => (node.extra, false),
            };
            match self.decide::<DEEP>(child_node, child) {
                Some(true) => seen_required += usize::from(required),
                Some(false) => return Scan::Decided(false),
                None => {
                    return Scan::ObjectAt {
                        entries: before,
                        seen_required,
                        hint: hint_before,
                    };
                }
            }
        }
    }

    /// The inline pass over array elements (or object values) against `prefix[i]`, then
    /// `items`.
    #[inline(always)]
    fn scan_values<'v, const DEEP: bool>(
        &self,
        items: NodeId,
        prefix: &[NodeId],
        values: impl Iterator<Item = &'v Value>,
    ) -> Scan<'v> {
        for (index, value) in values.enumerate() {
            let node = prefix.get(index).copied().unwrap_or(items);
            match self.decide::<DEEP>(node, value) {
                Some(true) => {}
                Some(false) => return Scan::Decided(false),
                None => return Scan::At(index),
            }
        }
        Scan::Decided(true)
    }

    /// Advances `frame` after a child finished with `delivered` (if any): either enters the next
    /// child that needs a frame, or finishes the frame.
    fn advance<'s, 'v>(
        &'s self,
        frame: &mut Frame<'s, 'v>,
        delivered: Option<bool>,
    ) -> Step<'s, 'v> {
        if delivered == Some(false) && !matches!(frame, Frame::OneOf { .. }) {
            return Step::Done(false);
        }
        match frame {
            Frame::Object {
                node,
                map,
                entries,
                seen_required,
                hint,
            } => {
                let node: &'s ObjectNode = node;
                for (key, child) in entries.by_ref() {
                    let child_node = match node.lookup_hinted(key, hint) {
                        Some(prop) => {
                            *seen_required += usize::from(prop.required);
                            prop.node
                        }
                        None if node.closed => return Step::Done(false),
                        None => node.extra,
                    };
                    match self.step(child_node, child) {
                        Step::Done(true) => {}
                        other => return other,
                    }
                }
                Step::Done(required_ok(node, map, *seen_required))
            }
            Frame::Array {
                items,
                prefix,
                index,
                elements,
            } => {
                for value in elements.by_ref() {
                    let node = prefix.get(*index).copied().unwrap_or(*items);
                    *index += 1;
                    match self.step(node, value) {
                        Step::Done(true) => {}
                        other => return other,
                    }
                }
                Step::Done(true)
            }
            Frame::AnyObject(values) => self.drain(ANY, values),
            Frame::OneOf {
                branches,
                next,
                matches,
                value,
            } => {
                let value: &'v Value = value;
                *matches += u32::from(delivered == Some(true));
                loop {
                    if *matches > 1 {
                        return Step::Done(false);
                    }
                    let Some(&branch) = branches.get(*next) else {
                        return Step::Done(*matches == 1);
                    };
                    *next += 1;
                    match self.step(branch, value) {
                        Step::Done(ok) => *matches += u32::from(ok),
                        enter => return enter,
                    }
                }
            }
        }
    }

    /// Steps through the remaining children of a frame against one schema.
    fn drain<'s, 'v>(
        &'s self,
        items: NodeId,
        values: &mut impl Iterator<Item = &'v Value>,
    ) -> Step<'s, 'v> {
        for value in values {
            match self.step(items, value) {
                Step::Done(true) => {}
                other => return other,
            }
        }
        Step::Done(true)
    }
}

/// Whether every required name was seen.
#[inline(always)]
fn required_ok(node: &ObjectNode, map: &Map<String, Value>, seen_required: usize) -> bool {
    seen_required == node.required_props
        && (!node.required_undeclared || node.required.iter().all(|r| map.contains_key(&*r.name)))
}
