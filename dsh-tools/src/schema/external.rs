//! [`ToolSchema`](super::ToolSchema) for the types of other crates, each behind the feature of
//! the crate's name.
//!
//! Each schema states the JSON form the crate's own serde implementation writes and reads, and
//! never more than it reads: a value that validates deserialises. Where the form is a string
//! that no standard `format` names exactly, a `pattern` states it (dates are checked against
//! the calendar, leap years included).

/// A calendar date `YYYY-MM-DD` (years 0000 to 9999, the proleptic Gregorian calendar: a
/// 29 February only in leap years), as the alternatives of a pattern.
#[cfg(any(feature = "chrono", feature = "time"))]
macro_rules! calendar_date {
    () => {
        concat!(
            "(?:\\d{4}-(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])",
            "|\\d{4}-(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)",
            "|\\d{4}-02-(?:0[1-9]|1\\d|2[0-8])",
            "|(?:\\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
        )
    };
}

/// A string matching `pattern`, with one example of the form.
#[cfg(any(feature = "chrono", feature = "time", feature = "rust_decimal"))]
const fn patterned(
    pattern: &'static str,
    example: fn() -> serde_json::Value,
) -> super::spec::SchemaSpec {
    super::impls::STRING
        .with_checks(super::spec::Checks {
            pattern: Some(pattern),
            ..super::spec::Checks::NONE
        })
        .with_examples(example)
}

#[cfg(feature = "uuid")]
impl super::impls::ToolSchema for uuid::Uuid {
    /// The hyphenated form (uuid's serde also reads the simple, braced and URN forms: narrower).
    const SCHEMA: super::spec::SchemaSpec = super::impls::formatted("uuid");
}

#[cfg(feature = "url")]
impl super::impls::ToolSchema for url::Url {
    const SCHEMA: super::spec::SchemaSpec = super::impls::formatted("uri");
}

#[cfg(feature = "indexmap")]
mod indexmap_impls {
    use super::super::impls::{ToolSchema, set_of};
    use super::super::spec::SchemaSpec;

    impl<T: ToolSchema, S> ToolSchema for indexmap::IndexMap<String, T, S> {
        const SCHEMA: SchemaSpec = <std::collections::HashMap<String, T>>::SCHEMA;
    }

    impl<T: ToolSchema, S> ToolSchema for indexmap::IndexSet<T, S> {
        const SCHEMA: SchemaSpec = set_of(&SchemaSpec::lazy(|| &T::SCHEMA));
    }
}

/// chrono's serde forms: `DateTime` is RFC 3339 (`2024-05-01T12:30:00Z`), the naive types are
/// their `Debug` text (`2024-05-01`, `12:30:00.5`, `2024-05-01T12:30:00.5`).
#[cfg(feature = "chrono")]
mod chrono_impls {
    use super::super::impls::{STRING, ToolSchema, formatted};
    use super::super::spec::{Checks, SchemaSpec};
    use super::patterned;

    /// RFC 3339 `date-time` without a leap second and with an upper-case `T` (chrono refuses the
    /// lower-case one; `:60` it reads into a leap nanosecond only at the end of a minute).
    const DATE_TIME: SchemaSpec = formatted("date-time").with_checks(Checks {
        pattern: Some("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:[0-5]\\d"),
        ..Checks::NONE
    });

    impl<Tz: chrono::TimeZone> ToolSchema for chrono::DateTime<Tz> {
        const SCHEMA: SchemaSpec = DATE_TIME;
    }

    impl ToolSchema for chrono::NaiveDate {
        const SCHEMA: SchemaSpec = formatted("date");
    }

    impl ToolSchema for chrono::NaiveTime {
        /// `HH:MM:SS[.fraction]`, no offset.
        const SCHEMA: SchemaSpec = STRING.with_checks(Checks {
            pattern: Some("^([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?$"),
            ..Checks::NONE
        });
    }

    impl ToolSchema for chrono::NaiveDateTime {
        /// `YYYY-MM-DDTHH:MM:SS[.fraction]`, no offset (not RFC 3339's `date-time`, which
        /// needs one); years 0000 to 9999, no leap second.
        const SCHEMA: SchemaSpec = patterned(
            concat!(
                "^",
                calendar_date!(),
                "T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?$"
            ),
            || serde_json::json!("2024-05-01T12:30:00"),
        );
    }
}

/// `time`'s serde forms, which the `time` feature fixes to its human-readable strings (the
/// crate's `serde-human-readable` feature; Cargo unifies features, so this changes how time's
/// types serialise to JSON in the whole program, and no crate can switch it off): `Date` is `2024-05-01` (RFC 3339's `date`); the
/// others are time's own text, not RFC 3339: `OffsetDateTime` is `2024-05-01 12:30:00.0
/// +02:00:00`, `PrimitiveDateTime` and `UtcDateTime` drop the offset, `Time` is `12:30:00.0`,
/// `UtcOffset` is `+02:00:00`, `Duration` is seconds with nine decimals (`-1.500000000`),
/// `Weekday` and `Month` their English names. Years are 0000 to 9999 (time also writes signed
/// years, which the schemas refuse), seconds 00 to 59, fractions of 1 to 9 digits.
#[cfg(feature = "time")]
mod time_impls {
    use super::super::impls::{ToolSchema, formatted};
    use super::super::spec::{Literal, SchemaSpec, SpecKind};
    use super::patterned;

    /// `HH:MM:SS.fraction` (the fraction is always written, at least one digit).
    macro_rules! clock {
        () => {
            "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d\\.\\d{1,9}"
        };
    }

    /// `+HH:MM:SS`: time's offsets reach ±25:59:59.
    macro_rules! offset {
        () => {
            "[+-]([01]\\d|2[0-5]):[0-5]\\d:[0-5]\\d"
        };
    }

    impl ToolSchema for time::Date {
        const SCHEMA: SchemaSpec = formatted("date");
    }

    impl ToolSchema for time::Time {
        const SCHEMA: SchemaSpec = patterned(concat!("^", clock!(), "$"), || {
            serde_json::json!("12:30:00.0")
        });
    }

    impl ToolSchema for time::PrimitiveDateTime {
        const SCHEMA: SchemaSpec =
            patterned(concat!("^", calendar_date!(), " ", clock!(), "$"), || {
                serde_json::json!("2024-05-01 12:30:00.0")
            });
    }

    impl ToolSchema for time::UtcDateTime {
        const SCHEMA: SchemaSpec = <time::PrimitiveDateTime as ToolSchema>::SCHEMA;
    }

    impl ToolSchema for time::OffsetDateTime {
        const SCHEMA: SchemaSpec = patterned(
            concat!("^", calendar_date!(), " ", clock!(), " ", offset!(), "$"),
            || serde_json::json!("2024-05-01 12:30:00.0 +02:00:00"),
        );
    }

    impl ToolSchema for time::UtcOffset {
        const SCHEMA: SchemaSpec = patterned(concat!("^", offset!(), "$"), || {
            serde_json::json!("+02:00:00")
        });
    }

    impl ToolSchema for time::Duration {
        /// Whole seconds (at most 18 digits, inside an `i64`), a point, and 1 to 9 digits of
        /// fraction; a `-` makes the whole duration negative.
        const SCHEMA: SchemaSpec = patterned("^-?\\d{1,18}\\.\\d{1,9}$", || {
            serde_json::json!("90.500000000")
        });
    }

    impl ToolSchema for time::Weekday {
        const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Enum(&[
            Literal::Str("Monday"),
            Literal::Str("Tuesday"),
            Literal::Str("Wednesday"),
            Literal::Str("Thursday"),
            Literal::Str("Friday"),
            Literal::Str("Saturday"),
            Literal::Str("Sunday"),
        ]));
    }

    impl ToolSchema for time::Month {
        const SCHEMA: SchemaSpec = SchemaSpec::new(SpecKind::Enum(&[
            Literal::Str("January"),
            Literal::Str("February"),
            Literal::Str("March"),
            Literal::Str("April"),
            Literal::Str("May"),
            Literal::Str("June"),
            Literal::Str("July"),
            Literal::Str("August"),
            Literal::Str("September"),
            Literal::Str("October"),
            Literal::Str("November"),
            Literal::Str("December"),
        ]));
    }
}

/// rust_decimal's default serde form is a string of the decimal (`"12.50"`, `"-0.001"`): it
/// keeps every digit, where a JSON number would pass through a double. The deserialiser also
/// reads numbers and scientific notation; the schema states the string form only. At most 28
/// digits before the point (the type holds magnitudes below about 7.9 · 10^28); digits after
/// it beyond the 28 the type keeps are rounded. The features `serde-float`, `serde-str` with
/// `serde-float`, and `serde-arbitrary-precision` of rust_decimal change the form and are not
/// described by this schema.
#[cfg(feature = "rust_decimal")]
impl super::impls::ToolSchema for rust_decimal::Decimal {
    const SCHEMA: super::spec::SchemaSpec =
        patterned("^-?\\d{1,28}(\\.\\d+)?$", || serde_json::json!("12.50"));
}
