//! Compiling a [`SchemaSpec`] to JSON Schema.
//!
//! Key order is fixed (`docs/CONTRACTS.md`, "Tools and results"): objects emit `type`,
//! annotations, `additionalProperties`, `properties`, `required`; arrays `type`, annotations,
//! `items`; scalars `type`, annotations, `enum`, `const`; unions `oneOf`, annotations. Parameter
//! schemas may also carry bounds, emitted after the node's own keywords.
//!
//! Recursion here follows the nesting of Rust types, which rustc itself bounds, and stops at
//! recursive types, which are emitted once under `$defs` (see [`super::recursion`]); the
//! untrusted direction (validating model values) is iterative and lives in [`crate::subset`].

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Number, Value};

use super::spec::{
    Additional, Checks, Literal, Meta, Property, SchemaSpec, SizeBounds, SpecKind, is_map,
};
use super::{checks, recursion};
use crate::error::JsonSchemaError;
use crate::subset::{Vocabulary, assert_supported_in};

/// Which schema dialect a spec compiles to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Parameter schemas: bounds and schema-valued `additionalProperties` are kept.
    Parameters,
    /// Output schemas: strictly the reference subset; bounds are dropped.
    Output,
}

impl Mode {
    fn vocabulary(self) -> Vocabulary {
        match self {
            Mode::Parameters => Vocabulary::Parameters,
            Mode::Output => Vocabulary::Output,
        }
    }
}

impl SchemaSpec {
    /// Compiles the spec as the root of a tool's parameters: `{"type":"object","properties":…,
    /// "required":[…]}` with no annotations and no `additionalProperties` key unless the object
    /// denies unknown properties. The spec must be an object. Recursive types are emitted once
    /// under a root `$defs` and referred to with `$ref`.
    ///
    /// ```
    /// use dsh_tools::schema::{Property, SchemaSpec, ToolSchema};
    /// const ARGS: SchemaSpec = SchemaSpec::object(&[
    ///     Property::new("path", &String::SCHEMA).described("Absolute file path"),
    ///     Property::new("limit", &<Option<u32>>::SCHEMA),
    /// ]);
    /// assert_eq!(
    ///     ARGS.to_parameters_schema().unwrap().to_string(),
    ///     concat!(
    ///         r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute file path"},"#,
    ///         r#""limit":{"oneOf":[{"type":"integer","minimum":0,"maximum":4294967295},{"type":"null"}]}},"#,
    ///         r#""required":["path"]}"#
    ///     )
    /// );
    /// ```
    pub fn to_parameters_schema(&self) -> Result<Value, JsonSchemaError> {
        self.parameter_root_schema(false)
    }

    /// The parameters schema as the model is shown it:
    /// [`to_parameters_schema`](Self::to_parameters_schema) without the integer bounds that only
    /// restate the Rust type's width (`maximum: 4294967295` on a `u32`, ±(2^53 − 1) on 64-bit integers, the
    /// negative minimum of a signed type). A tool validates with the full schema, so what it
    /// accepts still deserialises; only the noise is gone from what the model reads.
    ///
    /// ```
    /// use dsh_tools::schema::{Property, SchemaSpec, ToolSchema};
    /// const ARGS: SchemaSpec = SchemaSpec::closed_object(&[
    ///     Property::new("limit", &<u32>::SCHEMA),
    ///     Property::new("delta", &<i64>::SCHEMA),
    /// ]);
    /// assert_eq!(
    ///     ARGS.to_shown_parameters_schema().unwrap().to_string(),
    ///     concat!(
    ///         r#"{"type":"object","additionalProperties":false,"properties":{"#,
    ///         r#""limit":{"type":"integer","minimum":0},"delta":{"type":"integer"}},"required":["limit","delta"]}"#
    ///     )
    /// );
    /// ```
    pub fn to_shown_parameters_schema(&self) -> Result<Value, JsonSchemaError> {
        self.parameter_root_schema(true)
    }

    fn parameter_root_schema(&self, shown: bool) -> Result<Value, JsonSchemaError> {
        let mut compiler = Compiler::new(self, Mode::Parameters)?;
        compiler.shown = shown;
        let mut compiled = compiler.parameter_root(self)?;
        compiler.attach_defs(&mut compiled);
        assert_supported_in(&compiled, Vocabulary::Parameters)?;
        Ok(compiled)
    }

    /// Compiles the spec as a value schema in the output vocabulary (used for output schemas):
    /// bounds and other assertions are dropped, maps become open objects; tuples and `$ref`s
    /// stay.
    pub fn to_value_schema(&self) -> Result<Value, JsonSchemaError> {
        self.compile_value(Mode::Output)
    }

    /// Compiles the spec as a value schema in the parameter vocabulary (bounds kept).
    pub fn to_parameter_value_schema(&self) -> Result<Value, JsonSchemaError> {
        self.compile_value(Mode::Parameters)
    }

    fn compile_value(&self, mode: Mode) -> Result<Value, JsonSchemaError> {
        let mut compiler = Compiler::new(self, mode)?;
        let mut compiled = compiler.compile(self, "schema", None, Checks::NONE)?;
        compiler.attach_defs(&mut compiled);
        assert_supported_in(&compiled, mode.vocabulary())?;
        Ok(compiled)
    }
}

fn fail<T>(message: String) -> Result<T, JsonSchemaError> {
    Err(JsonSchemaError::new(vec![message]))
}

/// The state of one compilation: which named types are recursive, and their `$defs` entries.
struct Compiler {
    mode: Mode,
    /// Leave out the integer bounds that only restate a Rust type's width (see
    /// [`SchemaSpec::to_shown_parameters_schema`]).
    shown: bool,
    /// The recursive types (by id), with the `$ref` that names each.
    refs: HashMap<&'static str, String>,
    /// The recursive types being (or already) emitted into `$defs`.
    emitted: HashSet<&'static str>,
    /// `$defs` entries, in emission order.
    defs: Map<String, Value>,
    /// The id of the type whose `$defs` body is being compiled (emitted inline once).
    defining: Option<&'static str>,
}

impl Compiler {
    fn new(root: &SchemaSpec, mode: Mode) -> Result<Self, JsonSchemaError> {
        let recursive = recursion::recursive_types(root)?;
        let root_id = root.meta.name.map(|n| (n.id)());
        let mut refs = HashMap::new();
        let mut used: HashSet<String> = HashSet::new();
        for (id, name) in recursive {
            if Some(id) == root_id {
                refs.insert(id, String::from("#"));
                continue;
            }
            let mut key = name.to_owned();
            let mut n = 1;
            while !used.insert(key.clone()) {
                n += 1;
                key = format!("{name}{n}");
            }
            refs.insert(id, format!("#/$defs/{key}"));
        }
        Ok(Self {
            mode,
            shown: false,
            refs,
            emitted: root_id.into_iter().collect(),
            defs: Map::new(),
            defining: root_id,
        })
    }

    /// Adds the root `$defs` (when some type is recursive).
    fn attach_defs(&mut self, compiled: &mut Value) {
        if let Value::Object(root) = compiled
            && !self.defs.is_empty()
        {
            root.insert(
                "$defs".into(),
                Value::Object(std::mem::take(&mut self.defs)),
            );
        }
    }

    fn parameter_root(&mut self, spec: &SchemaSpec) -> Result<Value, JsonSchemaError> {
        // The root is emitted here, inline; references to it are `#`.
        self.defining = None;
        let SpecKind::Object { .. } = resolve(spec).kind else {
            return fail(
                "parameters must be an object schema (a struct or named parameters)".into(),
            );
        };
        let merged = merge_properties(resolve(spec), "parameters")?;
        let mut out = Map::new();
        out.insert("type".into(), "object".into());
        if merged.additional == Additional::Deny {
            out.insert("additionalProperties".into(), false.into());
        } else if let Additional::Schema(values) = merged.additional {
            let path = "parameters.additionalProperties";
            let values = self.compile(values, path, None, Checks::NONE)?;
            out.insert("additionalProperties".into(), values);
        }
        self.emit_properties(&mut out, &merged.properties, "parameters")?;
        Ok(Value::Object(out))
    }

    fn emit_properties(
        &mut self,
        out: &mut Map<String, Value>,
        properties: &[Property],
        path: &str,
    ) -> Result<(), JsonSchemaError> {
        let mut props = Map::new();
        let mut required = Vec::new();
        for property in properties {
            let child = format!("{path}.properties.{}", property.name);
            let schema =
                self.compile(property.schema, &child, property.description, Checks::NONE)?;
            props.insert(property.name.to_owned(), schema);
            if property.required {
                required.push(Value::from(property.name));
            }
        }
        out.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        Ok(())
    }

    /// Compiles `spec`; `outer` holds the checks of the wrappers around it (`Option`, `Box`).
    fn compile(
        &mut self,
        spec: &SchemaSpec,
        path: &str,
        description: Option<&'static str>,
        outer: Checks,
    ) -> Result<Value, JsonSchemaError> {
        if let Some(name) = spec.meta.name {
            let id = (name.id)();
            if self.defining == Some(id) {
                self.defining = None;
            } else if let Some(reference) = self.refs.get(id).cloned() {
                if !outer.is_empty() || !spec.checks.is_empty() {
                    return fail(format!(
                        "{path}: constraint attributes cannot apply to the recursive type `{}` itself (put them on its fields)",
                        name.name
                    ));
                }
                if self.emitted.insert(id) {
                    let saved = self.defining.replace(id);
                    let body = self.compile(spec, &format!("$defs.{}", name.name), None, outer)?;
                    self.defining = saved;
                    let key = reference.trim_start_matches("#/$defs/").to_owned();
                    self.defs.insert(key, body);
                }
                let mut out = Map::new();
                out.insert("$ref".into(), reference.into());
                if let Some(description) = description {
                    out.insert("description".into(), description.into());
                }
                return Ok(Value::Object(out));
            }
        }
        let checks = checks::merge(spec.checks, outer);
        let mode = self.mode;
        let mut out = Map::new();
        match spec.kind {
            SpecKind::Lazy(f) => {
                let inner = f();
                return self.compile(inner, path, description.or(spec.meta.description), checks);
            }
            SpecKind::Any => {
                checks::none_apply(
                    &checks,
                    path,
                    "any JSON value (`serde_json::Value` has no type for them to constrain: use a typed Rust type, or `#[schema(with = \"path\")]`)",
                )?;
                annotate(&mut out, &spec.meta, description);
            }
            SpecKind::Null => {
                checks::none_apply(&checks, path, "null")?;
                out.insert("type".into(), "null".into());
                annotate(&mut out, &spec.meta, description);
            }
            SpecKind::Boolean => {
                checks::none_apply(&checks, path, "a boolean")?;
                out.insert("type".into(), "boolean".into());
                annotate(&mut out, &spec.meta, description);
            }
            SpecKind::Integer(bounds) | SpecKind::Number(bounds) => {
                let ty = if matches!(spec.kind, SpecKind::Integer(_)) {
                    "integer"
                } else {
                    "number"
                };
                out.insert("type".into(), ty.into());
                annotate(&mut out, &spec.meta, description);
                if mode == Mode::Parameters {
                    checks::numeric(&mut out, bounds, &checks, path, self.shown)?;
                }
            }
            SpecKind::String(size) => {
                out.insert("type".into(), "string".into());
                annotate(&mut out, &spec.meta, description);
                if mode == Mode::Parameters {
                    checks::string(&mut out, size, &checks, path)?;
                }
            }
            SpecKind::Enum(members) => {
                checks::none_apply(&checks, path, "an enum")?;
                let Some(first) = members.first() else {
                    return fail(format!(
                        "{path}.enum must be a non-empty array of scalar values"
                    ));
                };
                let ty = literal_type(first);
                let mut values = Vec::with_capacity(members.len());
                for member in members {
                    if literal_type(member) != ty {
                        return fail(format!("{path}.enum must hold values of one JSON type"));
                    }
                    values.push(literal(member, path)?);
                }
                out.insert("type".into(), ty.into());
                annotate(&mut out, &spec.meta, description);
                out.insert("enum".into(), Value::Array(values));
            }
            SpecKind::Const(value) => {
                checks::none_apply(&checks, path, "a constant")?;
                out.insert("type".into(), literal_type(&value).into());
                annotate(&mut out, &spec.meta, description);
                if value != Literal::Null {
                    out.insert("const".into(), literal(&value, path)?);
                }
            }
            SpecKind::Array { items, size } => {
                out.insert("type".into(), "array".into());
                annotate(&mut out, &spec.meta, description);
                if let Some(items) = items {
                    let child = format!("{path}.items");
                    out.insert(
                        "items".into(),
                        self.compile(items, &child, None, Checks::NONE)?,
                    );
                }
                if mode == Mode::Parameters {
                    checks::array(&mut out, size, &checks, path)?;
                }
            }
            SpecKind::Tuple(elements) => {
                out.insert("type".into(), "array".into());
                annotate(&mut out, &spec.meta, description);
                let mut prefix = Vec::with_capacity(elements.len());
                for (i, element) in elements.iter().enumerate() {
                    let child = format!("{path}.prefixItems[{i}]");
                    prefix.push(self.compile(element, &child, None, Checks::NONE)?);
                }
                out.insert("prefixItems".into(), Value::Array(prefix));
                out.insert("items".into(), false.into());
                if mode == Mode::Parameters {
                    let n = elements.len() as u64;
                    checks::array(&mut out, SizeBounds::exactly(n), &checks, path)?;
                    // `items: false` already bounds the length from above.
                    out.shift_remove("maxItems");
                }
            }
            SpecKind::Object {
                properties,
                flatten,
                additional,
            } => {
                let map = is_map(properties, flatten, additional);
                if !map {
                    checks::none_apply(
                        &checks,
                        path,
                        "a struct (an object with named properties)",
                    )?;
                }
                let merged = merge_properties(spec, path)?;
                out.insert("type".into(), "object".into());
                annotate(&mut out, &spec.meta, description);
                let additional = match (merged.additional, mode) {
                    (Additional::Deny, _) => Value::Bool(false),
                    (Additional::Allow, _) | (Additional::Schema(_), Mode::Output) => {
                        Value::Bool(true)
                    }
                    (Additional::Schema(values), Mode::Parameters) => {
                        let child = format!("{path}.additionalProperties");
                        self.compile(values, &child, None, Checks::NONE)?
                    }
                };
                out.insert("additionalProperties".into(), additional);
                if !merged.properties.is_empty() {
                    self.emit_properties(&mut out, &merged.properties, path)?;
                }
                if map && mode == Mode::Parameters {
                    checks::map(&mut out, &checks, path)?;
                }
            }
            SpecKind::OneOf(variants) => {
                let mut branches = Vec::with_capacity(variants.len());
                for (i, variant) in variants.iter().enumerate() {
                    let child = format!("{path}.oneOf[{i}]");
                    branches.push(self.compile(variant, &child, None, checks)?);
                }
                out.insert("oneOf".into(), Value::Array(branches));
                annotate(&mut out, &spec.meta, description);
            }
            SpecKind::Optional(inner) => {
                let own = description.or(spec.meta.description);
                if accepts_null(inner) {
                    return self.compile(inner, path, own, checks);
                }
                let first = self.compile(inner, &format!("{path}.oneOf[0]"), None, checks)?;
                let mut branches = match first {
                    Value::Object(mut node)
                        if node.contains_key("oneOf")
                            && !node.contains_key("type")
                            && !node.contains_key("$ref") =>
                    {
                        match node.remove("oneOf") {
                            Some(Value::Array(branches)) => branches,
                            _ => Vec::new(),
                        }
                    }
                    other => vec![other],
                };
                let mut null = Map::new();
                null.insert("type".into(), "null".into());
                branches.push(Value::Object(null));
                out.insert("oneOf".into(), Value::Array(branches));
                let inner = resolve(inner);
                let meta = Meta {
                    description: spec.meta.description.or(inner.meta.description),
                    title: spec.meta.title.or(inner.meta.title),
                    ..Meta::NONE
                };
                annotate(&mut out, &meta, description);
            }
        }
        if let Some(examples) = spec.meta.examples {
            let value = examples();
            if !crate::json::is_lossless(&value) {
                return fail(format!("{path}.examples must be lossless JSON data"));
            }
            out.insert("examples".into(), Value::Array(vec![value]));
        }
        Ok(Value::Object(out))
    }
}

/// A spec with its [`SpecKind::Lazy`] layers read.
fn resolve(spec: &SchemaSpec) -> &SchemaSpec {
    let mut spec = spec;
    let mut hops = 0;
    while let SpecKind::Lazy(f) = spec.kind {
        hops += 1;
        if hops > 64 {
            break;
        }
        spec = f();
    }
    spec
}

/// The properties of an object after serde `flatten` is applied.
struct Merged {
    properties: Vec<Property>,
    additional: Additional,
}

fn merge_properties(spec: &SchemaSpec, path: &str) -> Result<Merged, JsonSchemaError> {
    let SpecKind::Object {
        properties,
        flatten,
        additional,
    } = resolve(spec).kind
    else {
        return fail(format!("{path} flattens a schema that is not an object"));
    };
    let mut merged = Merged {
        properties: properties.to_vec(),
        additional,
    };
    for inner in flatten {
        let inner = resolve(inner);
        let (inner, optional) = match inner.kind {
            SpecKind::Optional(inner) => (resolve(inner), true),
            _ => (inner, false),
        };
        let nested = merge_properties(inner, path)?;
        for mut property in nested.properties {
            if merged.properties.iter().any(|p| p.name == property.name) {
                return fail(format!(
                    "{path}.properties.{} is declared twice (serde flatten)",
                    property.name
                ));
            }
            property.required &= !optional;
            merged.properties.push(property);
        }
        match nested.additional {
            Additional::Schema(values) => merged.additional = Additional::Schema(values),
            Additional::Allow if merged.additional == Additional::Deny => {}
            Additional::Allow | Additional::Deny => {}
        }
    }
    Ok(merged)
}

fn annotate(out: &mut Map<String, Value>, meta: &Meta, description: Option<&'static str>) {
    if let Some(description) = description.or(meta.description) {
        out.insert("description".into(), description.into());
    }
    if let Some(title) = meta.title {
        out.insert("title".into(), title.into());
    }
}

pub(super) fn literal(value: &Literal, path: &str) -> Result<Value, JsonSchemaError> {
    Ok(match *value {
        Literal::Null => Value::Null,
        Literal::Bool(b) => b.into(),
        Literal::Int(i) => i.into(),
        Literal::UInt(u) => u.into(),
        Literal::Float(f) => match Number::from_f64(f) {
            Some(n) if !(f == 0.0 && f.is_sign_negative()) => Value::Number(n),
            _ => return fail(format!("{path} holds a number that is not lossless JSON")),
        },
        Literal::Str(s) => s.into(),
    })
}

fn literal_type(value: &Literal) -> &'static str {
    match value {
        Literal::Null => "null",
        Literal::Bool(_) => "boolean",
        Literal::Int(_) | Literal::UInt(_) => "integer",
        Literal::Float(_) => "number",
        Literal::Str(_) => "string",
    }
}

/// Whether a spec already accepts `null`, so `Option<T>` must not add a second `null` branch.
fn accepts_null(spec: &SchemaSpec) -> bool {
    let spec = resolve(spec);
    match spec.kind {
        SpecKind::Any | SpecKind::Null | SpecKind::Optional(_) => true,
        SpecKind::Const(Literal::Null) => true,
        SpecKind::Enum(members) => members.contains(&Literal::Null),
        SpecKind::OneOf(variants) => variants.iter().any(accepts_null),
        _ => false,
    }
}
