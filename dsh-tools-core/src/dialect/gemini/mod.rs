//! Gemini function declarations: the OpenAPI 3.0 `Schema` subset of the Gemini API.
//!
//! Gemini reads one `type` per node (`string`, `number`, `integer`, `boolean`, `array`,
//! `object`, `null`), `nullable`, `description`, `enum` (strings only), `format` (`enum` and
//! `date-time` on strings, `float`/`double` on numbers, `int32`/`int64` on integers),
//! `properties`, `required`, `minProperties`/`maxProperties`, `items` (required on every
//! array), `minItems`/`maxItems`, `minLength`/`maxLength`, `pattern`, `minimum`/`maximum` and
//! `anyOf` (with no keyword beside it). The API rejects unknown fields, `const`,
//! `additionalProperties`, `$ref`, and type names it does not know.
//!
//! The rendering:
//! - `$ref`s are inlined (the schema's own `$defs`); a `$ref` back into a definition already
//!   being inlined on the same path is cut ([`IssueKind::Degraded`]): it becomes the target's
//!   `type` and description only. Inlining stops at 10,000 nodes.
//! - `null` in a type array, a `{"type": "null"}` union branch or a `null` enum member becomes
//!   `nullable: true`; other type arrays and `oneOf` become `anyOf`, with the keywords beside a
//!   union pushed into each branch (`description` into the branches that have none); a union
//!   left with one branch is that branch.
//! - `const` becomes a one-member string `enum`; non-string enums and consts are dropped.
//! - `allOf` is merged; `additionalProperties: false`/`true`, `default`, `examples`, `title`,
//!   `$comment`, `$defs` are removed silently; constraints Gemini lacks (`exclusiveMinimum` on
//!   numbers, `multipleOf`, `uniqueItems`, `not`, map values, …) are dropped
//!   ([`IssueKind::Dropped`]); an integer `exclusiveMinimum: n` becomes `minimum: n + 1`.
//! - An array without `items` gets `items: {}`; an object with no properties has no
//!   `properties` key (Gemini rejects an empty one).

mod typed;

use serde_json::{Map, Value};

use super::issue::{IssueKind, Issues, child, item};
use super::merge::{constraints_besides, merge_into, presence_only};
use super::refs::{resolve, type_of};

/// Schema levels (inlined `$ref`s included) after which a node is cut.
const MAX_DEPTH: usize = 32;

/// Nodes one rendering may produce (`$ref` inlining can grow exponentially).
const NODE_BUDGET: usize = 10_000;

/// Constraint keywords Gemini drops.
const DROPPED: &[&str] = &[
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords kept as they are on a node of the type they apply to.
const KEPT: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// The Gemini renderer over one (root-flattened, normalised) document.
pub(crate) struct Gemini<'a> {
    doc: &'a Value,
    pub(crate) issues: Issues,
    active: Vec<String>,
    budget: usize,
}

impl<'a> Gemini<'a> {
    pub(crate) fn new(doc: &'a Value) -> Self {
        Self {
            doc,
            issues: Issues::default(),
            active: Vec::new(),
            budget: NODE_BUDGET,
        }
    }

    fn degraded(&mut self, path: &str, message: impl Into<String>) -> Map<String, Value> {
        self.issues.push(path, IssueKind::Degraded, message);
        Map::new()
    }

    /// Renders the node `value` found at `path`.
    pub(crate) fn node(&mut self, value: &Value, path: &str, depth: usize) -> Map<String, Value> {
        if depth > MAX_DEPTH {
            return self.degraded(
                path,
                format!(
                    "nested deeper than {MAX_DEPTH} schema levels: replaced with an empty schema"
                ),
            );
        }
        if self.budget == 0 {
            return self.degraded(
                path,
                format!(
                    "inlining `$ref`s exceeds {NODE_BUDGET} nodes: replaced with an empty schema"
                ),
            );
        }
        self.budget -= 1;
        let map = match value {
            Value::Object(map) => map,
            Value::Bool(true) => return Map::new(),
            Value::Bool(false) => {
                return self.degraded(
                    path,
                    "`false` (no value) cannot be expressed: replaced with an empty schema",
                );
            }
            other => return self.degraded(path, format!("not a schema ({})", type_of(other))),
        };
        if map.contains_key("$ref") {
            return self.reference(map, path, depth);
        }
        if let Some(branches) = map.get("allOf") {
            let mut merged = map.clone();
            merged.shift_remove("allOf");
            for (i, branch) in branches.as_array().into_iter().flatten().enumerate() {
                if let Value::Object(branch) = branch {
                    for keyword in merge_into(&mut merged, branch) {
                        self.degraded(
                            &format!("{}/{keyword}", item(path, "allOf", i)),
                            "conflicts with another `allOf` branch: the first declaration is kept",
                        );
                    }
                }
            }
            return self.node(&Value::Object(merged), path, depth);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                if branches.iter().all(presence_only) {
                    self.issues.dropped(
                        path,
                        keyword,
                        "it only says which properties must be present",
                    );
                    let mut rest = map.clone();
                    rest.shift_remove(keyword);
                    return self.node(&Value::Object(rest), path, depth);
                }
                let siblings = constraints_besides(map, &["anyOf", "oneOf"]);
                let mut rendered = Vec::with_capacity(branches.len());
                for (i, branch) in branches.iter().enumerate() {
                    let at = item(path, keyword, i);
                    let branch = match branch {
                        Value::Object(branch) if !siblings.is_empty() => {
                            let mut merged = branch.clone();
                            for key in merge_into(&mut merged, &siblings) {
                                self.degraded(&child(&at, &key), "conflicts with the same keyword beside the union: the branch's is kept");
                            }
                            Value::Object(merged)
                        }
                        other => other.clone(),
                    };
                    rendered.push(self.node(&branch, &at, depth + 1));
                }
                return union(rendered, map.get("description"));
            }
        }
        self.typed(map, path, depth)
    }

    /// Inlines the target of a `$ref` under its siblings, or cuts a recursive one.
    fn reference(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Map<String, Value> {
        let at = child(path, "$ref");
        let mut rest = map.clone();
        rest.shift_remove("$ref");
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| resolve(self.doc, reference));
        let Some((target, target_path)) = target else {
            self.issues.push(
                &at,
                IssueKind::Degraded,
                "does not resolve inside the schema: removed",
            );
            return self.node(&Value::Object(rest), path, depth);
        };
        if self.active.contains(&target_path) {
            self.issues.push(
                &at,
                IssueKind::Degraded,
                format!("recursive reference to {target_path}: Gemini cannot express recursion, so it is cut here (type and description only)"),
            );
            let mut stub = Map::new();
            let known = |t: &&Value| {
                t.as_str()
                    .is_some_and(|t| super::refs::TYPE_NAMES.contains(&t))
            };
            if let Some(ty) = target.get("type").filter(known) {
                stub.insert("type".into(), ty.clone());
            }
            if let Some(description) = rest
                .get("description")
                .or_else(|| target.get("description"))
            {
                stub.insert("description".into(), description.clone());
            }
            if stub.get("type") == Some(&Value::from("array")) {
                stub.insert("items".into(), Value::Object(Map::new()));
            }
            return stub;
        }
        if let Value::Object(target) = target {
            for keyword in merge_into(&mut rest, target) {
                self.degraded(
                    &child(path, &keyword),
                    "conflicts with the `$ref` target: the sibling is kept",
                );
            }
        }
        self.active.push(target_path.clone());
        let rendered = self.node(&Value::Object(rest), &target_path, depth + 1);
        self.active.pop();
        rendered
    }
}

/// Whether a rendered node only says "null".
fn is_null(node: &Map<String, Value>) -> bool {
    node.get("type") == Some(&Value::from("null"))
        && node.keys().all(|k| k == "type" || k == "description")
}

fn mark_nullable(node: &mut Map<String, Value>) {
    if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        for branch in branches {
            if let Value::Object(branch) = branch {
                mark_nullable(branch);
            }
        }
    } else if node.contains_key("type") && !node.contains_key("nullable") && !is_null(node) {
        let mut out = Map::new();
        for (k, v) in std::mem::take(node) {
            let typed = k == "type";
            out.insert(k, v);
            if typed {
                out.insert("nullable".into(), true.into());
            }
        }
        *node = out;
    }
}

/// Assembles rendered union branches: `null` branches become `nullable`, one branch is itself
/// (the node's description winning), several go under a lone `anyOf`.
fn union(branches: Vec<Map<String, Value>>, description: Option<&Value>) -> Map<String, Value> {
    // A branch that is itself a lone `anyOf` adds its branches (a union of unions).
    let mut flat: Vec<Map<String, Value>> = Vec::with_capacity(branches.len());
    for branch in branches {
        match branch.get("anyOf") {
            Some(Value::Array(inner)) if branch.len() == 1 => {
                flat.extend(inner.iter().filter_map(|b| b.as_object().cloned()));
            }
            _ => flat.push(branch),
        }
    }
    let before = flat.len();
    let mut rest: Vec<Map<String, Value>> = flat.into_iter().filter(|b| !is_null(b)).collect();
    let nullable = rest.len() < before;
    if rest.is_empty() {
        let mut out = Map::new();
        out.insert("type".into(), "null".into());
        if let Some(description) = description {
            out.insert("description".into(), description.clone());
        }
        return out;
    }
    if nullable {
        rest.iter_mut().for_each(mark_nullable);
    }
    if rest.len() == 1 {
        let mut only = rest.pop().unwrap_or_default();
        if let Some(description) = description {
            only.insert("description".into(), description.clone());
        }
        return only;
    }
    let branches = rest
        .into_iter()
        .map(|mut branch| {
            if let Some(description) = description.filter(|_| !branch.contains_key("description")) {
                branch.insert("description".into(), description.clone());
            }
            Value::Object(branch)
        })
        .collect();
    let mut out = Map::new();
    out.insert("anyOf".into(), Value::Array(branches));
    out
}
