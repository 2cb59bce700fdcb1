//! The enforced JSON-Schema subset and value validation (`docs/CONTRACTS.md`, "Schema vocabulary",
//! "Checking a schema", "Validating a value").
//!
//! Schemas are checked with [`assert_supported`] / [`assert_supported_in`] (every violation, in a
//! fixed order), compiled once into a [`CompiledSchema`] and then validated quickly with
//! [`CompiledSchema::is_valid`] or, with model-readable messages, [`CompiledSchema::validate`].
//! [`validate_value`] validates against a raw schema in one call.
//!
//! Three vocabularies exist (`docs/CONTRACTS.md`, "Schema vocabulary"):
//! [`Vocabulary::Reference`] is exactly the subset of the reference implementation;
//! [`Vocabulary::Output`] adds tuples and local `$ref`s (what Rust output types need);
//! [`Vocabulary::Parameters`] adds the assertions typed parameters need: numeric bounds,
//! `multipleOf`, lengths, `pattern` (ECMA-262), `format`, `uniqueItems`, entry counts and map
//! values.
//! [`is_supported`] is the allocation-free verdict of the same rules (the Code Mode SDK and the
//! dialects ask it), and [`resolve_ref`] the one `$ref` resolver.
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
mod cycles;
mod fast;
mod format;
mod linear;
mod messages;
mod pattern;
mod refs;
mod scalar;
#[cfg(test)]
mod tests;
mod union;
mod unique;
mod unknown;
mod validate;
mod walk;

pub use assert::{
    assert_object_schema, assert_supported, assert_supported_in, is_supported,
    unsupported_violations,
};
pub use compiled::CompiledSchema;
pub use refs::{resolve_ref, resolve_schema_ref};
pub use unknown::{closest_name, unknown_key_violation};
pub use validate::validate_value;

/// Which keywords a schema may use (`docs/CONTRACTS.md`, "Schema vocabulary").
///
/// ```
/// use dsh_tools::subset::{assert_supported_in, Vocabulary};
/// let schema = serde_json::json!({"type": "integer", "minimum": 0});
/// assert!(assert_supported_in(&schema, Vocabulary::Parameters).is_ok());
/// assert!(assert_supported_in(&schema, Vocabulary::Reference).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Vocabulary {
    /// The reference subset: `type`, `oneOf`, `properties`, `required`, `additionalProperties`,
    /// `items`, `enum`, `const` plus the annotations `description`, `title`, `default`, `examples`.
    #[default]
    Reference,
    /// Output schemas: the reference subset plus the structural keywords Rust types need and
    /// that constrain nothing a serialiser could break: tuples (`prefixItems` with
    /// `items: false`) and local references (`$ref`, `$defs`) for recursive types.
    Output,
    /// Parameter schemas: [`Vocabulary::Output`] plus the assertions typed parameters and
    /// their constraint attributes need: `minimum`, `maximum`, `exclusiveMinimum`,
    /// `exclusiveMaximum`, `multipleOf` (numbers), `minLength`, `maxLength`, `pattern`, `format`
    /// (strings), `minItems`, `maxItems`, `uniqueItems` (arrays), `minProperties`,
    /// `maxProperties` and a schema-valued `additionalProperties` (objects, maps).
    Parameters,
}

/// The keywords that constrain by type (everything but `type`/`oneOf`, references and
/// annotations), in the fixed order of `docs/CONTRACTS.md`, "Checking a schema", rules 4, 5 and 6.
pub const REFERENCE_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// [`REFERENCE_KEYWORDS`] with the tuple keyword of [`Vocabulary::Output`].
pub const OUTPUT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
];

/// [`OUTPUT_KEYWORDS`] followed by the assertions of [`Vocabulary::Parameters`].
pub const PARAMETER_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// The reference-only keywords: `$ref` (a local reference) and `$defs` (the definitions it
/// points into), in [`Vocabulary::Output`] and [`Vocabulary::Parameters`].
pub const REFERENCE_LOCATORS: &[&str] = &["$ref", "$defs"];

/// The annotation keywords.
pub const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples"];

/// The supported type names, in message order.
pub const SCHEMA_TYPES: &[&str] = &[
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// The formats `format` asserts in [`Vocabulary::Parameters`].
pub const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
];

impl Vocabulary {
    /// The type-specific keywords, in the fixed reporting order.
    pub fn typed_keywords(self) -> &'static [&'static str] {
        match self {
            Self::Reference => REFERENCE_KEYWORDS,
            Self::Output => OUTPUT_KEYWORDS,
            Self::Parameters => PARAMETER_KEYWORDS,
        }
    }

    /// Whether `$ref`/`$defs` and tuples are in the vocabulary.
    pub(crate) fn structural(self) -> bool {
        self != Self::Reference
    }

    /// The `(subset: …)` list of the unknown-keyword message.
    fn subset_list(self) -> &'static str {
        match self {
            Self::Reference => {
                "type/oneOf/properties/required/additionalProperties/items/enum/const"
            }
            Self::Output => {
                "type/oneOf/properties/required/additionalProperties/items/prefixItems/enum/const/$ref/$defs"
            }
            Self::Parameters => {
                "type/oneOf/properties/required/additionalProperties/items/prefixItems/enum/const/minimum/maximum/exclusiveMinimum/exclusiveMaximum/multipleOf/minLength/maxLength/pattern/format/minItems/maxItems/uniqueItems/minProperties/maxProperties/$ref/$defs"
            }
        }
    }

    /// Whether `key` is a constraint keyword of this vocabulary.
    pub fn is_constraint(self, key: &str) -> bool {
        key == "type"
            || key == "oneOf"
            || self.typed_keywords().contains(&key)
            || (self.structural() && REFERENCE_LOCATORS.contains(&key))
    }
}

/// The types a type-specific keyword may appear on.
///
/// ```
/// assert_eq!(dsh_tools::subset::allowed_types("pattern"), &["string"]);
/// ```
pub fn allowed_types(key: &str) -> &'static [&'static str] {
    match key {
        "properties" | "required" | "additionalProperties" | "minProperties" | "maxProperties" => {
            &["object"]
        }
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" => &["array"],
        "enum" | "const" => &["string", "number", "integer", "boolean", "null"],
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            &["number", "integer"]
        }
        "minLength" | "maxLength" | "pattern" | "format" => &["string"],
        _ => &[],
    }
}
