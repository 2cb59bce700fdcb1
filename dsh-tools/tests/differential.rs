//! Malformed model JSON, part 1: a differential of our subset validator against the `jsonschema`
//! crate (draft 2020-12, formats asserted) on generated schemas inside the `Parameters`
//! vocabulary and generated values, 10,000 cases per run.
//!
//! The schemas use every keyword of the vocabulary (`differential/schemas.rs`): bounds,
//! exclusive bounds, `multipleOf`, lengths, `pattern` (ECMAScript), the ten formats, item
//! counts, `uniqueItems`, tuples (`prefixItems`, closed or open), `minProperties`/
//! `maxProperties`, map values, `oneOf`, assertions without `type`, and local `$ref`s (to
//! definitions and recursive ones). Every case compares `CompiledSchema::is_valid` with
//! `jsonschema::Validator::is_valid`, and checks our own entry points agree (`validate` lists a
//! violation iff `is_valid` is false, and `validate_value` on the raw schema gives the same
//! list). Values are drawn half from the schema's own shape (`differential/values.rs`: right
//! keys, near-miss literals, bounds ±1, `1.0` for integers, 2^53 + 1, multi-byte strings,
//! format-shaped strings and their near misses, duplicated items, tuples one short or one long,
//! `__proto__`/`constructor` keys) and half at random, so most cases reach the deep keywords.
//!
//! Numbers follow JavaScript (docs/CONTRACTS.md, "Numbers"): a number is the double its text
//! parses to, so `9007199254740993` and `9007199254740992` are one number. The crate compares
//! integers exactly; so that it judges the same question, every integer of magnitude above 2^53
//! in the schema and the value is handed to it as the double JavaScript would hold
//! ([`as_javascript_doubles`]); the number of cases this touched is part of the figure.
//!
//! Where our documented semantics differ from the crate's on purpose, the keyword responsible
//! is kept out of the comparison: each difference is a named [`Exclusion`] with a predicate on
//! the case; an excluded case is compared with that keyword removed from the schema (so the
//! rest of it is still checked), and [`documented_differences_hold`] asserts each difference
//! itself (our verdict and the crate's), so an exclusion can neither hide a bug of ours nor
//! outlive the difference. The number of cases each exclusion took is part of the figure.
//! `DIFF_CASES=100000` runs more cases.

#[path = "differential/schemas.rs"]
mod schemas;
#[path = "differential/values.rs"]
mod values;

use std::cell::{Cell, RefCell};

use dsh_tools::subset::{CompiledSchema, Vocabulary, validate_value};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use serde_json::{Number, Value, json};

use schemas::schema;
use values::shaped;

const CASES: u32 = 10_000;

fn config() -> Config {
    Config {
        cases: std::env::var("DIFF_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(CASES),
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        // The schema strategy is recursive: shrinking a 10,000-case failure still terminates
        // quickly with the default limits.
        ..Config::default()
    }
}

// ----- the documented differences -----

/// Why a case, or a keyword of it, is not compared with the `jsonschema` crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exclusion {
    /// The value holds `-0`. JSON text (and so a JavaScript `JSON.parse` of model output)
    /// cannot carry negative zero; our validator requires lossless JSON everywhere and rejects
    /// it, the crate reads it as `0`. Not compared; checked instead: we reject the value.
    NegativeZero,
    /// `multipleOf` on a number of magnitude 2^53 or more: such a double is not the decimal it
    /// prints (`1e300` is not 10^300), and we decide `multipleOf` on the decimal JavaScript
    /// prints (docs/CONTRACTS.md, "Schema vocabulary"), the crate on the binary value.
    BinaryMultipleOf,
    /// `format: uri` on an RFC 3986 URI the `url` crate refuses, which our reading narrows to
    /// (docs/CONTRACTS.md): `http:` (no host), a percent escape in a host, a port past 65535.
    UriNarrowing,
    /// `format: hostname` on a fully qualified name with its trailing dot (`example.com.`, RFC
    /// 1034's absolute form), which we accept and the crate refuses.
    HostnameTrailingDot,
    /// A `pattern` with `\b` or `\B` on a string with a non-ASCII character: ECMAScript's word
    /// boundary is ASCII (`\bé` never matches `"é"`), the crate's translation keeps Rust's
    /// Unicode one.
    AsciiWordBoundary,
}

/// The strings of the `uri` narrowing that the value generator draws.
const NARROWED_URIS: &[&str] = &[
    "http:",
    "http://ex%41mple.com/",
    "https://example.com:99999/",
];

/// The exclusions that apply to a case.
fn exclusions(schema: &Value, value: &Value) -> Vec<Exclusion> {
    let mut out = Vec::new();
    if contains_negative_zero(value) {
        out.push(Exclusion::NegativeZero);
    }
    let beyond_2_53 = |v: &Value| {
        v.as_f64()
            .is_some_and(|f| f.abs() >= 9_007_199_254_740_992.0)
    };
    if schema_has(schema, |node| node.contains_key("multipleOf")) && any_leaf(value, beyond_2_53) {
        out.push(Exclusion::BinaryMultipleOf);
    }
    let string_is = |f: &dyn Fn(&str) -> bool| any_leaf(value, |v| v.as_str().is_some_and(f));
    if schema_has(schema, |node| node.get("format") == Some(&json!("uri")))
        && string_is(&|s| NARROWED_URIS.contains(&s))
    {
        out.push(Exclusion::UriNarrowing);
    }
    if schema_has(schema, |node| {
        node.get("format") == Some(&json!("hostname"))
    }) && string_is(&|s| s.len() > 1 && s.ends_with('.'))
    {
        out.push(Exclusion::HostnameTrailingDot);
    }
    if schema_has(schema, has_word_boundary) && string_is(&|s| !s.is_ascii()) {
        out.push(Exclusion::AsciiWordBoundary);
    }
    out
}

fn has_word_boundary(node: &serde_json::Map<String, Value>) -> bool {
    node.get("pattern")
        .and_then(Value::as_str)
        .is_some_and(|p| p.contains("\\b") || p.contains("\\B"))
}

impl Exclusion {
    /// Removes the keyword this difference is about from every schema node.
    fn strip(self, schema: &mut Value) {
        for_each_node(schema, &mut |node| match self {
            Exclusion::NegativeZero => {}
            Exclusion::BinaryMultipleOf => {
                node.remove("multipleOf");
            }
            Exclusion::UriNarrowing | Exclusion::HostnameTrailingDot => {
                let format = if self == Exclusion::UriNarrowing {
                    "uri"
                } else {
                    "hostname"
                };
                if node.get("format") == Some(&json!(format)) {
                    node.remove("format");
                }
            }
            Exclusion::AsciiWordBoundary => {
                if has_word_boundary(node) {
                    node.remove("pattern");
                }
            }
        });
    }
}

/// The schema positions below a node (not annotations or literals).
fn children(node: &mut serde_json::Map<String, Value>) -> Vec<&mut Value> {
    let mut out = Vec::new();
    for (key, value) in node.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" => {
                out.extend(
                    value
                        .as_object_mut()
                        .into_iter()
                        .flat_map(|m| m.values_mut()),
                );
            }
            "oneOf" | "prefixItems" => {
                out.extend(value.as_array_mut().into_iter().flatten());
            }
            "items" | "additionalProperties" if value.is_object() => out.push(value),
            _ => {}
        }
    }
    out
}

fn for_each_node(schema: &mut Value, f: &mut impl FnMut(&mut serde_json::Map<String, Value>)) {
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        if let Value::Object(map) = node {
            f(map);
            stack.extend(children(map));
        }
    }
}

/// Whether some schema node satisfies `f`.
fn schema_has(schema: &Value, f: impl Fn(&serde_json::Map<String, Value>) -> bool) -> bool {
    let mut copy = schema.clone();
    let mut found = false;
    for_each_node(&mut copy, &mut |node| found |= f(node));
    found
}

/// Whether some scalar inside `value` satisfies `f`.
fn any_leaf(value: &Value, f: impl Fn(&Value) -> bool) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            leaf if f(leaf) => return true,
            _ => {}
        }
    }
    false
}

fn contains_negative_zero(value: &Value) -> bool {
    any_leaf(value, |v| {
        v.as_number().is_some_and(|n| {
            n.is_f64() && n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative())
        })
    })
}

/// The value with every integer of magnitude above 2^53 replaced by the double JavaScript's
/// `JSON.parse` gives for it (smaller integers are exact doubles already and stay integers, so
/// the crate's integer paths are still exercised). Returns whether anything changed.
fn as_javascript_doubles(value: &mut Value) -> bool {
    const TWO_POW_53: u64 = 1 << 53;
    let mut changed = false;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                let beyond = n.as_u64().is_some_and(|u| u > TWO_POW_53)
                    || n.as_i64().is_some_and(|i| i.unsigned_abs() > TWO_POW_53);
                if beyond {
                    let double = dsh_tools::json::number_to_f64(n);
                    *n = Number::from_f64(double).expect("integers are finite doubles");
                    changed = true;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    changed
}

fn case() -> impl Strategy<Value = (Value, Value)> {
    schema().prop_flat_map(|schema| {
        let values = shaped(&schema, &schema, 3);
        (Just(schema), values)
    })
}

// ----- the property -----

/// The crate's verdict, with integers beyond 2^53 handed to it as JavaScript's doubles;
/// returns whether that rounding touched the case.
fn theirs(schema: &Value, value: &Value) -> Result<(bool, bool), TestCaseError> {
    let (mut js_schema, mut js_value) = (schema.clone(), value.clone());
    let rounded = as_javascript_doubles(&mut js_schema) | as_javascript_doubles(&mut js_value);
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&js_schema)
        .map_err(|e| TestCaseError::fail(format!("jsonschema rejects {js_schema}: {e}")))?;
    Ok((validator.is_valid(&js_value), rounded))
}

/// The keywords whose coverage the figure reports (cases whose schema holds each).
const COUNTED: &[&str] = &[
    "pattern",
    "format",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "prefixItems",
    "$ref",
    "minProperties",
    "maxProperties",
];

#[test]
fn agrees_with_the_jsonschema_crate_on_10000_generated_cases() {
    let compared = Cell::new(0u32);
    let rounded = Cell::new(0u32);
    let (accepted, rejected) = (Cell::new(0u32), Cell::new(0u32));
    let excluded: RefCell<Vec<(Exclusion, u32)>> = RefCell::new(Vec::new());
    let coverage = RefCell::new(vec![0u32; COUNTED.len()]);
    let mut runner = TestRunner::new(config());
    let outcome = runner.run(&case(), |(schema, value)| {
        let ours = CompiledSchema::compile(&schema, Vocabulary::Parameters).map_err(|e| {
            TestCaseError::fail(format!(
                "generated schema {schema} is outside the vocabulary: {e}"
            ))
        })?;
        let valid = ours.is_valid(&value);
        let messages = ours.validate(&value, "");
        prop_assert_eq!(
            messages.is_empty(),
            valid,
            "is_valid vs validate for {} / {}: {:?}",
            schema,
            value,
            messages
        );
        prop_assert_eq!(&validate_value(&schema, &value, ""), &messages);
        if valid {
            accepted.set(accepted.get() + 1);
        } else {
            rejected.set(rejected.get() + 1);
        }
        for (slot, keyword) in coverage.borrow_mut().iter_mut().zip(COUNTED) {
            *slot += u32::from(schema_has(&schema, |node| node.contains_key(*keyword)));
        }
        let applying = exclusions(&schema, &value);
        for exclusion in &applying {
            let mut counts = excluded.borrow_mut();
            match counts.iter_mut().find(|(e, _)| e == exclusion) {
                Some((_, n)) => *n += 1,
                None => counts.push((*exclusion, 1)),
            }
        }
        if applying.contains(&Exclusion::NegativeZero) {
            prop_assert!(!valid, "-0 must never validate: {} / {}", schema, value);
            return Ok(());
        }
        // The keywords of the documented differences are removed; the rest is compared.
        let (schema, valid, messages) = if applying.is_empty() {
            (schema, valid, messages)
        } else {
            let mut stripped = schema.clone();
            for exclusion in &applying {
                exclusion.strip(&mut stripped);
            }
            let ours = CompiledSchema::compile(&stripped, Vocabulary::Parameters).map_err(|e| {
                TestCaseError::fail(format!("stripped schema {stripped} is outside: {e}"))
            })?;
            let valid = ours.is_valid(&value);
            let messages = ours.validate(&value, "");
            (stripped, valid, messages)
        };
        compared.set(compared.get() + 1);
        let (theirs, touched) = theirs(&schema, &value)?;
        rounded.set(rounded.get() + u32::from(touched));
        prop_assert_eq!(
            valid,
            theirs,
            "disagreement on schema {} value {} (ours: {:?})",
            schema,
            value,
            messages
        );
        Ok(())
    });
    let disagreements = u32::from(outcome.is_err());
    let excluded: Vec<String> = excluded
        .borrow()
        .iter()
        .map(|(e, n)| format!("{e:?} {n}"))
        .collect();
    let coverage: Vec<String> = COUNTED
        .iter()
        .zip(coverage.borrow().iter())
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "differential-jsonschema",
        &format!(
            "differential vs jsonschema 0.61: {} cases, {disagreements} disagreements, {} compared \
             ({} accepted, {} rejected by us; {} with integers beyond 2^53 judged as JavaScript doubles); \
             documented differences (negative zero not compared, the others compared without their keyword): {}; \
             cases per keyword: {}",
            accepted.get() + rejected.get(),
            compared.get(),
            accepted.get(),
            rejected.get(),
            rounded.get(),
            excluded.join(", "),
            coverage.join(", "),
        ),
    );
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    assert!(
        accepted.get() > CASES / 10 && rejected.get() > CASES / 10,
        "the generator must reach both verdicts often: {} accepted, {} rejected",
        accepted.get(),
        rejected.get()
    );
}

/// Each documented difference, on its smallest case: our verdict and the crate's. When the
/// crate changes its mind, this fails and the exclusion goes.
#[test]
fn documented_differences_hold() {
    let cases = [
        (
            Exclusion::BinaryMultipleOf,
            json!({"type": "number", "multipleOf": 3}),
            json!(1e300),
            false,
        ),
        (
            Exclusion::UriNarrowing,
            json!({"type": "string", "format": "uri"}),
            json!("http:"),
            false,
        ),
        (
            Exclusion::UriNarrowing,
            json!({"type": "string", "format": "uri"}),
            json!("http://ex%41mple.com/"),
            false,
        ),
        (
            Exclusion::UriNarrowing,
            json!({"type": "string", "format": "uri"}),
            json!("https://example.com:99999/"),
            false,
        ),
        (
            Exclusion::HostnameTrailingDot,
            json!({"type": "string", "format": "hostname"}),
            json!("example.com."),
            true,
        ),
        (
            Exclusion::AsciiWordBoundary,
            json!({"type": "string", "pattern": "\\bé"}),
            json!("é"),
            false,
        ),
    ];
    for (exclusion, schema, value, ours) in cases {
        assert_eq!(
            exclusions(&schema, &value),
            vec![exclusion],
            "{schema} / {value}"
        );
        let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).expect("supported");
        assert_eq!(
            compiled.is_valid(&value),
            ours,
            "ours on {schema} / {value}"
        );
        let (theirs, _) = theirs(&schema, &value).expect("the crate compiles it");
        assert_eq!(
            theirs, !ours,
            "the crate on {schema} / {value}: the difference is gone"
        );
        let mut stripped = schema.clone();
        exclusion.strip(&mut stripped);
        assert_eq!(
            stripped,
            json!({"type": schema["type"]}),
            "{exclusion:?} strips its keyword"
        );
    }
    // Where the readings agree although they look different: a non-dyadic multipleOf on a
    // small decimal (the crate also decides 0.3 is a multiple of 0.1).
    let tenth = json!({"type": "number", "multipleOf": 0.1});
    assert!(exclusions(&tenth, &json!(0.3)).is_empty());
    let compiled = CompiledSchema::compile(&tenth, Vocabulary::Parameters).expect("supported");
    assert!(compiled.is_valid(&json!(0.3)));
    assert_eq!(
        theirs(&tenth, &json!(0.3)).expect("compiles"),
        (true, false)
    );
}
