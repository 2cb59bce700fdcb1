//! Compiling a [`SchemaSpec`] to JSON Schema.
//!
//! Key order follows the reference DSL compiler (REFERENCE §4.2): objects emit `type`,
//! annotations, `additionalProperties`, `properties`, `required`; arrays `type`, annotations,
//! `items`; scalars `type`, annotations, `enum`, `const`; unions `oneOf`, annotations. Parameter
//! schemas may also carry bounds, emitted after the node's own keywords.
//!
//! Recursion here follows the nesting of Rust types, which rustc itself bounds; the untrusted
//! direction (validating model values) is iterative and lives in [`crate::subset`].

use serde_json::{Map, Number, Value};

use super::spec::{Additional, Literal, Meta, Property, SchemaSpec, SpecKind};
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
    /// denies unknown properties. The spec must be an object.
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
        let compiled = compile_parameter_root(self)?;
        assert_supported_in(&compiled, Vocabulary::Parameters)?;
        Ok(compiled)
    }

    /// Compiles the spec as a value schema inside the reference subset (used for output
    /// schemas): bounds are dropped, maps become open objects.
    pub fn to_value_schema(&self) -> Result<Value, JsonSchemaError> {
        self.compile_value(Mode::Output)
    }

    /// Compiles the spec as a value schema in the parameter vocabulary (bounds kept).
    pub fn to_parameter_value_schema(&self) -> Result<Value, JsonSchemaError> {
        self.compile_value(Mode::Parameters)
    }

    fn compile_value(&self, mode: Mode) -> Result<Value, JsonSchemaError> {
        let compiled = compile(self, "schema", mode, None)?;
        assert_supported_in(&compiled, mode.vocabulary())?;
        Ok(compiled)
    }
}

fn fail<T>(message: String) -> Result<T, JsonSchemaError> {
    Err(JsonSchemaError::new(vec![message]))
}

fn compile_parameter_root(spec: &SchemaSpec) -> Result<Value, JsonSchemaError> {
    let SpecKind::Object { .. } = spec.kind else {
        return fail("parameters must be an object schema (a struct or named parameters)".into());
    };
    let merged = merge_properties(spec, "parameters")?;
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    if merged.additional == Additional::Deny {
        out.insert("additionalProperties".into(), false.into());
    } else if let Additional::Schema(values) = merged.additional {
        let path = "parameters.additionalProperties";
        out.insert(
            "additionalProperties".into(),
            compile(values, path, Mode::Parameters, None)?,
        );
    }
    emit_properties(&mut out, &merged.properties, "parameters", Mode::Parameters)?;
    Ok(Value::Object(out))
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
    } = spec.kind
    else {
        return fail(format!("{path} flattens a schema that is not an object"));
    };
    let mut merged = Merged {
        properties: properties.to_vec(),
        additional,
    };
    for inner in flatten {
        let (inner, optional) = match inner.kind {
            SpecKind::Optional(inner) => (inner, true),
            _ => (*inner, false),
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

fn emit_properties(
    out: &mut Map<String, Value>,
    properties: &[Property],
    path: &str,
    mode: Mode,
) -> Result<(), JsonSchemaError> {
    let mut props = Map::new();
    let mut required = Vec::new();
    for property in properties {
        let child = format!("{path}.properties.{}", property.name);
        let schema = compile(property.schema, &child, mode, property.description)?;
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

fn annotate(out: &mut Map<String, Value>, meta: &Meta, description: Option<&'static str>) {
    if let Some(description) = description.or(meta.description) {
        out.insert("description".into(), description.into());
    }
    if let Some(title) = meta.title {
        out.insert("title".into(), title.into());
    }
}

fn literal(value: &Literal, path: &str) -> Result<Value, JsonSchemaError> {
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
    match spec.kind {
        SpecKind::Any | SpecKind::Null | SpecKind::Optional(_) => true,
        SpecKind::Const(Literal::Null) => true,
        SpecKind::Enum(members) => members.contains(&Literal::Null),
        SpecKind::OneOf(variants) => variants.iter().any(accepts_null),
        _ => false,
    }
}

fn compile(
    spec: &SchemaSpec,
    path: &str,
    mode: Mode,
    description: Option<&'static str>,
) -> Result<Value, JsonSchemaError> {
    let mut out = Map::new();
    match spec.kind {
        SpecKind::Any => annotate(&mut out, &spec.meta, description),
        SpecKind::Null => {
            out.insert("type".into(), "null".into());
            annotate(&mut out, &spec.meta, description);
        }
        SpecKind::Boolean => {
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
                if let Some(min) = &bounds.minimum {
                    out.insert("minimum".into(), literal(min, path)?);
                }
                if let Some(max) = &bounds.maximum {
                    out.insert("maximum".into(), literal(max, path)?);
                }
            }
        }
        SpecKind::String(size) => {
            out.insert("type".into(), "string".into());
            annotate(&mut out, &spec.meta, description);
            if mode == Mode::Parameters {
                if let Some(min) = size.min {
                    out.insert("minLength".into(), min.into());
                }
                if let Some(max) = size.max {
                    out.insert("maxLength".into(), max.into());
                }
            }
        }
        SpecKind::Enum(members) => {
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
                out.insert("items".into(), compile(items, &child, mode, None)?);
            }
            if mode == Mode::Parameters {
                if let Some(min) = size.min {
                    out.insert("minItems".into(), min.into());
                }
                if let Some(max) = size.max {
                    out.insert("maxItems".into(), max.into());
                }
            }
        }
        SpecKind::Object { .. } => {
            let merged = merge_properties(spec, path)?;
            out.insert("type".into(), "object".into());
            annotate(&mut out, &spec.meta, description);
            let additional = match (merged.additional, mode) {
                (Additional::Deny, _) => Value::Bool(false),
                (Additional::Allow, _) | (Additional::Schema(_), Mode::Output) => Value::Bool(true),
                (Additional::Schema(values), Mode::Parameters) => {
                    let child = format!("{path}.additionalProperties");
                    compile(values, &child, mode, None)?
                }
            };
            out.insert("additionalProperties".into(), additional);
            if !merged.properties.is_empty() {
                emit_properties(&mut out, &merged.properties, path, mode)?;
            }
        }
        SpecKind::OneOf(variants) => {
            let mut branches = Vec::with_capacity(variants.len());
            for (i, variant) in variants.iter().enumerate() {
                branches.push(compile(variant, &format!("{path}.oneOf[{i}]"), mode, None)?);
            }
            out.insert("oneOf".into(), Value::Array(branches));
            annotate(&mut out, &spec.meta, description);
        }
        SpecKind::Optional(inner) => {
            let own = description.or(spec.meta.description);
            if accepts_null(inner) {
                return compile(inner, path, mode, own);
            }
            let mut branches = match compile(inner, &format!("{path}.oneOf[0]"), mode, None)? {
                Value::Object(mut node)
                    if node.contains_key("oneOf") && !node.contains_key("type") =>
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
            let meta = Meta {
                description: spec.meta.description.or(inner.meta.description),
                title: spec.meta.title.or(inner.meta.title),
            };
            annotate(&mut out, &meta, description);
        }
    }
    Ok(Value::Object(out))
}
