//! JSON Schema → [`Py`], node by node: a node that cannot be typed degrades to `Any` (or
//! `dict[str, Any]` / `list[Any]`) where it stands; the rest of the schema keeps its types.
//!
//! A node's type combines its parts: `$ref` (followed; a target already being expanded on the
//! current path — a cycle — is `Any`), the base type (`const`, else `enum`, else the `type`
//! alternatives or the type its object/array keywords imply), every `allOf` branch, and one
//! union per `anyOf`/`oneOf`. Python has no intersection type: parts that say nothing
//! (`Any`, `dict[str, Any]`, `list[Any]`) drop out, several object classes merge into one, and
//! anything else that disagrees is `Any`. `nullable: true` adds `None`.
//!
//! Objects with properties become `TypedDict` classes (nested classes are defined first);
//! objects without become `dict[str, T]`. Recursion is bounded: [`MAX_SCHEMA_DEPTH`] levels of
//! schema, [`MAX_TYPE_DEPTH`] levels of brackets inside one annotation (CPython's parser stops
//! at 200 nested brackets), and [`NODE_BUDGET`] nodes per schema (a `$ref` fan-out cannot
//! explode); past any of them the node is `Any`.

use serde_json::{Map, Value};

use super::ir::{Classes, Field, Lit, Py};
use super::names::{ClassNames, camel};

/// Deepest schema nesting followed.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 48;
/// Deepest bracket nesting inside one annotation.
pub(crate) const MAX_TYPE_DEPTH: usize = 32;
/// Schema nodes one lowering may visit.
pub(crate) const NODE_BUDGET: usize = 100_000;

/// The largest integer a JSON number carries exactly (docs/CONTRACTS.md, "Numbers").
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Lowers the schemas of one SDK into one class table.
pub(crate) struct Lowerer<'c> {
    pub(crate) classes: &'c mut Classes,
    pub(crate) names: &'c mut ClassNames,
}

/// The state of lowering one schema document.
struct Walk<'a, 'l, 'c> {
    lowerer: &'l mut Lowerer<'c>,
    root: &'a Value,
    budget: usize,
    /// `$ref` targets being expanded (the root counts as one).
    active: Vec<*const Value>,
}

impl Lowerer<'_> {
    /// The type of the values `schema` accepts; objects become classes named from `hint`.
    pub(crate) fn lower(&mut self, schema: &Value, hint: &str) -> Py {
        let mut walk = Walk {
            lowerer: self,
            root: schema,
            budget: NODE_BUDGET,
            active: vec![std::ptr::from_ref(schema)],
        };
        walk.node(schema, hint, 0, 0, false)
    }
}

impl<'a> Walk<'a, '_, '_> {
    /// `depth`: schema levels above; `brackets`: annotation nesting at this node; `shared`:
    /// the node is a `$ref` target (its class is reused by equal references).
    fn node(
        &mut self,
        node: &'a Value,
        hint: &str,
        depth: usize,
        brackets: usize,
        shared: bool,
    ) -> Py {
        if depth > MAX_SCHEMA_DEPTH || brackets > MAX_TYPE_DEPTH || self.budget == 0 {
            return Py::Any;
        }
        self.budget -= 1;
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(false) => return Py::Never,
            _ => return Py::Any,
        };
        let mut parts = Vec::new();
        for key in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.get(key) {
                parts.push(self.reference(reference, depth, brackets));
            }
        }
        if let Some(base) = self.base(map, hint, depth, brackets, shared) {
            parts.push(base);
        }
        if let Some(branches) = map.get("allOf") {
            match branches.as_array() {
                Some(branches) => {
                    for branch in branches {
                        parts.push(self.node(branch, hint, depth + 1, brackets, false));
                    }
                }
                None => parts.push(Py::Any),
            }
        }
        for key in ["oneOf", "anyOf"] {
            let Some(branches) = map.get(key) else {
                continue;
            };
            let union = match branches.as_array() {
                Some(branches) if !branches.is_empty() => {
                    let members = branches
                        .iter()
                        .enumerate()
                        .map(|(i, branch)| {
                            let hint = branch_hint(branch, hint, i);
                            self.node(branch, &hint, depth + 1, brackets, false)
                        })
                        .collect();
                    Py::union(members)
                }
                _ => Py::Any,
            };
            parts.push(union);
        }
        let ty = self.combine(parts, hint);
        if map.get("nullable") == Some(&Value::Bool(true)) {
            Py::union(vec![ty, Py::None])
        } else {
            ty
        }
    }

    fn reference(&mut self, reference: &Value, depth: usize, brackets: usize) -> Py {
        let Some((text, target)) = reference.as_str().and_then(|r| {
            Some((
                r,
                dsh_tools::subset::resolve_ref(self.root, r).map(|(node, _)| node)?,
            ))
        }) else {
            return Py::Any;
        };
        let key = std::ptr::from_ref(target);
        if self.active.contains(&key) {
            return Py::Any;
        }
        self.active.push(key);
        let hint = ref_hint(target, text);
        let ty = self.node(target, &hint, depth + 1, brackets, true);
        self.active.pop();
        ty
    }

    /// `const`, else `enum`, else the `type` alternatives (declared, or implied by object and
    /// array keywords). `None` when the node declares no base type.
    fn base(
        &mut self,
        map: &'a Map<String, Value>,
        hint: &str,
        depth: usize,
        brackets: usize,
        shared: bool,
    ) -> Option<Py> {
        if let Some(value) = map.get("const") {
            return Some(literal(value, brackets));
        }
        let declared = map.get("type");
        if let Some(entries) = map.get("enum") {
            let Some(entries) = entries.as_array() else {
                return Some(Py::Any);
            };
            let members: Vec<Py> = entries
                .iter()
                .filter(|v| value_has_type(v, declared))
                .map(|v| literal(v, brackets))
                .collect();
            return Some(if members.is_empty() {
                Py::Any
            } else {
                Py::union(members)
            });
        }
        let mut alternatives: Vec<&str> = match declared {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().map(|n| n.as_str().unwrap_or("?")).collect(),
            Some(_) => vec!["?"],
            None => Vec::new(),
        };
        if declared.is_none() {
            if map.keys().any(|k| OBJECT_KEYWORDS.contains(&k.as_str())) {
                alternatives.push("object");
            }
            if map.keys().any(|k| ARRAY_KEYWORDS.contains(&k.as_str())) {
                alternatives.push("array");
            }
        }
        if alternatives.is_empty() {
            return None;
        }
        let members = alternatives
            .into_iter()
            .map(|name| match name {
                "string" => Py::Str,
                "integer" => Py::Int,
                "number" => Py::Float,
                "boolean" => Py::Bool,
                "null" => Py::None,
                "object" => self.object(map, hint, depth, brackets, shared),
                "array" => self.array(map, hint, depth, brackets),
                _ => Py::Any,
            })
            .collect();
        Some(Py::union(members))
    }

    fn object(
        &mut self,
        map: &'a Map<String, Value>,
        hint: &str,
        depth: usize,
        brackets: usize,
        shared: bool,
    ) -> Py {
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty());
        let extra = match map.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => Some(schema),
            _ => None,
        };
        let patterns: Vec<&'a Value> = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .map(|p| p.values().collect())
            .unwrap_or_default();
        if extra.is_some() || !patterns.is_empty() {
            // Keys beyond the declared ones, of other types: `TypedDict` cannot say it (its
            // classes are closed); a dict whose values are any of the types can.
            let value_hint = format!("{hint}Value");
            let mut members: Vec<Py> = properties
                .into_iter()
                .flatten()
                .map(|(_, schema)| schema)
                .chain(patterns)
                .chain(extra)
                .map(|schema| self.node(schema, &value_hint, depth + 1, brackets + 1, false))
                .collect();
            if extra.is_none() && map.get("additionalProperties") != Some(&Value::Bool(false)) {
                members.push(Py::Any);
            }
            return Py::Dict(Box::new(Py::union(members)));
        }
        let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
        let properties = match properties {
            Some(properties) => properties,
            // `{}` and nothing else: a class without keys.
            None if closed => &*NO_PROPERTIES,
            None => return Py::Dict(Box::new(Py::Any)),
        };
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = properties
            .iter()
            .map(|(key, schema)| {
                let field_hint =
                    format!("{hint}{}", camel(key).unwrap_or_else(|| "Field".to_owned()));
                Field {
                    key: key.clone(),
                    required: required.contains(&key.as_str()),
                    ty: self.node(schema, &field_hint, depth + 1, 1, false),
                    doc: self.description(schema),
                }
            })
            .collect();
        let names = &mut *self.lowerer.names;
        Py::Class(
            self.lowerer
                .classes
                .add(|| names.claim(hint), fields, shared),
        )
    }

    fn array(
        &mut self,
        map: &'a Map<String, Value>,
        hint: &str,
        depth: usize,
        brackets: usize,
    ) -> Py {
        let item_hint = format!("{hint}Item");
        let tuple = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), rest) => Some((prefix, rest)),
            (_, Some(Value::Array(prefix))) => Some((prefix, map.get("additionalItems"))),
            _ => None,
        };
        // JSON arrays arrive as Python lists: a tuple schema is a list of its element types.
        let item = match (tuple, map.get("items")) {
            (Some((prefix, rest)), _) => {
                let mut members: Vec<Py> = prefix
                    .iter()
                    .map(|schema| self.node(schema, &item_hint, depth + 1, brackets + 1, false))
                    .collect();
                match rest {
                    Some(Value::Bool(false)) => {}
                    Some(schema @ Value::Object(_)) => {
                        members.push(self.node(schema, &item_hint, depth + 1, brackets + 1, false));
                    }
                    _ => members.push(Py::Any),
                }
                Py::union(members)
            }
            (None, Some(schema @ (Value::Object(_) | Value::Bool(false)))) => {
                self.node(schema, &item_hint, depth + 1, brackets + 1, false)
            }
            _ => Py::Any,
        };
        Py::List(Box::new(item))
    }

    /// Python cannot intersect: unconstrained parts drop out, object classes merge, and parts
    /// that still disagree give `Any`.
    fn combine(&mut self, parts: Vec<Py>, hint: &str) -> Py {
        let mut distinct: Vec<Py> = Vec::new();
        for part in parts {
            if !distinct.contains(&part) {
                distinct.push(part);
            }
        }
        let constrained: Vec<Py> = distinct
            .iter()
            .filter(|p| !p.is_unconstrained())
            .cloned()
            .collect();
        match constrained.len() {
            0 => {
                let vague: Vec<&Py> = distinct.iter().filter(|p| **p != Py::Any).collect();
                match vague.as_slice() {
                    [only] => (*only).clone(),
                    _ => Py::Any,
                }
            }
            1 => constrained.into_iter().next().unwrap_or(Py::Any),
            _ => self.merge_classes(&constrained, hint).unwrap_or(Py::Any),
        }
    }

    /// One class holding the fields of `parts`, when every part is a class (a field declared
    /// twice keeps its first type and is required if either declares it so).
    fn merge_classes(&mut self, parts: &[Py], hint: &str) -> Option<Py> {
        let mut fields: Vec<Field> = Vec::new();
        for part in parts {
            let Py::Class(index) = part else {
                return None;
            };
            for field in &self.lowerer.classes.get(*index)?.fields {
                match fields.iter_mut().find(|f| f.key == field.key) {
                    Some(existing) => existing.required |= field.required,
                    None => fields.push(field.clone()),
                }
            }
        }
        let names = &mut *self.lowerer.names;
        Some(Py::Class(self.lowerer.classes.add(
            || names.claim(hint),
            fields,
            false,
        )))
    }

    /// A property's doc: the TypeScript SDK's member doc (its description, else its `$ref`
    /// target's; its branches' descriptions; its bounds and formats as `@minimum 1` tags).
    fn description(&self, schema: &Value) -> Option<String> {
        crate::sdk::doc::member_doc(schema, self.root)
    }
}

/// The properties of a closed object that declares none.
static NO_PROPERTIES: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// Keywords that imply an object when `type` is absent.
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "minProperties",
    "maxProperties",
];

/// Keywords that imply an array when `type` is absent.
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "contains",
    "uniqueItems",
];

/// The hint of a `oneOf`/`anyOf` branch: its title, else the node's hint with its position.
fn branch_hint(branch: &Value, hint: &str, index: usize) -> String {
    match branch.get("title").and_then(Value::as_str).and_then(camel) {
        Some(title) => title,
        None => format!("{hint}Option{}", index + 1),
    }
}

/// The hint of a `$ref` target: its title, else the reference's last token, else `Ref`.
fn ref_hint(target: &Value, reference: &str) -> String {
    target
        .get("title")
        .and_then(Value::as_str)
        .and_then(camel)
        .or_else(|| camel(reference.rsplit('/').next().unwrap_or_default()))
        .unwrap_or_else(|| "Ref".to_owned())
}

/// The type of one `const`/`enum` value: a literal for strings, booleans and safe integers,
/// `None`, `float` for other numbers; composite values by their container type.
fn literal(value: &Value, brackets: usize) -> Py {
    if brackets >= MAX_TYPE_DEPTH {
        return Py::Any;
    }
    match value {
        Value::Null => Py::None,
        Value::Bool(b) => Py::Literal(vec![Lit::Bool(*b)]),
        Value::String(s) => Py::Literal(vec![Lit::Str(s.clone())]),
        Value::Number(n) => {
            let x = dsh_tools::json::number_to_f64(n);
            if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER {
                // Exact: |x| ≤ 2^53 − 1.
                #[expect(clippy::cast_possible_truncation, reason = "integral and within ±2^53")]
                let int = x as i64;
                Py::Literal(vec![Lit::Int(int)])
            } else {
                Py::Float
            }
        }
        Value::Array(_) => Py::List(Box::new(Py::Any)),
        Value::Object(_) => Py::Dict(Box::new(Py::Any)),
    }
}

/// Whether an `enum` entry can satisfy the declared `type` (all entries when none is declared).
fn value_has_type(value: &Value, declared: Option<&Value>) -> bool {
    let matches = |name: &Value| match (name.as_str(), value) {
        (Some("string"), Value::String(_))
        | (Some("number"), Value::Number(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("null"), Value::Null)
        | (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_)) => true,
        (Some("integer"), Value::Number(n)) => dsh_tools::json::is_integer(n),
        _ => false,
    };
    match declared {
        None => true,
        Some(Value::Array(names)) => names.iter().any(matches),
        Some(name) => matches(name),
    }
}
