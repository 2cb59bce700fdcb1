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
#[derive(Debug, Clone, Copy, Default)]
pub struct Meta {
    /// `description` (from `///` docs).
    pub description: Option<&'static str>,
    /// `title`.
    pub title: Option<&'static str>,
    /// `examples`: the value(s) of `#[schema(example = ...)]`, serialised when the schema is
    /// compiled.
    pub examples: Option<fn() -> serde_json::Value>,
    /// The named Rust type this node describes (derived types have one): a recursive type is
    /// emitted once under `$defs` and referred to with `$ref`.
    pub name: Option<TypeName>,
}

impl PartialEq for Meta {
    fn eq(&self, other: &Meta) -> bool {
        self.description == other.description
            && self.title == other.title
            && match (self.examples, other.examples) {
                (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
            && self.name == other.name
    }
}

impl Meta {
    /// No annotations.
    pub const NONE: Meta = Meta {
        description: None,
        title: None,
        examples: None,
        name: None,
    };

    /// Annotations with only a description.
    pub const fn described(description: &'static str) -> Meta {
        Meta {
            description: Some(description),
            ..Meta::NONE
        }
    }
}

/// A Rust type's name (for `$defs`) and identity (for recursion): `#[derive(ToolSchema)]` sets
/// it to the type's identifier and `std::any::type_name::<Self>`.
#[derive(Debug, Clone, Copy)]
pub struct TypeName {
    /// The `$defs` key (a number is appended when two types share it).
    pub name: &'static str,
    /// The type's full name; two nodes with the same one describe the same type.
    pub id: fn() -> &'static str,
}

impl PartialEq for TypeName {
    fn eq(&self, other: &TypeName) -> bool {
        self.name == other.name && (self.id)() == (other.id)()
    }
}

/// Assertions added to a node by constraint attributes (`#[schema(range(..))]`, `length`,
/// `regex`, `email`, `url`, `format`) or by the type itself (sets: `unique_items`).
///
/// They apply to the value the node describes: on an `Option<T>` or a `Box<T>` they reach `T`.
/// Compiling a spec checks that each applies to its node's type (a number range on a string is
/// an error) and intersects them with the type's own bounds (a `u8` with `range(max = 1000)`
/// keeps `maximum: 255`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Checks {
    /// `minimum` (inclusive).
    pub minimum: Option<Literal>,
    /// `maximum` (inclusive).
    pub maximum: Option<Literal>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<Literal>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<Literal>,
    /// `multipleOf`.
    pub multiple_of: Option<Literal>,
    /// `minLength` (strings, in code points) / `minItems` (arrays) / `minProperties` (maps).
    pub min_length: Option<u64>,
    /// `maxLength` / `maxItems` / `maxProperties`.
    pub max_length: Option<u64>,
    /// `pattern` (ECMA-262).
    pub pattern: Option<&'static str>,
    /// `format`.
    pub format: Option<&'static str>,
    /// `uniqueItems: true`.
    pub unique_items: bool,
}

impl Checks {
    /// No assertions.
    pub const NONE: Checks = Checks {
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
        multiple_of: None,
        min_length: None,
        max_length: None,
        pattern: None,
        format: None,
        unique_items: false,
    };

    /// Whether no assertion is set.
    pub const fn is_empty(&self) -> bool {
        self.minimum.is_none()
            && self.maximum.is_none()
            && self.exclusive_minimum.is_none()
            && self.exclusive_maximum.is_none()
            && self.multiple_of.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.pattern.is_none()
            && self.format.is_none()
            && !self.unique_items
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
#[derive(Debug, Clone, Copy)]
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
    /// A fixed-length array of these items, in order (a Rust tuple): `prefixItems`,
    /// `items: false` and `minItems`.
    Tuple(&'static [SchemaSpec]),
    /// The schema a function returns: the same as that schema, read only when the spec is
    /// compiled. Container types (`Vec<T>`, `Box<T>`, maps, sets) refer to their items through
    /// it, so a recursive type's `const` never refers to itself.
    Lazy(fn() -> &'static SchemaSpec),
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
    /// The assertions of constraint attributes (see [`Checks`]).
    pub checks: Checks,
}

impl PartialEq for SpecKind {
    /// Structural equality; [`SpecKind::Lazy`] nodes are equal when they are the same function.
    fn eq(&self, other: &SpecKind) -> bool {
        use SpecKind as K;
        match (self, other) {
            (K::Any, K::Any) | (K::Null, K::Null) | (K::Boolean, K::Boolean) => true,
            (K::Integer(a), K::Integer(b)) | (K::Number(a), K::Number(b)) => a == b,
            (K::String(a), K::String(b)) => a == b,
            (K::Enum(a), K::Enum(b)) => a == b,
            (K::Const(a), K::Const(b)) => a == b,
            (
                K::Array { items, size },
                K::Array {
                    items: other_items,
                    size: other_size,
                },
            ) => items == other_items && size == other_size,
            (
                K::Object {
                    properties,
                    flatten,
                    additional,
                },
                K::Object {
                    properties: p,
                    flatten: f,
                    additional: a,
                },
            ) => properties == p && flatten == f && additional == a,
            (K::OneOf(a), K::OneOf(b)) | (K::Tuple(a), K::Tuple(b)) => a == b,
            (K::Optional(a), K::Optional(b)) => a == b,
            (K::Lazy(a), K::Lazy(b)) => std::ptr::fn_addr_eq(*a, *b),
            _ => false,
        }
    }
}

impl SchemaSpec {
    /// A spec of the given kind without annotations.
    pub const fn new(kind: SpecKind) -> SchemaSpec {
        SchemaSpec {
            kind,
            meta: Meta::NONE,
            checks: Checks::NONE,
        }
    }

    /// The spec `f` returns, read when compiled (see [`SpecKind::Lazy`]).
    pub const fn lazy(f: fn() -> &'static SchemaSpec) -> SchemaSpec {
        SchemaSpec::new(SpecKind::Lazy(f))
    }

    /// The same spec, named after a Rust type (see [`Meta::name`]).
    pub const fn named(mut self, name: &'static str, id: fn() -> &'static str) -> SchemaSpec {
        self.meta.name = Some(TypeName { name, id });
        self
    }

    /// The same spec with an `examples` annotation.
    pub const fn with_examples(mut self, examples: fn() -> serde_json::Value) -> SchemaSpec {
        self.meta.examples = Some(examples);
        self
    }

    /// The same spec with `checks` added (each set field replaces the spec's own).
    ///
    /// Panics (a compile-time error when evaluated in a `const`) when a check cannot apply to
    /// the spec's type, as far as it is known at compile time: a number range on a string, a
    /// length on a boolean, a pattern on a number.
    pub const fn with_checks(mut self, checks: Checks) -> SchemaSpec {
        check_applies(&self, &checks);
        let own = self.checks;
        self.checks = Checks {
            minimum: if checks.minimum.is_some() {
                checks.minimum
            } else {
                own.minimum
            },
            maximum: if checks.maximum.is_some() {
                checks.maximum
            } else {
                own.maximum
            },
            exclusive_minimum: if checks.exclusive_minimum.is_some() {
                checks.exclusive_minimum
            } else {
                own.exclusive_minimum
            },
            exclusive_maximum: if checks.exclusive_maximum.is_some() {
                checks.exclusive_maximum
            } else {
                own.exclusive_maximum
            },
            multiple_of: if checks.multiple_of.is_some() {
                checks.multiple_of
            } else {
                own.multiple_of
            },
            min_length: if checks.min_length.is_some() {
                checks.min_length
            } else {
                own.min_length
            },
            max_length: if checks.max_length.is_some() {
                checks.max_length
            } else {
                own.max_length
            },
            pattern: if checks.pattern.is_some() {
                checks.pattern
            } else {
                own.pattern
            },
            format: if checks.format.is_some() {
                checks.format
            } else {
                own.format
            },
            unique_items: checks.unique_items || own.unique_items,
        };
        self
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

    /// The kind the value itself has: through `Option<T>` (and only when the inner spec is
    /// known at compile time).
    const fn value_kind(&self) -> &SpecKind {
        match &self.kind {
            SpecKind::Optional(inner) => inner.value_kind(),
            kind => kind,
        }
    }

    /// An object spec with the given properties that accepts extra properties.
    pub const fn object(properties: &'static [Property]) -> SchemaSpec {
        SchemaSpec::new(SpecKind::Object {
            properties,
            flatten: &[],
            additional: Additional::Allow,
        })
    }

    /// An object spec with the given properties that refuses extra properties
    /// (`additionalProperties: false`): the arguments of a `#[tool]`.
    ///
    /// ```
    /// use dsh_tools::schema::{Property, SchemaSpec, ToolSchema};
    /// const ARGS: SchemaSpec = SchemaSpec::closed_object(&[Property::new("path", &String::SCHEMA)]);
    /// assert_eq!(
    ///     ARGS.to_parameters_schema().unwrap().to_string(),
    ///     r#"{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"}},"required":["path"]}"#
    /// );
    /// ```
    pub const fn closed_object(properties: &'static [Property]) -> SchemaSpec {
        SchemaSpec::new(SpecKind::Object {
            properties,
            flatten: &[],
            additional: Additional::Deny,
        })
    }
}

/// Panics when `checks` cannot apply to `spec` (see [`SchemaSpec::with_checks`]).
const fn check_applies(spec: &SchemaSpec, checks: &Checks) {
    let numeric = checks.minimum.is_some()
        || checks.maximum.is_some()
        || checks.exclusive_minimum.is_some()
        || checks.exclusive_maximum.is_some()
        || checks.multiple_of.is_some();
    let length = checks.min_length.is_some() || checks.max_length.is_some();
    let textual = checks.pattern.is_some() || checks.format.is_some();
    match spec.value_kind() {
        // Not known until the spec is compiled; checked then.
        SpecKind::Lazy(_) | SpecKind::OneOf(_) => {}
        SpecKind::Any => {
            if numeric || length || textual || checks.unique_items {
                panic!(
                    "#[schema]: this value is any JSON (`serde_json::Value`), which has no type for `range`, `length`, `regex` or `format` to constrain: give it a typed Rust type (a number, a string, a collection), or its own schema with `#[schema(with = \"path\")]`"
                );
            }
        }
        SpecKind::Integer(_) | SpecKind::Number(_) => {
            if length || textual || checks.unique_items {
                panic!(
                    "#[schema]: `length`, `regex`, `email`, `url` and `format` apply to strings and collections, not to numbers"
                );
            }
        }
        SpecKind::String(_) => {
            if numeric || checks.unique_items {
                panic!("#[schema]: `range` applies to numbers, not to strings");
            }
        }
        SpecKind::Array { .. } | SpecKind::Tuple(_) => {
            if numeric || textual {
                panic!(
                    "#[schema]: only `length` applies to arrays (`range`, `regex` and `format` apply to their items' types)"
                );
            }
        }
        SpecKind::Object {
            properties,
            flatten,
            additional,
        } if is_map(properties, flatten, *additional) => {
            if numeric || textual || checks.unique_items {
                panic!(
                    "#[schema]: only `length` (its number of entries) applies to a map (`range`, `regex` and `format` apply to its values' types)"
                );
            }
        }
        SpecKind::Boolean
        | SpecKind::Null
        | SpecKind::Enum(_)
        | SpecKind::Const(_)
        | SpecKind::Object { .. }
        | SpecKind::Optional(_) => {
            if numeric || length || textual || checks.unique_items {
                panic!(
                    "#[schema]: constraints apply to numbers (`range`), strings (`length`, `regex`, `email`, `url`, `format`), arrays and maps (`length`), not to booleans, enums or structs"
                );
            }
        }
    }
}

/// Whether an object spec is a map (no declared properties, any keys): `length` bounds its
/// number of entries (`minProperties`/`maxProperties`).
pub(crate) const fn is_map(
    properties: &[Property],
    flatten: &[&SchemaSpec],
    additional: Additional,
) -> bool {
    properties.is_empty() && flatten.is_empty() && !matches!(additional, Additional::Deny)
}
