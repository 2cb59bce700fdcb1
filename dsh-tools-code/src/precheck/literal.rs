//! A call's argument as the static checks see it, whatever the program's language, and its walk
//! against the tool's parameter schema — one walk, so a TypeScript and a Python program get the
//! same findings in the same words.
//!
//! Each language turns its argument expression into an [`Arg`] (TypeScript in `args.rs`, Python
//! in `monty/args.rs`): a constant value, an object literal walked key by key, or something
//! computed. A fully constant argument is validated whole, with the tool's own validator. A
//! partly constant object literal is walked alongside the schema: a key the schema closes out,
//! a required key missing from a literal without spreads or computed keys, and every constant
//! property value are checked; anything computed is left to run time.

use dsh_tools::ToolDefinition;
use dsh_tools::subset::{unknown_key_violation, validate_value};
use serde_json::{Map, Value};

/// One argument expression; `S` is where it is in the program (a span, a text range).
#[derive(Debug, Clone)]
pub(crate) struct Arg<S> {
    /// Where the expression is.
    pub(crate) at: S,
    /// What it is.
    pub(crate) shape: Shape<S>,
}

/// What an argument expression is, as far as it is known before running.
#[derive(Debug, Clone)]
pub(crate) enum Shape<S> {
    /// A constant, lossless JSON value (an object literal is an [`Shape::Object`] instead).
    Constant(Value),
    /// An object literal (a Python dict display).
    Object {
        /// Its entries with a literal key, in source order.
        entries: Vec<Entry<S>>,
        /// Whether some keys are unknown (a spread, a computed key).
        open: bool,
    },
    /// Computed: known only at run time.
    Computed,
}

/// One entry of an object literal with a literal key.
#[derive(Debug, Clone)]
pub(crate) struct Entry<S> {
    /// The key.
    pub(crate) key: String,
    /// Where the key is.
    pub(crate) key_at: S,
    /// The value (`None`: a shorthand `{ name }`, whose value is computed).
    pub(crate) value: Option<Arg<S>>,
}

impl<S> Arg<S> {
    /// The JSON value of the whole expression, when every part of it is constant.
    pub(crate) fn constant(&self) -> Option<Value> {
        match &self.shape {
            Shape::Constant(value) => Some(value.clone()),
            Shape::Object { open: true, .. } | Shape::Computed => None,
            Shape::Object { entries, .. } => {
                let mut map = Map::new();
                for entry in entries {
                    map.insert(entry.key.clone(), entry.value.as_ref()?.constant()?);
                }
                Some(Value::Object(map))
            }
        }
    }
}

/// A violation and where it is.
pub(crate) type Violation<S> = (S, String);

/// The violations of the constant parts of `argument` (a call's arguments object).
pub(crate) fn check<S: Copy>(def: &ToolDefinition, argument: &Arg<S>) -> Vec<Violation<S>> {
    if !def.validates_args() {
        return Vec::new(); // raw tools (MCP) validate their own input
    }
    let mut out = Vec::new();
    let root = def.parameters();
    match &argument.shape {
        Shape::Object { entries, open } if plain_object(root).is_some() => {
            walk_object(
                entries,
                *open,
                argument.at,
                root,
                "",
                Some(def.name()),
                &mut out,
            );
        }
        _ => {
            if let Some(value) = argument.constant()
                && let Err(error) = def.validate_args(&value)
            {
                out.extend(error.violations.into_iter().map(|v| (argument.at, v)));
            }
        }
    }
    out
}

/// The path of `key` under `path` (`""` is the arguments object itself).
fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The keywords of an object schema the walk checks completely (the others annotate).
const PLAIN: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "$schema",
    "$defs",
    "definitions",
];

/// `schema` as an object schema the walk checks completely (`None`: leave it to validation).
fn plain_object(schema: &Value) -> Option<&Map<String, Value>> {
    let object = schema.as_object()?;
    let plain = object
        .keys()
        .all(|keyword| PLAIN.contains(&keyword.as_str()));
    (plain && object.get("type").is_some_and(|t| t == "object")).then_some(object)
}

/// `tool` names the tool when the object is the arguments object itself.
fn walk_object<S: Copy>(
    entries: &[Entry<S>],
    open: bool,
    at: S,
    schema: &Value,
    path: &str,
    tool: Option<&str>,
    out: &mut Vec<Violation<S>>,
) {
    let Some(schema) = plain_object(schema) else {
        return;
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let additional = schema.get("additionalProperties");
    let closed = additional == Some(&Value::Bool(false));
    let object_path = path;
    for entry in entries {
        let name = &entry.key;
        let path = child(path, name);
        match properties.get(name) {
            Some(property) => {
                if let Some(value) = &entry.value {
                    walk_value(value, property, &path, out);
                }
            }
            None if closed => {
                let declared: Vec<&str> = properties.keys().map(String::as_str).collect();
                let message = unknown_key_violation(tool, object_path, name, &declared);
                out.push((entry.key_at, message));
            }
            None => {
                if let (Some(schema @ Value::Object(_)), Some(value)) = (additional, &entry.value) {
                    walk_value(value, schema, &path, out);
                }
            }
        }
    }
    if open {
        return;
    }
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !entries.iter().any(|entry| entry.key == name) {
            out.push((
                at,
                format!("missing required property \"{}\"", child(path, name)),
            ));
        }
    }
}

fn walk_value<S: Copy>(value: &Arg<S>, schema: &Value, path: &str, out: &mut Vec<Violation<S>>) {
    match &value.shape {
        Shape::Object { entries, open } if plain_object(schema).is_some() => {
            walk_object(entries, *open, value.at, schema, path, None, out);
        }
        _ => {
            if let Some(constant) = value.constant() {
                let violations = validate_value(schema, &constant, path);
                out.extend(violations.into_iter().map(|message| (value.at, message)));
            }
        }
    }
}
