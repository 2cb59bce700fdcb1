//! The enforced JSON-Schema subset (REFERENCE §2) and value validation (REFERENCE §3).
//!
//! Schemas are checked with [`assert_supported`] / [`assert_supported_in`] (every violation, in a
//! fixed order), compiled once into a [`CompiledSchema`] and then validated quickly with
//! [`CompiledSchema::is_valid`] or, with model-readable messages, [`CompiledSchema::validate`].
//! [`validate_value`] validates against a raw schema in one call.
//!
//! Two vocabularies exist: [`Vocabulary::Reference`] is exactly the subset of the reference
//! implementation; [`Vocabulary::Parameters`] adds the bound keywords `minimum`, `maximum`,
//! `minLength`, `maxLength`, `minItems` and `maxItems` that typed Rust parameters need (integer
//! widths, non-empty collections).
//!
//! Every traversal is iterative with explicit stacks: 5,000-deep schemas and values are fine.
//!
//! ```
//! use dsh_tools::subset::{CompiledSchema, Vocabulary};
//! use serde_json::json;
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"path": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
//!     "required": ["path"]
//! });
//! let compiled = CompiledSchema::compile(&schema, Vocabulary::Reference).unwrap();
//! assert!(compiled.is_valid(&json!({"path": "a", "tags": ["x"]})));
//! assert_eq!(
//!     compiled.validate(&json!({"tags": ["x", 1]}), ""),
//!     vec!["missing required property \"path\"", "\"tags[1]\" must be a string"]
//! );
//! ```

mod assert;
mod compiled;
mod fast;
mod messages;
mod scalar;
#[cfg(test)]
mod tests;
mod validate;

pub use assert::{
    assert_object_schema, assert_supported, assert_supported_in, unsupported_violations,
};
pub use compiled::CompiledSchema;
pub use validate::validate_value;

/// Which keywords a schema may use.
///
/// ```
/// use dsh_tools::subset::{assert_supported_in, Vocabulary};
/// let schema = serde_json::json!({"type": "integer", "minimum": 0});
/// assert!(assert_supported_in(&schema, Vocabulary::Parameters).is_ok());
/// assert!(assert_supported_in(&schema, Vocabulary::Reference).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Vocabulary {
    /// Exactly REFERENCE §2: `type`, `oneOf`, `properties`, `required`, `additionalProperties`,
    /// `items`, `enum`, `const` plus the annotations `description`, `title`, `default`, `examples`.
    #[default]
    Reference,
    /// The reference subset plus `minimum`/`maximum` (number, integer), `minLength`/`maxLength`
    /// (string) and `minItems`/`maxItems` (array), and a schema-valued `additionalProperties`
    /// (the values of a map: each undeclared property is validated against it).
    Parameters,
}

/// The keywords that constrain by type (everything but `type`/`oneOf` and annotations), in the
/// fixed order of REFERENCE §2 rules 6, 7 and 9.
const REFERENCE_TYPED: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// [`REFERENCE_TYPED`] followed by the bound keywords of [`Vocabulary::Parameters`].
const PARAMETERS_TYPED: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// The annotation keywords.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples"];

/// The supported type names, in message order.
const SCHEMA_TYPES: &[&str] = &[
    "object", "array", "string", "number", "integer", "boolean", "null",
];

impl Vocabulary {
    /// The type-specific keywords, in the fixed reporting order.
    fn typed_keywords(self) -> &'static [&'static str] {
        match self {
            Self::Reference => REFERENCE_TYPED,
            Self::Parameters => PARAMETERS_TYPED,
        }
    }

    /// The `(subset: …)` list of the unknown-keyword message.
    fn subset_list(self) -> &'static str {
        match self {
            Self::Reference => {
                "type/oneOf/properties/required/additionalProperties/items/enum/const"
            }
            Self::Parameters => {
                "type/oneOf/properties/required/additionalProperties/items/enum/const/minimum/maximum/minLength/maxLength/minItems/maxItems"
            }
        }
    }

    /// Whether `key` is a constraint keyword of this vocabulary.
    fn is_constraint(self, key: &str) -> bool {
        key == "type" || key == "oneOf" || self.typed_keywords().contains(&key)
    }
}

/// The types a type-specific keyword may appear on.
fn allowed_types(key: &str) -> &'static [&'static str] {
    match key {
        "properties" | "required" | "additionalProperties" => &["object"],
        "items" | "minItems" | "maxItems" => &["array"],
        "enum" | "const" => &["string", "number", "integer", "boolean", "null"],
        "minimum" | "maximum" => &["number", "integer"],
        "minLength" | "maxLength" => &["string"],
        _ => &[],
    }
}
