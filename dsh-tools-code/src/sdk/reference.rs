//! The reference path: `docs/CONTRACTS.md`, "TypeScript types", rules 1–6, for schemas inside the
//! reference subset (`assert_supported` passes). Iterative: 5,000-deep schemas are fine.

use serde_json::{Map, Value};

use super::doc::doc_text;
use super::ir::{Lit, Member, Ty, TyId, Types};
use super::keywords::Keywords;

/// Whether `schema` lies in the reference subset (`dsh_tools::subset::is_supported`).
pub(crate) fn in_subset(schema: &Value) -> bool {
    dsh_tools::subset::is_supported(schema, dsh_tools::subset::Vocabulary::Reference)
}

/// One pending step.
enum Task<'a> {
    /// Lower a node and push its type.
    Enter(&'a Value),
    /// Pop `n` branch types, push their union.
    Union(usize),
    /// Pop the item type, push the array type.
    Array,
    /// Pop one type per property, push the object type (`required`, closed).
    Object(&'a Map<String, Value>, Option<&'a Value>, bool),
}

/// Lowers a schema of the reference subset (the caller checked [`in_subset`]).
///
/// Total anyway: a node of an unexpected shape lowers to `unknown`.
pub(crate) fn lower<'s>(types: &mut Types<'s>, schema: &'s Value) -> TyId {
    let mut tasks = vec![Task::Enter(schema)];
    let mut values: Vec<TyId> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Enter(node) => enter(types, node, &mut tasks, &mut values),
            Task::Union(n) => {
                let branches = values.split_off(values.len().saturating_sub(n));
                let id = types.union_exact(branches);
                values.push(id);
            }
            Task::Array => {
                let item = values.pop().unwrap_or(TyId::UNKNOWN);
                let id = types.add(Ty::Array(item));
                values.push(id);
            }
            Task::Object(properties, required, closed) => {
                let at = values.len().saturating_sub(properties.len());
                let id = object(types, properties, required, closed, values.drain(at..));
                values.push(id);
            }
        }
    }
    values.pop().unwrap_or(TyId::UNKNOWN)
}

fn enter<'a>(
    types: &mut Types<'a>,
    node: &'a Value,
    tasks: &mut Vec<Task<'a>>,
    values: &mut Vec<TyId>,
) {
    let Some(map) = node.as_object() else {
        values.push(TyId::UNKNOWN);
        return;
    };
    let k = Keywords::scan(map);
    // Rule 2: oneOf → branches joined by ` | `.
    if let Some(Value::Array(branches)) = k.one_of {
        tasks.push(Task::Union(branches.len()));
        tasks.extend(branches.iter().rev().map(Task::Enter));
        return;
    }
    let id = match k.ty.and_then(Value::as_str) {
        // Rule 1: annotation-only → any JSON value.
        None => TyId::JSON,
        // Rule 3: scalars.
        Some(kind @ ("string" | "number" | "integer" | "boolean" | "null")) => {
            if let Some(value) = k.konst {
                literal(types, value)
            } else if let Some(Value::Array(entries)) = k.enumeration {
                let members = entries.iter().map(|v| literal(types, v)).collect();
                types.union_exact(members)
            } else {
                match kind {
                    "string" => TyId::STRING,
                    "boolean" => TyId::BOOLEAN,
                    "null" => TyId::NULL,
                    _ => TyId::NUMBER,
                }
            }
        }
        // Rule 4: arrays.
        Some("array") => match k.items {
            Some(items) => {
                tasks.push(Task::Array);
                tasks.push(Task::Enter(items));
                return;
            }
            None => TyId::JSON_ARRAY,
        },
        // Rules 5 and 6: objects.
        Some("object") => {
            let closed = k.additional_properties == Some(&Value::Bool(false));
            match k.properties {
                Some(Value::Object(properties)) if !properties.is_empty() => {
                    tasks.push(Task::Object(properties, k.required, closed));
                    tasks.extend(properties.values().rev().map(Task::Enter));
                    return;
                }
                _ if closed => TyId::RECORD_NEVER,
                _ => TyId::RECORD_JSON,
            }
        }
        Some(_) => TyId::UNKNOWN,
    };
    values.push(id);
}

/// Rule 6: members in declared order, `?` unless required, doc lines from non-empty
/// descriptions, `& Record<string, JsonValue>` unless closed.
fn object<'s>(
    types: &mut Types<'s>,
    properties: &'s Map<String, Value>,
    required: Option<&Value>,
    closed: bool,
    children: impl Iterator<Item = TyId>,
) -> TyId {
    let required = required
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let members = properties
        .iter()
        .zip(children)
        .map(|((key, schema), ty)| Member {
            key: key.as_str(),
            optional: !required.iter().any(|name| name.as_str() == Some(key)),
            doc: schema
                .as_object()
                .and_then(|m| m.iter().find(|(k, _)| *k == "description"))
                .and_then(|(_, d)| d.as_str())
                .filter(|d| !d.is_empty())
                .map(doc_text),
            ty,
        })
        .collect();
    let object = types.add(Ty::Object(members));
    if closed {
        object
    } else {
        types.add(Ty::Inter(vec![object, TyId::RECORD_JSON]))
    }
}

/// A JSON scalar as a literal type (`JSON.stringify` text). Composite values (which the subset
/// never puts in `const`/`enum`) and anything unexpected lower to `unknown`.
pub(crate) fn literal<'s>(types: &mut Types<'s>, value: &'s Value) -> TyId {
    match value {
        Value::Null => TyId::NULL,
        Value::Bool(b) => types.lit(Lit::Bool(*b)),
        Value::String(s) => types.lit(Lit::Str(s)),
        Value::Number(n) => types.lit(Lit::Num(
            dsh_tools::json::js_number_of(n),
            dsh_tools::json::number_to_f64(n),
        )),
        Value::Array(_) | Value::Object(_) => TyId::UNKNOWN,
    }
}
