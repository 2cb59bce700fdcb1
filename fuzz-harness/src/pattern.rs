//! `pattern`: ECMA-262 regular expressions inside a schema, against the engine itself.
//!
//! The subset compiles a `pattern` with regress (the `u` flag) after a screen that refuses the
//! catastrophic shapes, and decides the common shapes in one pass without the engine
//! (`dsh_tools::subset`'s `linear` matcher). This target checks both against regress as the
//! oracle: whatever the subset says about a string, regress must say too.

use dsh_tools::subset::{CompiledSchema, Vocabulary, is_supported, validate_value};
use serde_json::{Value, json};

/// Longest subject string tried (a screened pattern runs in polynomial time, not linear: the
/// cap keeps one input's worst case within libFuzzer's timeout).
const MAX_SUBJECT_CHARS: usize = 256;

/// The `pattern` target. Input: a pattern (UTF-8), then optionally a NUL byte and a subject
/// string (UTF-8; without one, a few fixed subjects are tried).
///
/// Properties: the assertion (`is_supported`) agrees with compilation; a refusal names
/// `pattern`; a pattern regress cannot compile is refused; for an accepted pattern, the
/// compiled schema, the raw-schema validation and regress's own `find` agree on every subject
/// (so the one-pass matcher answers exactly as the engine does), and a violation names the
/// path and quotes the pattern.
pub fn pattern(data: &[u8]) {
    let (pattern_bytes, subject_bytes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let Ok(source) = std::str::from_utf8(pattern_bytes) else {
        return;
    };
    let subjects: Vec<String> = match subject_bytes.map(std::str::from_utf8) {
        Some(Ok(subject)) if subject.chars().count() <= MAX_SUBJECT_CHARS => {
            vec![subject.to_owned()]
        }
        Some(_) => return,
        None => ["", "a", "abc", "A1_b", "owner/name", "é😀\n"]
            .map(str::to_owned)
            .to_vec(),
    };
    let schema = json!({"type": "string", "pattern": source});
    let engine = regress::Regex::with_flags(source, "u").ok();
    let supported = is_supported(&schema, Vocabulary::Parameters);
    let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters);
    assert_eq!(
        supported,
        compiled.is_ok(),
        "assertion and compilation disagree on /{source}/u"
    );
    let compiled = match compiled {
        Ok(compiled) => compiled,
        Err(refusal) => {
            assert!(
                refusal.violations.iter().any(|v| v.contains("pattern")),
                "a refusal of /{source}/u does not name the pattern: {:?}",
                refusal.violations
            );
            return;
        }
    };
    let Some(engine) = engine else {
        panic!("/{source}/u was accepted, but regress does not compile it");
    };
    for subject in &subjects {
        let value = Value::String(subject.clone());
        let expected = engine.find(subject).is_some();
        let messages = compiled.validate(&value, "s");
        assert_eq!(
            compiled.is_valid(&value),
            expected,
            "/{source}/u on {subject:?}: the subset and regress disagree"
        );
        assert_eq!(messages.is_empty(), expected, "is_valid vs validate");
        assert_eq!(
            validate_value(&schema, &value, "s"),
            messages,
            "raw vs compiled on /{source}/u and {subject:?}"
        );
        if !expected {
            assert!(
                messages
                    .iter()
                    .any(|m| m.starts_with("\"s\" must match the pattern ")),
                "the violation names neither the path nor the pattern: {messages:?}"
            );
        }
    }
}
