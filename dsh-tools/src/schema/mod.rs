//! Compile-time schemas: the [`SchemaSpec`] IR, the [`ToolSchema`] trait and the compiler to
//! JSON Schema.
//!
//! ```
//! use dsh_tools::schema::ToolSchema;
//! let schema = <Option<Vec<String>> as ToolSchema>::SCHEMA.to_value_schema().unwrap();
//! assert_eq!(
//!     schema.to_string(),
//!     r#"{"oneOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]}"#
//! );
//! ```

mod checks;
mod compile;
mod external;
mod impls;
mod recursion;
mod spec;

pub use impls::ToolSchema;
pub use spec::{
    Additional, Checks, Literal, Meta, NumberBounds, Property, SchemaSpec, SizeBounds, SpecKind,
    TypeName,
};
