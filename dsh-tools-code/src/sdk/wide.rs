//! The wide path: real-world JSON Schema beyond the reference subset (`docs/CONTRACTS.md`,
//! "TypeScript types"). Every node is lowered on its own, so an unsupported node degrades to `unknown`
//! where it stands and never takes the whole tool with it.
//!
//! A node's type is the intersection of its parts: `$ref` (inlined), the base type (`const`,
//! `enum`, or the `type` alternatives — type arrays and `nullable` become unions), every `allOf`
//! branch, and one union per `oneOf`/`anyOf`. Parts that constrain nothing (`JsonValue`,
//! `unknown`) drop out of an intersection. Validation keywords (`format`, bounds, `pattern` …)
//! become JSDoc tags on the member (see [`super::doc`]); `not`, `if`/`then`/`else`,
//! `propertyNames`, `unevaluated*` and `dependent*` are ignored, which only ever widens a type.
//!
//! Cycles: a `$ref` whose target is already being expanded on the current path (the root
//! document counts as being expanded) is not expanded again: the target becomes a recursive
//! alias (`Ty::Alias`), which the SDK declares as a named type (`type $TreeEntry = …`) and
//! `json_schema_to_ts` text inlines once, printing `unknown` where it recurs. Iterative with a node budget ([`ENTER_BUDGET`]): 5,000-deep schemas are fine and
//! exponential `$ref` fan-out stops at the budget, past which nodes lower to `unknown`.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::ir::{Ty, TyId, Types};
use super::keywords::Keywords;
use super::reference::literal;
use super::refs::{alias_hint, resolve};
use super::shape::{self, ArrayPlan, Child, ObjectPlan};

/// How many schema nodes one lowering may enter.
pub(crate) const ENTER_BUDGET: usize = 200_000;

/// Lowers any JSON value used as a schema.
pub(crate) fn lower<'a>(types: &mut Types<'a>, root: &'a Value) -> TyId {
    let mut lowerer = Lowerer {
        root,
        types,
        tasks: Vec::with_capacity(16),
        values: Vec::with_capacity(16),
        parts: Vec::with_capacity(16),
        scratch: Vec::new(),
        ids: Vec::new(),
        active: HashSet::from([std::ptr::from_ref(root)]),
        recursive: HashMap::new(),
        budget: ENTER_BUDGET,
    };
    lowerer.tasks.push(Task::Enter(root));
    while let Some(task) = lowerer.tasks.pop() {
        match task {
            Task::Enter(node) => lowerer.enter(node),
            Task::Ref(target, reference) => {
                let key = std::ptr::from_ref(target);
                if lowerer.active.insert(key) {
                    lowerer.tasks.push(Task::PopRef(key));
                    lowerer.tasks.push(Task::Enter(target));
                } else {
                    let index = lowerer.alias_for(key, target, reference);
                    let id = lowerer.types.add(Ty::Alias(index));
                    lowerer.values.push(id);
                }
            }
            Task::PopRef(key) => {
                lowerer.active.remove(&key);
                lowerer.close_alias(key);
            }
            Task::Build(plan) => lowerer.build(plan),
            Task::Value(value) => lowerer.value(value),
            Task::ValueArray(n) => {
                let elems = lowerer.pop(n);
                let id = shape::tuple_of(lowerer.types, elems);
                lowerer.values.push(id);
            }
            Task::ValueObject(map) => {
                let children = lowerer.pop(map.len());
                let id = shape::object_of(lowerer.types, map, children);
                lowerer.values.push(id);
            }
        }
    }
    lowerer.close_alias(std::ptr::from_ref(root));
    lowerer.values.pop().unwrap_or(TyId::UNKNOWN)
}

/// One pending step.
enum Task<'a> {
    /// Lower a schema node and push its type.
    Enter(&'a Value),
    /// Expand a `$ref` target (with its reference text) unless it is already on the path.
    Ref(&'a Value, &'a str),
    /// The `$ref` target's expansion is over.
    PopRef(*const Value),
    /// Pop a node's child types (and its parts) and push its type.
    Build(Plan),
    /// Push the literal type of a `const`/`enum` value.
    Value(&'a Value),
    /// Pop `n` element types, push the tuple.
    ValueArray(usize),
    /// Pop one type per entry, push the object literal type.
    ValueObject(&'a serde_json::Map<String, Value>),
}

/// How to assemble a node from its children's types; its parts are the top `parts` entries
/// of [`Lowerer::parts`] (plans are built in LIFO order, so the stack discipline holds).
#[derive(Clone, Copy)]
struct Plan {
    parts: usize,
    nullable: bool,
    children: usize,
}

/// One part of a node's intersection.
enum Part<'a> {
    /// A type known without children.
    Leaf(TyId),
    /// One child's type (`$ref`, an `allOf` branch, a composite `const`).
    Child,
    /// The union of `n` children (`oneOf`, `anyOf`, `enum`).
    Union(usize),
    /// The only `type` alternative.
    Alt(Alt<'a>),
    /// The union of the `type` alternatives (more than one).
    Alts(Vec<Alt<'a>>),
}

/// One alternative of `type`.
enum Alt<'a> {
    Leaf(TyId),
    Array(ArrayPlan),
    Object(ObjectPlan<'a>),
}

struct Lowerer<'a, 't> {
    root: &'a Value,
    types: &'t mut Types<'a>,
    tasks: Vec<Task<'a>>,
    values: Vec<TyId>,
    /// The parts of the plans not built yet (see [`Plan`]).
    parts: Vec<Part<'a>>,
    /// Reused buffers: a node's children while planning, their types while building.
    scratch: Vec<Child<'a>>,
    ids: Vec<TyId>,
    active: HashSet<*const Value>,
    /// The alias of each active target that recurred during its expansion.
    recursive: HashMap<*const Value, u32>,
    budget: usize,
}

impl<'a> Lowerer<'a, '_> {
    /// The alias of the active target `key` (created at its first recurrence).
    fn alias_for(&mut self, key: *const Value, target: &Value, reference: &str) -> u32 {
        if let Some(index) = self.recursive.get(&key) {
            return *index;
        }
        let index = self.types.new_alias(alias_hint(target, reference));
        self.recursive.insert(key, index);
        index
    }

    /// The expansion of `key` is over: if it recurred, its type becomes the alias.
    fn close_alias(&mut self, key: *const Value) {
        if let Some(index) = self.recursive.remove(&key) {
            let body = self.values.pop().unwrap_or(TyId::UNKNOWN);
            self.types.set_alias_body(index, body);
            let id = self.types.add(Ty::Alias(index));
            self.values.push(id);
        }
    }

    fn pop(&mut self, n: usize) -> Vec<TyId> {
        self.values.split_off(self.values.len().saturating_sub(n))
    }

    fn enter(&mut self, node: &'a Value) {
        if self.budget == 0 {
            self.values.push(TyId::UNKNOWN);
            return;
        }
        self.budget -= 1;
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return self.values.push(TyId::JSON),
            Value::Bool(false) => return self.values.push(TyId::NEVER),
            _ => return self.values.push(TyId::UNKNOWN),
        };
        let k = Keywords::scan(map);
        let parts_before = self.parts.len();
        let mut children = std::mem::take(&mut self.scratch);
        for reference in k.refs.into_iter().flatten() {
            let resolved = reference
                .as_str()
                .and_then(|r| Some((resolve(self.root, r)?, r)));
            match resolved {
                Some((target, reference)) => {
                    self.parts.push(Part::Child);
                    children.push(Child::Ref(target, reference));
                }
                None => self.parts.push(Part::Leaf(TyId::UNKNOWN)),
            }
        }
        self.base(&k, &mut children);
        if let Some(branches) = k.all_of {
            match branches.as_array() {
                Some(branches) => {
                    for branch in branches {
                        self.parts.push(Part::Child);
                        children.push(Child::Schema(branch));
                    }
                }
                None => self.parts.push(Part::Leaf(TyId::UNKNOWN)),
            }
        }
        for branches in [k.one_of, k.any_of].into_iter().flatten() {
            match branches.as_array() {
                Some(branches) if !branches.is_empty() => {
                    self.parts.push(Part::Union(branches.len()));
                    children.extend(branches.iter().map(Child::Schema));
                }
                _ => self.parts.push(Part::Leaf(TyId::UNKNOWN)),
            }
        }
        let plan = Plan {
            parts: self.parts.len() - parts_before,
            nullable: k.nullable,
            children: children.len(),
        };
        if children.is_empty() {
            self.build(plan);
        } else {
            self.tasks.push(Task::Build(plan));
            self.tasks
                .extend(children.drain(..).rev().map(|child| match child {
                    Child::Schema(schema) => Task::Enter(schema),
                    Child::Ref(target, reference) => Task::Ref(target, reference),
                    Child::Value(value) => Task::Value(value),
                }));
        }
        self.scratch = children;
    }

    /// The base part: `const`, else `enum`, else the `type` alternatives (declared, or inferred
    /// from object/array keywords).
    fn base(&mut self, k: &Keywords<'a>, children: &mut Vec<Child<'a>>) {
        if let Some(value) = k.konst {
            self.parts.push(Part::Child);
            children.push(Child::Value(value));
            return;
        }
        if let Some(entries) = k.enumeration {
            let Some(entries) = entries.as_array() else {
                self.parts.push(Part::Leaf(TyId::UNKNOWN));
                return;
            };
            let before = children.len();
            children.extend(
                entries
                    .iter()
                    .filter(|v| shape::value_has_type(v, k.ty))
                    .map(Child::Value),
            );
            self.parts.push(Part::Union(children.len() - before));
            return;
        }
        // One alternative (the common case) goes without a vector.
        let mut first: Option<Alt<'a>> = None;
        let mut alts = Vec::new();
        let mut add = |name: Option<&str>, children: &mut Vec<Child<'a>>| {
            let alt = match name {
                Some("string") => Alt::Leaf(TyId::STRING),
                Some("number" | "integer") => Alt::Leaf(TyId::NUMBER),
                Some("boolean") => Alt::Leaf(TyId::BOOLEAN),
                Some("null") => Alt::Leaf(TyId::NULL),
                Some("object") => Alt::Object(shape::object_plan(k, self.root, children)),
                Some("array") => Alt::Array(shape::array_plan(k, children)),
                _ => Alt::Leaf(TyId::UNKNOWN),
            };
            if first.is_none() && alts.is_empty() {
                first = Some(alt);
            } else {
                alts.extend(first.take());
                alts.push(alt);
            }
        };
        match k.ty {
            Some(Value::String(name)) => add(Some(name), children),
            Some(Value::Array(names)) => names.iter().for_each(|n| add(n.as_str(), children)),
            Some(_) => add(None, children),
            None => {
                if k.object_keyword {
                    add(Some("object"), children);
                }
                if k.array_keyword {
                    add(Some("array"), children);
                }
            }
        }
        if let Some(alt) = first {
            self.parts.push(Part::Alt(alt));
        } else if !alts.is_empty() {
            self.parts.push(Part::Alts(alts));
        }
    }

    fn build(&mut self, plan: Plan) {
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(
            self.values
                .drain(self.values.len().saturating_sub(plan.children)..),
        );
        let mut children = ids.iter().copied();
        let first = self.parts.len().saturating_sub(plan.parts);
        let types = &mut *self.types;
        // One part (the common case) is its own type: no intersection to gather.
        let mut id = if plan.parts == 1 {
            let part = self.parts.pop();
            part.map_or(TyId::UNKNOWN, |part| part_type(types, part, &mut children))
        } else if plan.parts > 0 {
            let parts = self.parts.drain(first..);
            let parts = parts.map(|part| part_type(types, part, &mut children));
            let parts = parts.collect();
            shape::intersect(self.types, parts)
        } else {
            TyId::JSON
        };
        if plan.nullable {
            id = shape::with_null(self.types, id);
        }
        self.values.push(id);
        self.ids = ids;
    }

    /// The type of a `const`/`enum` value: scalars as literals (pushed now), composites
    /// structurally (arrays as tuples, objects as object literals; assembled by later tasks).
    fn value(&mut self, value: &'a Value) {
        if self.budget == 0 {
            return self.values.push(TyId::UNKNOWN);
        }
        self.budget -= 1;
        match value {
            Value::Array(items) => {
                self.tasks.push(Task::ValueArray(items.len()));
                self.tasks.extend(items.iter().rev().map(Task::Value));
            }
            Value::Object(map) => {
                self.tasks.push(Task::ValueObject(map));
                self.tasks.extend(map.values().rev().map(Task::Value));
            }
            scalar => {
                let id = literal(self.types, scalar);
                self.values.push(id);
            }
        }
    }
}

/// The type of one part of a node, its children taken from `children`.
fn part_type<'a>(
    types: &mut Types<'a>,
    part: Part<'a>,
    children: &mut impl Iterator<Item = TyId>,
) -> TyId {
    match part {
        Part::Leaf(id) => id,
        Part::Child => children.next().unwrap_or(TyId::UNKNOWN),
        Part::Union(n) => {
            let members: Vec<TyId> = children.by_ref().take(n).collect();
            union_or_unknown(types, members)
        }
        Part::Alt(alt) => alt_type(types, alt, children),
        Part::Alts(alts) => {
            let mut ids = Vec::with_capacity(alts.len());
            for alt in alts {
                let id = alt_type(types, alt, children);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            union_or_unknown(types, ids)
        }
    }
}

/// The exact union of `members`, or unknown when one of them is.
fn union_or_unknown(types: &mut Types<'_>, members: Vec<TyId>) -> TyId {
    if members.contains(&TyId::UNKNOWN) {
        TyId::UNKNOWN
    } else {
        types.union_exact(members)
    }
}

fn alt_type<'a>(
    types: &mut Types<'a>,
    alt: Alt<'a>,
    children: &mut impl Iterator<Item = TyId>,
) -> TyId {
    match alt {
        Alt::Leaf(id) => id,
        Alt::Array(plan) => shape::build_array(types, plan, children),
        Alt::Object(plan) => shape::build_object(types, plan, children),
    }
}
