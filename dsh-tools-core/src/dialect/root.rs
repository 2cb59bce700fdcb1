//! The parameter root: it must describe an object, and three providers (OpenAI, Gemini,
//! Anthropic) reject `anyOf`/`oneOf`/`allOf` there.

use serde_json::{Map, Value};

use super::DialectError;
use super::issue::{IssueKind, Issues, child};
use super::merge::{merge_into, presence_only};
use super::refs::{resolve, resolve_target, type_names};

/// How many rounds of root `$ref`/combinator merging a root may take.
const ROOT_REF_HOPS: usize = 16;

/// Fails unless the parameter schema is a schema object or `true`.
pub(crate) fn check_schema(schema: &Value) -> Result<(), DialectError> {
    let found = match schema {
        Value::Object(_) | Value::Bool(true) => return Ok(()),
        Value::Bool(false) => "the false schema",
        Value::Null => "null",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
    };
    Err(DialectError::NotASchema { found })
}

/// The normalised document as an object root: `true` becomes `{"type": "object"}`, a missing
/// `type` is added, a type array keeps `"object"`. With `flatten`, root combinators are merged
/// away (see [`flatten`]).
pub(crate) fn object_root(
    doc: &Value,
    flatten_unions: bool,
    issues: &mut Issues,
) -> Result<Map<String, Value>, DialectError> {
    check_schema(doc)?;
    let mut map = doc.as_object().cloned().unwrap_or_default();
    if flatten_unions {
        map = flatten(doc, map, issues)?;
    }
    match type_names(&map) {
        Some(names) if names.contains(&"object") => {
            if names.len() > 1 || map.get("type").is_some_and(Value::is_array) {
                map.insert("type".into(), "object".into());
            }
        }
        Some(_) => {
            let found = map.get("type").map(Value::to_string).unwrap_or_default();
            return Err(DialectError::RootNotObject { found });
        }
        None if map.contains_key("type") => {
            let found = map.get("type").map(Value::to_string).unwrap_or_default();
            return Err(DialectError::RootNotObject { found });
        }
        None => {
            let mut typed = Map::new();
            typed.insert("type".into(), "object".into());
            typed.extend(map);
            map = typed;
        }
    }
    Ok(map)
}

/// Removes root combinators:
///
/// - a root `$ref` is replaced by its target (the root's own keys win);
/// - `allOf` branches are merged into the root;
/// - an `anyOf`/`oneOf` whose branches only require properties (the "at least one of" idiom) is
///   dropped ([`IssueKind::Dropped`]);
/// - any other `anyOf`/`oneOf` is merged into one object: the union of the object branches'
///   properties, required only when every branch requires them ([`IssueKind::Degraded`]).
fn flatten(
    doc: &Value,
    mut map: Map<String, Value>,
    issues: &mut Issues,
) -> Result<Map<String, Value>, DialectError> {
    // A merged branch may bring combinators of its own: repeat, a bounded number of times.
    for round in 0..=ROOT_REF_HOPS {
        if !COMBINATORS.iter().any(|k| map.contains_key(*k)) {
            break;
        }
        if round == ROOT_REF_HOPS {
            for keyword in COMBINATORS {
                if map.shift_remove(*keyword).is_some() {
                    issues.push(
                        &child("#", keyword),
                        IssueKind::Degraded,
                        format!("root combinators nest more than {ROOT_REF_HOPS} levels: removed"),
                    );
                }
            }
            break;
        }
        map = flatten_once(doc, map, issues)?;
    }
    Ok(map)
}

/// The root keywords [`flatten`] removes.
const COMBINATORS: &[&str] = &["$ref", "allOf", "anyOf", "oneOf"];

fn flatten_once(
    doc: &Value,
    mut map: Map<String, Value>,
    issues: &mut Issues,
) -> Result<Map<String, Value>, DialectError> {
    if let Some(reference) = map.shift_remove("$ref") {
        let reference = reference
            .as_str()
            .map_or_else(|| reference.to_string(), str::to_owned);
        match resolve(doc, &reference) {
            Some((Value::Object(target), _)) => {
                let conflicts = merge_into(&mut map, target);
                report_conflicts(issues, "#", &conflicts);
            }
            _ => issues.push(
                &child("#", "$ref"),
                IssueKind::Degraded,
                format!("the root `$ref` \"{reference}\" cannot be inlined: removed"),
            ),
        }
    }
    if let Some(branches) = map.shift_remove("allOf") {
        for (i, branch) in branches.as_array().into_iter().flatten().enumerate() {
            match deref(doc, branch) {
                Some(Value::Object(branch)) => {
                    let conflicts = merge_into(&mut map, branch);
                    report_conflicts(issues, &format!("#/allOf/{i}"), &conflicts);
                }
                _ => issues.push(
                    &format!("#/allOf/{i}"),
                    IssueKind::Degraded,
                    "a root `allOf` branch that is not an object schema: ignored",
                ),
            }
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(branches) = map.shift_remove(keyword) else {
            continue;
        };
        let branches: Vec<&Value> = branches
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| deref(doc, b))
            .collect();
        if branches.iter().all(|b| presence_only(b)) {
            issues.dropped(
                "#",
                keyword,
                "a root union that only says which properties must be present (the tool still checks it)",
            );
            continue;
        }
        merge_union(&mut map, keyword, &branches, issues)?;
    }
    Ok(map)
}

/// Merges the object branches of a root union into `map`.
fn merge_union(
    map: &mut Map<String, Value>,
    keyword: &str,
    branches: &[&Value],
    issues: &mut Issues,
) -> Result<(), DialectError> {
    let objects: Vec<&Map<String, Value>> = branches
        .iter()
        .filter_map(|b| b.as_object())
        .filter(|b| match type_names(b) {
            Some(names) => names.contains(&"object"),
            None => b.contains_key("properties"),
        })
        .collect();
    if objects.is_empty() {
        return Err(DialectError::RootNotObject {
            found: format!("a root `{keyword}` without object branches"),
        });
    }
    let mut required: Option<Vec<Value>> = None;
    let mut properties = match map.shift_remove("properties") {
        Some(Value::Object(props)) => props,
        _ => Map::new(),
    };
    // Every declaration of each property, in branch order.
    let mut declared: Vec<(String, Vec<Value>)> = Vec::new();
    for branch in &objects {
        if let Some(Value::Object(props)) = branch.get("properties") {
            for (name, schema) in props {
                match declared.iter_mut().find(|(n, _)| n == name) {
                    Some((_, schemas)) if !schemas.contains(schema) => schemas.push(schema.clone()),
                    Some(_) => {}
                    None => declared.push((name.clone(), vec![schema.clone()])),
                }
            }
        }
        let own: Vec<Value> = match branch.get("required") {
            Some(Value::Array(names)) => names.clone(),
            _ => Vec::new(),
        };
        required = Some(match required {
            None => own,
            Some(common) => common.into_iter().filter(|n| own.contains(n)).collect(),
        });
    }
    for (name, schemas) in declared {
        if !properties.contains_key(&name) {
            properties.insert(name, either(schemas));
        }
    }
    map.insert("properties".into(), Value::Object(properties));
    let mut all_required = match map.shift_remove("required") {
        Some(Value::Array(names)) => names,
        _ => Vec::new(),
    };
    for name in required.unwrap_or_default() {
        if !all_required.contains(&name) {
            all_required.push(name);
        }
    }
    if !all_required.is_empty() {
        map.insert("required".into(), Value::Array(all_required));
    }
    issues.push(
        &child("#", keyword),
        IssueKind::Degraded,
        format!("the root `{keyword}` is merged into one object (providers need an object root): the schema now accepts properties of different branches together"),
    );
    Ok(())
}

/// One schema for a property the branches declare differently: the tags of a tagged union
/// (`{"const": "file"}`, `{"const": "url"}`) become one `enum`, anything else an `anyOf`.
fn either(mut schemas: Vec<Value>) -> Value {
    if schemas.len() == 1 {
        return schemas.pop().unwrap_or_default();
    }
    let constant = |s: &Value| {
        let map = s.as_object()?;
        let keys_ok = map
            .keys()
            .all(|k| matches!(k.as_str(), "const" | "type" | "description"));
        keys_ok.then(|| (map.get("const").cloned(), map.get("type").cloned()))
    };
    let tags: Option<Vec<(Option<Value>, Option<Value>)>> = schemas.iter().map(constant).collect();
    if let Some(tags) = tags {
        let ty = tags[0].1.clone();
        if tags.iter().all(|(c, t)| c.is_some() && *t == ty) {
            let mut merged = Map::new();
            if let Some(ty) = ty {
                merged.insert("type".into(), ty);
            }
            let members: Vec<Value> = tags.into_iter().filter_map(|(c, _)| c).collect();
            merged.insert("enum".into(), Value::Array(members));
            return Value::Object(merged);
        }
    }
    let mut union = Map::new();
    union.insert("anyOf".into(), Value::Array(schemas));
    Value::Object(union)
}

/// The branch itself, or the target of a branch that is only a `$ref`.
fn deref<'a>(doc: &'a Value, branch: &'a Value) -> Option<&'a Value> {
    match branch.get("$ref").and_then(Value::as_str) {
        Some(reference) if branch.as_object().is_some_and(|m| m.len() == 1) => {
            resolve_target(doc, reference)
        }
        _ => Some(branch),
    }
}

fn report_conflicts(issues: &mut Issues, path: &str, conflicts: &[String]) {
    for keyword in conflicts {
        issues.push(
            &format!("{path}/{keyword}"),
            IssueKind::Degraded,
            "merging into the root conflicts with the root's own declaration: the root's is kept",
        );
    }
}
