//! The `const`-constructible schema description ([`SchemaSpec`]).
//!
//! A `SchemaSpec` is plain static data: every type that implements
//! [`ToolSchema`](crate::ToolSchema) describes itself with one, at compile time, and
//! `#[derive(ToolSchema)]` / `#[tool]` build them from Rust types and `///` docs. Turning a spec
//! into JSON Schema happens once, when a tool definition is built (see
//! [`SchemaSpec::to_parameters_schema`] and [`SchemaSpec::to_value_schema`]).

/// A JSON literal usable in `const` context (enum members and `const` values).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A negative or positive integer.
    Int(i64),
    /// A non-negative integer (covers the whole `u64` range).
    UInt(u64),
    /// A finite float.
    Float(f64),
    /// A string.
    Str(&'static str),
}

/// Annotations of a schema node.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Meta {
    /// `description` (from `///` docs).
    pub description: Option<&'static str>,
    /// `title`.
    pub title: Option<&'static str>,
}

impl Meta {
    /// No annotations.
    pub const NONE: Meta = Meta {
        description: None,
        title: None,
    };

    /// Annotations with only a description.
    pub const fn described(description: &'static str) -> Meta {
        Meta {
            description: Some(description),
            title: None,
        }
    }
}

/// Numeric bounds of an `integer` or `number` node (inclusive, as JSON Schema's
/// `minimum`/`maximum`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NumberBounds {
    /// `minimum`.
    pub minimum: Option<Literal>,
    /// `maximum`.
    pub maximum: Option<Literal>,
}

impl NumberBounds {
    /// No bounds.
    pub const NONE: NumberBounds = NumberBounds {
        minimum: None,
        maximum: None,
    };
}

/// Size bounds of a `string` (in code points) or an `array` (in items).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SizeBounds {
    /// `minLength` / `minItems`.
    pub min: Option<u64>,
    /// `maxLength` / `maxItems`.
    pub max: Option<u64>,
}

impl SizeBounds {
    /// No bounds.
    pub const NONE: SizeBounds = SizeBounds {
        min: None,
        max: None,
    };

    /// Exactly `n`.
    pub const fn exactly(n: u64) -> SizeBounds {
        SizeBounds {
            min: Some(n),
            max: Some(n),
        }
    }
}

/// One named property of an object node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Property {
    /// The wire name (after serde renames).
    pub name: &'static str,
    /// The property's schema.
    pub schema: &'static SchemaSpec,
    /// Whether the property is listed in `required`.
    pub required: bool,
    /// A description that overrides (or supplies) the schema's own description.
    pub description: Option<&'static str>,
}

impl Property {
    /// A property that is required unless its schema is [`SpecKind::Optional`].
    pub const fn new(name: &'static str, schema: &'static SchemaSpec) -> Property {
        Property {
            name,
            schema,
            required: !schema.is_optional(),
            description: None,
        }
    }

    /// Sets the description.
    pub const fn described(mut self, description: &'static str) -> Property {
        self.description = Some(description);
        self
    }

    /// Marks the property optional (a `#[serde(default)]` field).
    pub const fn optional(mut self) -> Property {
        self.required = false;
        self
    }
}

/// Whether an object accepts properties it does not declare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Additional {
    /// Extra properties are allowed (`additionalProperties: true`).
    Allow,
    /// Extra properties are rejected (`additionalProperties: false`).
    Deny,
    /// Extra properties are allowed and must match the schema (a map's values).
    Schema(&'static SchemaSpec),
}

/// The shape of a schema node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpecKind {
    /// Any lossless JSON value (`serde_json::Value`).
    Any,
    /// `null` (the unit type).
    Null,
    /// A boolean.
    Boolean,
    /// An integer (a finite number with zero fraction).
    Integer(NumberBounds),
    /// A finite number.
    Number(NumberBounds),
    /// A string.
    String(SizeBounds),
    /// One of a fixed set of literals (all of one JSON type): a unit enum.
    Enum(&'static [Literal]),
    /// Exactly one literal (a serde tag).
    Const(Literal),
    /// An array.
    Array {
        /// The item schema (`None` = any JSON item).
        items: Option<&'static SchemaSpec>,
        /// `minItems` / `maxItems`.
        size: SizeBounds,
    },
    /// An object with named properties.
    Object {
        /// The declared properties, in declaration order.
        properties: &'static [Property],
        /// Object specs whose properties are merged in (serde `flatten`).
        flatten: &'static [&'static SchemaSpec],
        /// How undeclared properties are treated.
        additional: Additional,
    },
    /// Exactly one of the variants (`oneOf`).
    OneOf(&'static [SchemaSpec]),
    /// The inner schema, or absent / `null` (`Option<T>`).
    Optional(&'static SchemaSpec),
}

/// A compile-time schema description: a [`SpecKind`] plus annotations.
///
/// ```
/// use dsh_tools::schema::{SchemaSpec, ToolSchema};
/// const TAGS: SchemaSpec = <Vec<String> as ToolSchema>::SCHEMA;
/// assert_eq!(
///     TAGS.to_value_schema().unwrap().to_string(),
///     r#"{"type":"array","items":{"type":"string"}}"#
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchemaSpec {
    /// The shape.
    pub kind: SpecKind,
    /// The annotations.
    pub meta: Meta,
}

impl SchemaSpec {
    /// A spec of the given kind without annotations.
    pub const fn new(kind: SpecKind) -> SchemaSpec {
        SchemaSpec {
            kind,
            meta: Meta::NONE,
        }
    }

    /// The same spec with a description.
    pub const fn described(mut self, description: &'static str) -> SchemaSpec {
        self.meta.description = Some(description);
        self
    }

    /// The same spec with a title.
    pub const fn titled(mut self, title: &'static str) -> SchemaSpec {
        self.meta.title = Some(title);
        self
    }

    /// Whether the value may be absent from its parent object (`Option<T>`).
    pub const fn is_optional(&self) -> bool {
        matches!(self.kind, SpecKind::Optional(_))
    }

    /// An object spec with the given properties that accepts extra properties.
    pub const fn object(properties: &'static [Property]) -> SchemaSpec {
        SchemaSpec::new(SpecKind::Object {
            properties,
            flatten: &[],
            additional: Additional::Allow,
        })
    }
}
