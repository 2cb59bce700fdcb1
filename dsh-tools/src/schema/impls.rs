//! [`ToolSchema`] for the standard library types.
//!
//! Integer widths become `integer` with the `minimum`/`maximum` of the Rust type (never a
//! non-standard `format`), so a value that validates always fits. Types of 64 bits and more are
//! bounded to the JSON-safe range ±(2^53 − 1): beyond it a JSON number is not exact in JavaScript
//! or in most provider pipelines, so a model cannot send such a value reliably, and a bound like
//! `18446744073709551615` is itself unrepresentable as a double. Narrowing what is accepted keeps
//! validation sound (whatever validates still deserialises).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::NonZero;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use super::spec::{
    Additional, Checks, Literal, NumberBounds, Property, SchemaSpec, SizeBounds, SpecKind,
};

/// A Rust type whose JSON shape is known at compile time.
///
/// Implemented for the standard types and derived with `#[derive(ToolSchema)]` for structs and
/// enums. The schema describes what the type's serde `Deserialize` accepts (and what its
/// `Serialize` produces): whenever validation accepts a value, deserialising it succeeds.
///
/// ```
/// use dsh_tools::schema::ToolSchema;
/// let schema = <u8 as ToolSchema>::SCHEMA.to_parameter_value_schema().unwrap();
/// assert_eq!(schema.to_string(), r#"{"type":"integer","minimum":0,"maximum":255}"#);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tool schema",
    label = "this type cannot be described to a model",
    note = "derive it with `#[derive(ToolSchema)]`, implement it by hand, or use a type that implements `ToolSchema` (std scalars, String, Vec, sets, tuples, Option, maps with String keys, serde_json::Value, and behind features uuid, chrono, time, url, rust_decimal, indexmap)"
)]
pub trait ToolSchema {
    /// The type's schema.
    const SCHEMA: SchemaSpec;
}

macro_rules! integer_schema {
    ($($ty:ty => $min:expr, $max:expr;)*) => {$(
        impl ToolSchema for $ty {
            const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Integer(NumberBounds {
                minimum: Some($min),
                maximum: Some($max),
            }));
        }
    )*};
}

/// The largest integer a double represents exactly (JavaScript's `Number.MAX_SAFE_INTEGER`).
const MAX_SAFE: u64 = (1 << 53) - 1;
/// The smallest such integer (`Number.MIN_SAFE_INTEGER`).
const MIN_SAFE: i64 = -((1 << 53) - 1);

integer_schema! {
    u8 => Literal::UInt(0), Literal::UInt(u8::MAX as u64);
    u16 => Literal::UInt(0), Literal::UInt(u16::MAX as u64);
    u32 => Literal::UInt(0), Literal::UInt(u32::MAX as u64);
    u64 => Literal::UInt(0), Literal::UInt(MAX_SAFE);
    u128 => Literal::UInt(0), Literal::UInt(MAX_SAFE);
    usize => Literal::UInt(0), Literal::UInt(if (usize::MAX as u64) < MAX_SAFE { usize::MAX as u64 } else { MAX_SAFE });
    i8 => Literal::Int(i8::MIN as i64), Literal::Int(i8::MAX as i64);
    i16 => Literal::Int(i16::MIN as i64), Literal::Int(i16::MAX as i64);
    i32 => Literal::Int(i32::MIN as i64), Literal::Int(i32::MAX as i64);
    i64 => Literal::Int(MIN_SAFE), Literal::UInt(MAX_SAFE);
    i128 => Literal::Int(MIN_SAFE), Literal::UInt(MAX_SAFE);
    isize => Literal::Int(ISIZE_MIN), Literal::UInt(ISIZE_MAX);
}

/// `isize::MIN`, bounded to the JSON-safe range.
const ISIZE_MIN: i64 = if (isize::MIN as i64) > MIN_SAFE {
    isize::MIN as i64
} else {
    MIN_SAFE
};
/// `isize::MAX`, bounded to the JSON-safe range.
const ISIZE_MAX: u64 = if (isize::MAX as u64) < MAX_SAFE {
    isize::MAX as u64
} else {
    MAX_SAFE
};

impl ToolSchema for f64 {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Number(NumberBounds::NONE));
}

impl ToolSchema for f32 {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Number(NumberBounds {
        minimum: Some(Literal::Float(f32::MIN as f64)),
        maximum: Some(Literal::Float(f32::MAX as f64)),
    }));
}

impl ToolSchema for bool {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Boolean);
}

impl ToolSchema for () {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Null);
}

impl ToolSchema for char {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::String(SizeBounds::exactly(1)));
}

pub(super) const STRING: SchemaSpec = SchemaSpec::new(SpecKind::String(SizeBounds::NONE));

impl ToolSchema for String {
    const SCHEMA: SchemaSpec = STRING;
}

impl ToolSchema for str {
    const SCHEMA: SchemaSpec = STRING;
}

impl ToolSchema for Cow<'_, str> {
    const SCHEMA: SchemaSpec = STRING;
}

impl ToolSchema for PathBuf {
    const SCHEMA: SchemaSpec = STRING;
}

impl ToolSchema for serde_json::Value {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Any);
}

impl ToolSchema for serde_json::Map<String, serde_json::Value> {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &[],
        flatten: &[],
        additional: Additional::Allow,
    });
}

impl<T: ToolSchema> ToolSchema for Option<T> {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Optional(&T::SCHEMA));
}

impl<T: ToolSchema> ToolSchema for Vec<T> {
    // Items are read lazily: a type that holds a `Vec` of itself has a finite `const`.
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Array {
        items: Some(&SchemaSpec::lazy(|| &T::SCHEMA)),
        size: SizeBounds::NONE,
    });
}

impl<T: ToolSchema> ToolSchema for VecDeque<T> {
    const SCHEMA: SchemaSpec = <Vec<T>>::SCHEMA;
}

/// A set: an array whose items are unique under JSON equality (`uniqueItems`). serde would read
/// duplicates into a set silently; the schema refuses them, which is narrower.
pub(super) const fn set_of(items: &'static SchemaSpec) -> SchemaSpec {
    SchemaSpec::new(SpecKind::Array {
        items: Some(items),
        size: SizeBounds::NONE,
    })
    .with_checks(Checks {
        unique_items: true,
        ..Checks::NONE
    })
}

impl<T: ToolSchema, S> ToolSchema for HashSet<T, S> {
    const SCHEMA: SchemaSpec = set_of(&SchemaSpec::lazy(|| &T::SCHEMA));
}

impl<T: ToolSchema> ToolSchema for BTreeSet<T> {
    const SCHEMA: SchemaSpec = set_of(&SchemaSpec::lazy(|| &T::SCHEMA));
}

impl<T: ToolSchema> ToolSchema for [T] {
    const SCHEMA: SchemaSpec = <Vec<T>>::SCHEMA;
}

impl<T: ToolSchema, const N: usize> ToolSchema for [T; N] {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Array {
        items: Some(&SchemaSpec::lazy(|| &T::SCHEMA)),
        size: SizeBounds::exactly(N as u64),
    });
}

impl<T: ToolSchema, S> ToolSchema for HashMap<String, T, S> {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &[],
        flatten: &[],
        additional: Additional::Schema(&SchemaSpec::lazy(|| &T::SCHEMA)),
    });
}

impl<T: ToolSchema> ToolSchema for BTreeMap<String, T> {
    const SCHEMA: SchemaSpec = <HashMap<String, T>>::SCHEMA;
}

macro_rules! transparent_schema {
    ($($wrapper:ident),*) => {$(
        /// The inner type's schema, read lazily (`Box<Self>` is how types recurse).
        impl<T: ToolSchema + ?Sized> ToolSchema for $wrapper<T> {
            const SCHEMA: SchemaSpec = SchemaSpec::lazy(|| &T::SCHEMA);
        }
    )*};
}
transparent_schema!(Box, Arc, Rc);

macro_rules! tuple_schema {
    ($($name:ident)+) => {
        /// A fixed-length array: `prefixItems` with one schema per element, `items: false`.
        impl<$($name: ToolSchema),+> ToolSchema for ($($name,)+) {
            const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Tuple(&[$($name::SCHEMA),+]));
        }
    };
}
tuple_schema!(A);
tuple_schema!(A B);
tuple_schema!(A B C);
tuple_schema!(A B C D);
tuple_schema!(A B C D E);
tuple_schema!(A B C D E F);
tuple_schema!(A B C D E F G);
tuple_schema!(A B C D E F G H);
tuple_schema!(A B C D E F G H I);
tuple_schema!(A B C D E F G H I J);
tuple_schema!(A B C D E F G H I J K);
tuple_schema!(A B C D E F G H I J K L);

macro_rules! nonzero_unsigned {
    ($($ty:ty),*) => {$(
        /// `minimum: 1`: serde refuses 0.
        impl ToolSchema for NonZero<$ty> {
            const SCHEMA: SchemaSpec = match <$ty as ToolSchema>::SCHEMA.kind {
                SpecKind::Integer(bounds) => SchemaSpec::new(SpecKind::Integer(NumberBounds {
                    minimum: Some(Literal::UInt(1)),
                    maximum: bounds.maximum,
                })),
                _ => <$ty as ToolSchema>::SCHEMA,
            };
        }
    )*};
}
nonzero_unsigned!(u8, u16, u32, u64, u128, usize);

macro_rules! nonzero_signed {
    ($($ty:ty => $min:expr, $max:expr;)*) => {$(
        /// The negative or the positive integers of the type: serde refuses 0.
        impl ToolSchema for NonZero<$ty> {
            const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::OneOf(&[
                SchemaSpec::new(SpecKind::Integer(NumberBounds {
                    minimum: Some($min),
                    maximum: Some(Literal::Int(-1)),
                })),
                SchemaSpec::new(SpecKind::Integer(NumberBounds {
                    minimum: Some(Literal::Int(1)),
                    maximum: Some($max),
                })),
            ]));
        }
    )*};
}
nonzero_signed! {
    i8 => Literal::Int(i8::MIN as i64), Literal::Int(i8::MAX as i64);
    i16 => Literal::Int(i16::MIN as i64), Literal::Int(i16::MAX as i64);
    i32 => Literal::Int(i32::MIN as i64), Literal::Int(i32::MAX as i64);
    i64 => Literal::Int(MIN_SAFE), Literal::UInt(MAX_SAFE);
    i128 => Literal::Int(MIN_SAFE), Literal::UInt(MAX_SAFE);
    isize => Literal::Int(ISIZE_MIN), Literal::UInt(ISIZE_MAX);
}

/// serde's form of a `Duration`: `{"secs": u64, "nanos": u32}`, both required, nothing else.
impl ToolSchema for Duration {
    const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Object {
        properties: &[
            Property::new("secs", &u64::SCHEMA).described("Whole seconds."),
            Property::new("nanos", &u32::SCHEMA).described(
                "Nanoseconds past the seconds (1,000,000,000 or more carry into `secs`).",
            ),
        ],
        flatten: &[],
        additional: Additional::Deny,
    });
}

/// A string with a `format`.
pub(super) const fn formatted(format: &'static str) -> SchemaSpec {
    STRING.with_checks(Checks {
        format: Some(format),
        ..Checks::NONE
    })
}

impl ToolSchema for Ipv4Addr {
    const SCHEMA: SchemaSpec = formatted("ipv4");
}

impl ToolSchema for Ipv6Addr {
    const SCHEMA: SchemaSpec = formatted("ipv6");
}

impl ToolSchema for IpAddr {
    const SCHEMA: SchemaSpec =
        SchemaSpec::new(SpecKind::OneOf(&[Ipv4Addr::SCHEMA, Ipv6Addr::SCHEMA]));
}

impl<T: ToolSchema + ?Sized> ToolSchema for &T {
    const SCHEMA: SchemaSpec = T::SCHEMA;
}
