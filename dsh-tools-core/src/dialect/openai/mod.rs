//! OpenAI strict mode (Structured Outputs for function calling, `"strict": true`).
//!
//! What strict mode accepts (OpenAI's "supported schemas"): `type` (a string, or a type array
//! with `"null"`), `description`, `title`, `enum`, `anyOf` (not at the root), `$ref` with
//! `$defs`/`definitions` (recursion allowed), objects whose every property is listed in
//! `required` and that set `additionalProperties: false`, `items`, `minItems`/`maxItems`,
//! `pattern` and a fixed list of string `format`s, and `minimum`/`maximum`/
//! `exclusiveMinimum`/`exclusiveMaximum`/`multipleOf`. Limits: 5,000 properties, 10 levels of
//! object nesting, 1,000 enum values, 120,000 characters of names and enum values.
//!
//! The rendering:
//! - every property becomes required; a property that was optional and does not accept `null`
//!   becomes nullable (`"type": ["string", "null"]`, or `anyOf` with `{"type": "null"}`), so
//!   the model sends `null` where it would have left the property out
//!   ([`restore_omitted`](crate::dialect::restore_omitted) turns those back);
//! - every object gets `additionalProperties: false` (an object that declares properties is
//!   closed, which only stops a model from inventing keys the tool ignores);
//! - `oneOf` becomes `anyOf`, `const` a one-member `enum`, `allOf` is merged, a `$ref` with
//!   siblings is inlined (a recursive one keeps the `$ref` and loses the siblings), a type array
//!   of several non-null types becomes an `anyOf` split by type;
//! - unsupported constraints (`minLength`, `maxLength`, `uniqueItems`, `not`, unknown `format`s,
//!   …) are dropped ([`IssueKind::Dropped`]); annotations other than `description`/`title`
//!   silently;
//! - shapes strict mode cannot express are [`IssueKind::Unsupported`]: maps (a schema-valued
//!   `additionalProperties`, `patternProperties`, an object that declares no properties), nodes
//!   without a type (`{}`, `true`), arrays without `items`, tuples, `false`, unresolvable
//!   `$ref`s, conflicting `allOf` branches, and the limits above.

mod limits;
mod typed;

use serde_json::{Map, Value};

use super::issue::{IssueKind, Issues, child, item};
use super::merge::{constraints_besides, merge_into, presence_only};
use super::refs::{is_annotation, resolve, type_of};

pub(crate) use limits::check_limits;

/// Schema levels below the root after which a node is unsupported.
const MAX_DEPTH: usize = 32;

/// Nodes one rendering may produce (inlining `$ref`s that have siblings can grow it).
const NODE_BUDGET: usize = 10_000;

/// The string formats strict mode supports.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords kept as they are on a node of the type they apply to.
const KEPT: &[&str] = &[
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Constraints strict mode drops (the schema accepts more; the tool still checks them).
const DROPPED: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
];

/// The strict renderer over one (root-flattened, normalised) document.
pub(crate) struct Strict<'a> {
    doc: &'a Value,
    pub(crate) issues: Issues,
    inlining: Vec<String>,
    budget: usize,
}

impl<'a> Strict<'a> {
    pub(crate) fn new(doc: &'a Value) -> Self {
        Self {
            doc,
            issues: Issues::default(),
            inlining: Vec::new(),
            budget: NODE_BUDGET,
        }
    }

    fn unsupported(&mut self, path: &str, message: impl Into<String>) -> Value {
        self.issues.push(path, IssueKind::Unsupported, message);
        Value::Object(Map::new())
    }

    /// Renders the node `value` found at `path`.
    pub(crate) fn node(&mut self, value: &Value, path: &str, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return self.unsupported(
                path,
                format!("nested deeper than {MAX_DEPTH} schema levels"),
            );
        }
        if self.budget == 0 {
            return self.unsupported(path, format!("the schema grows past {NODE_BUDGET} nodes"));
        }
        self.budget -= 1;
        let map = match value {
            Value::Object(map) => map,
            Value::Bool(true) => {
                return self
                    .unsupported(path, "`true` accepts any value; strict mode needs a type");
            }
            Value::Bool(false) => return self.unsupported(path, "`false` accepts no value"),
            other => return self.unsupported(path, format!("not a schema ({})", type_of(other))),
        };
        if map.contains_key("$ref") {
            return self.reference(map, path, depth);
        }
        if let Some(branches) = map.get("allOf") {
            let mut merged = map.clone();
            merged.shift_remove("allOf");
            for (i, branch) in branches.as_array().into_iter().flatten().enumerate() {
                match branch {
                    Value::Object(branch) => {
                        for keyword in merge_into(&mut merged, branch) {
                            self.unsupported(
                                &format!("{}/{keyword}", item(path, "allOf", i)),
                                "conflicts with another `allOf` branch; strict mode cannot merge them",
                            );
                        }
                    }
                    Value::Bool(true) => {}
                    _ => {
                        self.unsupported(
                            &item(path, "allOf", i),
                            "an `allOf` branch that is not a schema object",
                        );
                    }
                }
            }
            return self.node(&Value::Object(merged), path, depth);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(keyword)
                && let Some(out) = self.union(map, keyword, branches, path, depth)
            {
                return out;
            }
        }
        self.typed(map, path, depth)
    }

    /// A `$ref` alone stays; with siblings its target is inlined under them.
    fn reference(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Value {
        let at = child(path, "$ref");
        let Some(reference) = map.get("$ref").and_then(Value::as_str) else {
            return self.unsupported(&at, "`$ref` must be a string");
        };
        let Some((target, target_path)) = resolve(self.doc, reference) else {
            return self.unsupported(
                &at,
                format!("\"{reference}\" does not resolve inside the schema"),
            );
        };
        let mut out = Map::new();
        out.insert("$ref".into(), reference.into());
        let siblings: Vec<&String> = map.keys().filter(|k| *k != "$ref").collect();
        if siblings.is_empty() {
            return Value::Object(out);
        }
        let Value::Object(target) = target else {
            return self.node(target, &target_path, depth + 1);
        };
        if self.inlining.contains(&target_path) {
            for key in siblings {
                if key == "$defs" || key == "definitions" {
                    out.insert(
                        key.clone(),
                        self.defs(&map[key.as_str()], &child(path, key), depth),
                    );
                } else if !is_annotation(key) {
                    self.issues.dropped(
                        path,
                        key,
                        "beside a recursive `$ref`, which stays a `$ref`",
                    );
                }
            }
            return Value::Object(out);
        }
        let mut merged = map.clone();
        merged.shift_remove("$ref");
        for keyword in merge_into(&mut merged, target) {
            self.unsupported(
                &child(path, &keyword),
                format!(
                    "conflicts with the target of \"{reference}\"; strict mode cannot merge them"
                ),
            );
        }
        self.inlining.push(target_path.clone());
        let rendered = self.node(&Value::Object(merged), &target_path, depth + 1);
        self.inlining.pop();
        rendered
    }

    /// `anyOf`/`oneOf`: the branches (with the node's other constraints pushed into each)
    /// under `anyOf`. `None` when the union only constrains presence and was dropped.
    fn union(
        &mut self,
        map: &Map<String, Value>,
        keyword: &str,
        branches: &Value,
        path: &str,
        depth: usize,
    ) -> Option<Value> {
        let Value::Array(list) = branches else {
            return Some(self.unsupported(&child(path, keyword), "must be an array of schemas"));
        };
        if list.iter().all(presence_only) {
            self.issues.dropped(
                path,
                keyword,
                "it only says which properties must be present",
            );
            let mut rest = map.clone();
            rest.shift_remove(keyword);
            return Some(self.node(&Value::Object(rest), path, depth));
        }
        let siblings = constraints_besides(map, &["anyOf", "oneOf"]);
        if keyword == "anyOf" && map.contains_key("oneOf") {
            self.unsupported(path, "both `anyOf` and `oneOf`");
        }
        let mut rendered = Vec::with_capacity(list.len());
        for (i, branch) in list.iter().enumerate() {
            let branch = match branch {
                Value::Object(branch) if !siblings.is_empty() => {
                    let mut merged = branch.clone();
                    for key in merge_into(&mut merged, &siblings) {
                        self.unsupported(
                            &child(&item(path, keyword, i), &key),
                            "conflicts with the same keyword beside the union",
                        );
                    }
                    Value::Object(merged)
                }
                other => other.clone(),
            };
            rendered.push(self.node(&branch, &item(path, keyword, i), depth + 1));
        }
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(rendered));
        self.annotations_and_defs(map, &mut out, path, depth);
        Some(Value::Object(out))
    }

    fn defs(&mut self, value: &Value, path: &str, depth: usize) -> Value {
        match value {
            Value::Object(defs) => Value::Object(
                defs.iter()
                    .map(|(name, def)| {
                        (name.clone(), self.node(def, &child(path, name), depth + 1))
                    })
                    .collect(),
            ),
            _ => self.unsupported(path, "must be an object of schemas"),
        }
    }

    fn annotations_and_defs(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        for (key, value) in map {
            match key.as_str() {
                "description" | "title" => {
                    out.insert(key.clone(), value.clone());
                }
                "$defs" | "definitions" => {
                    let defs = self.defs(value, &child(path, key), depth);
                    out.insert(key.clone(), defs);
                }
                _ => {}
            }
        }
    }
}
