//! Support for macro-generated code. Not public API: paths here may change in any release.

pub use inventory;
pub use serde;
pub use serde_json;

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::ContentBlock;
use crate::error::{ToolArgsError, ToolError};
use crate::exec::{State, ToolRunContext};
use crate::schema::{Additional, SchemaSpec, SpecKind};

/// Deserialises validated arguments into the generated argument struct. Integral floats (`1.0`)
/// are turned into integers first, so they fit Rust integer parameters.
pub fn deserialize_args<T: DeserializeOwned>(args: &Value) -> Result<T, ToolError> {
    let mut args = args.clone();
    crate::args::integral_floats_to_ints(&mut args);
    serde_json::from_value(args).map_err(|e| {
        ToolArgsError::new(vec![format!("\"arguments\" could not be read: {e}")]).into()
    })
}

/// Deserialises arguments for a presenter: `None` when they do not fit.
pub fn soft_args<T: DeserializeOwned>(args: &Value) -> Option<T> {
    let mut args = args.clone();
    crate::args::integral_floats_to_ints(&mut args);
    serde_json::from_value(args).ok()
}

/// Serialises a tool's return value into its canonical JSON value.
pub fn output_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::msg(format!("tool output could not be serialized: {e}")))
}

/// Turns a `Result<T, E: Display>` body outcome into the canonical value or a tool error.
pub fn result_value<T: Serialize, E: std::fmt::Display>(
    outcome: Result<T, E>,
) -> Result<Value, ToolError> {
    match outcome {
        Ok(value) => output_value(&value),
        Err(error) => Err(ToolError::msg(error)),
    }
}

/// Awaits a started body that returns its output (or `()`).
pub async fn finish_value<Fut: Future>(
    started: Result<Fut, ToolError>,
) -> Result<Fut::Output, ToolError> {
    Ok(started?.await)
}

/// Awaits a started body that returns `Result<T, E: Display>`; the error's text is the tool
/// error.
pub async fn finish_result<T, E: std::fmt::Display, Fut: Future<Output = Result<T, E>>>(
    started: Result<Fut, ToolError>,
) -> Result<T, ToolError> {
    started?.await.map_err(ToolError::msg)
}

/// Awaits a started body that returns content blocks, as their JSON value.
pub async fn finish_content<Fut: Future<Output = Vec<ContentBlock>>>(
    started: Result<Fut, ToolError>,
) -> Result<Value, ToolError> {
    output_value(&started?.await)
}

/// Awaits a started body that returns `Result<Vec<ContentBlock>, E>`, as the blocks' JSON value.
pub async fn finish_content_result<E: std::fmt::Display, Fut>(
    started: Result<Fut, ToolError>,
) -> Result<Value, ToolError>
where
    Fut: Future<Output = Result<Vec<ContentBlock>, E>>,
{
    result_value(started?.await)
}

/// Reads host state for a `State<T>` parameter.
pub fn state<T: Send + Sync + 'static>(ctx: &ToolRunContext) -> Result<State<T>, ToolError> {
    ctx.state::<T>().map(State).ok_or_else(|| {
        ToolError::msg(format!(
            "tool state `{}` was not provided by the host",
            std::any::type_name::<T>()
        ))
    })
}

/// The content of a content-returning tool: the value itself, parsed as blocks.
pub fn content_render(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| {
        vec![ContentBlock::text(format!(
            "[content could not be rendered: {e}]"
        ))]
    })
}

/// Compile-time check helpers: generated code calls these with the user's types, spanned on
/// them, so a type error lands on the offending parameter or return type.
pub const fn assert_parameter<T: crate::schema::ToolSchema + DeserializeOwned>() {}

/// [`assert_parameter`] for a parameter whose schema is `#[schema(with = "path")]`.
pub const fn assert_deserialize<T: DeserializeOwned>() {}

/// See [`assert_parameter`].
pub const fn assert_output<T: crate::schema::ToolSchema + Serialize>() {}

/// Reads a canonical output value back for `render` / `presentation_meta`: `None` when it does
/// not fit (an old session log, a policy-replaced value).
pub fn soft_output<T: DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_value(value.clone()).ok()
}

/// The output schema of a tool returning `Vec<ContentBlock>`: an array of anything.
pub fn content_output_schema() -> Value {
    serde_json::json!({"type": "array", "items": {}})
}

/// Splits `Option<T>` (a flattened `Option` never fails: serde reads `None` instead).
const fn unwrap_optional(spec: &SchemaSpec) -> (&SchemaSpec, bool) {
    match spec.kind {
        SpecKind::Optional(inner) => (inner, true),
        _ => (spec, false),
    }
}

/// Whether a flattened spec reads keys without consuming them: a map, or a struct that itself
/// flattens (serde hands both every remaining key, through `FlatMapAccess`).
const fn borrows_keys(spec: &SchemaSpec) -> bool {
    match spec.kind {
        SpecKind::Object {
            flatten,
            additional,
            ..
        } => !flatten.is_empty() || matches!(additional, Additional::Schema(_)),
        _ => false,
    }
}

/// Whether a spec rejects keys it does not declare.
const fn denies_keys(spec: &SchemaSpec) -> bool {
    matches!(
        spec.kind,
        SpecKind::Object {
            additional: Additional::Deny,
            ..
        }
    )
}

/// Whether merging a spec's flattened objects yields a schema for undeclared keys (a map).
const fn has_value_schema(spec: &SchemaSpec) -> bool {
    let (spec, _) = unwrap_optional(spec);
    let SpecKind::Object {
        flatten,
        additional,
        ..
    } = spec.kind
    else {
        return false;
    };
    if matches!(additional, Additional::Schema(_)) {
        return true;
    }
    let mut i = 0;
    while i < flatten.len() {
        if has_value_schema(flatten[i]) {
            return true;
        }
        i += 1;
    }
    false
}

/// How a derived object treats undeclared keys, given serde's `deny_unknown_fields`, whether a
/// field has an alias, and the flattened fields' specs. Evaluated at compile time by
/// `#[derive(ToolSchema)]`; a combination serde reads differently from any schema is a
/// compile-time panic with the reason.
///
/// - An alias makes the object deny undeclared keys: serde reads `{"name": 1, "alias": 2}` as
///   a duplicate field.
/// - A flattened struct that denies keys (or has aliases) makes the parent deny them too.
/// - A flattened map (or struct that flattens) must come last, and cannot be combined with
///   `deny_unknown_fields`: serde hands it every remaining key without consuming it.
pub const fn object_additional(deny: bool, alias: bool, flatten: &[&SchemaSpec]) -> Additional {
    let mut child_denies = false;
    let mut value_schema = false;
    let mut i = 0;
    while i < flatten.len() {
        let (spec, optional) = unwrap_optional(flatten[i]);
        if borrows_keys(spec) {
            if deny {
                panic!(
                    "#[derive(ToolSchema)]: `deny_unknown_fields` cannot be combined with a flattened map (or a flattened struct that flattens): serde reads its keys without consuming them, then rejects them as unknown"
                );
            }
            if !optional && i + 1 != flatten.len() {
                panic!(
                    "#[derive(ToolSchema)]: a flattened map (or a flattened struct that flattens) must be the last flattened field: serde also hands it the keys of the fields after it"
                );
            }
        }
        child_denies |= !optional && denies_keys(spec);
        value_schema |= has_value_schema(flatten[i]);
        i += 1;
    }
    let denied = deny || alias || child_denies;
    if denied && value_schema {
        panic!(
            "#[derive(ToolSchema)]: a flattened map cannot be combined with aliases or with a flattened struct that denies unknown fields: no schema describes the keys serde would reject"
        );
    }
    if denied {
        Additional::Deny
    } else {
        Additional::Allow
    }
}

/// How an internally tagged newtype variant `V(S)` treats undeclared keys: serde reads the
/// whole object (minus the tag) as `S`, so `S`'s own policy applies.
pub const fn internal_newtype_additional(deny: bool, inner: &SchemaSpec) -> Additional {
    match inner.kind {
        SpecKind::Object { .. } => {}
        // A `Box<S>`: `S` is not known at compile time, so its keys are denied (narrower).
        SpecKind::Lazy(_) => return Additional::Deny,
        SpecKind::Optional(_) => panic!(
            "#[derive(ToolSchema)]: an internally tagged newtype variant cannot hold an `Option`: serde reads the variant's keys into it"
        ),
        _ => panic!(
            "#[derive(ToolSchema)]: an internally tagged newtype variant must hold a struct or a map: serde reads the variant's other keys into it"
        ),
    }
    if deny || denies_keys(inner) {
        Additional::Deny
    } else {
        Additional::Allow
    }
}

/// Autoref dispatch for generated code: `(&Gate::<T>::new()).args()` resolves to the real
/// [`ArgsGate`] when `T` has the required traits, and to the inert [`ArgsFallback`] otherwise.
/// The fallback is only ever selected in a crate that already fails to compile (the spanned
/// `assert_parameter` / `assert_output` checks report the missing traits on the user's types),
/// so the uses of `T` in a generated definition add no further errors.
pub struct Gate<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Gate<T> {
    /// The gate of `T`.
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<T> Default for Gate<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// How generated code reads its arguments struct `A`.
pub struct ArgsParts<A> {
    /// The arguments' schema.
    pub spec: &'static SchemaSpec,
    /// Reads validated arguments ([`deserialize_args`]).
    pub read: fn(&Value) -> Result<A, ToolError>,
    /// Reads arguments for a presenter ([`soft_args`]).
    pub soft: fn(&Value) -> Option<A>,
}

impl<A> Clone for ArgsParts<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for ArgsParts<A> {}

/// The real [`ArgsParts`] of a schema-described, deserialisable arguments struct.
pub trait ArgsGate<A> {
    /// The parts.
    fn args(&self) -> ArgsParts<A>;
}

impl<A: crate::schema::ToolSchema + DeserializeOwned> ArgsGate<A> for Gate<A> {
    fn args(&self) -> ArgsParts<A> {
        ArgsParts {
            spec: &A::SCHEMA,
            read: deserialize_args::<A>,
            soft: soft_args::<A>,
        }
    }
}

const ANY: SchemaSpec = SchemaSpec::new(SpecKind::Any);

/// The inert [`ArgsParts`] selected only next to a compile error.
pub trait ArgsFallback<A> {
    /// The parts.
    fn args(&self) -> ArgsParts<A>;
}

impl<A> ArgsFallback<A> for &Gate<A> {
    fn args(&self) -> ArgsParts<A> {
        ArgsParts {
            spec: &ANY,
            read: |_| {
                Err(ToolError::msg(
                    "the tool's arguments type failed to compile",
                ))
            },
            soft: |_| None,
        }
    }
}

/// How generated code writes its output value `T`.
pub struct OutputParts<T> {
    /// The output's schema.
    pub spec: &'static SchemaSpec,
    /// Serialises a value ([`output_value`]).
    pub value: fn(&T) -> Result<Value, ToolError>,
}

/// The real [`OutputParts`] of a schema-described, serialisable output.
pub trait OutputGate<T> {
    /// The parts.
    fn output(&self) -> OutputParts<T>;
}

impl<T: crate::schema::ToolSchema + Serialize> OutputGate<T> for Gate<T> {
    fn output(&self) -> OutputParts<T> {
        OutputParts {
            spec: &T::SCHEMA,
            value: output_value::<T>,
        }
    }
}

/// The inert [`OutputParts`] selected only next to a compile error.
pub trait OutputFallback<T> {
    /// The parts.
    fn output(&self) -> OutputParts<T>;
}

impl<T> OutputFallback<T> for &Gate<T> {
    fn output(&self) -> OutputParts<T> {
        OutputParts {
            spec: &ANY,
            value: |_| Err(ToolError::msg("the tool's output type failed to compile")),
        }
    }
}

/// Turns a `Result<T, E: Display>` body outcome into the canonical value (through `value`) or
/// a tool error.
pub fn result_with<T, E: std::fmt::Display>(
    outcome: Result<T, E>,
    value: fn(&T) -> Result<Value, ToolError>,
) -> Result<Value, ToolError> {
    match outcome {
        Ok(out) => value(&out),
        Err(error) => Err(ToolError::msg(error)),
    }
}
