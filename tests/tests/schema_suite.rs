//! The official JSON-Schema-Test-Suite (draft 2020-12) against the subset validator.
//!
//! Files: `tests/fixtures/json-schema-test-suite/draft2020-12/` (see PROVENANCE.md there).
//!
//! For every group (one schema, several tests):
//! 1. A group whose schema, recursively, uses a keyword outside the `Parameters` vocabulary or a
//!    boolean sub-schema is **skipped by name** with the keywords that exclude it.
//! 2. Otherwise the schema (without its root `$schema`) must pass `assert_supported_in(…,
//!    Parameters)`; then every test must give the expected verdict through **all** entry points:
//!    `validate_value(…).is_empty()`, `CompiledSchema::is_valid` and `CompiledSchema::validate`.
//! 3. A schema the subset rejects on structure (e.g. `properties` without `type`, `required`
//!    naming undeclared properties) is a **direct skip**, printed with the violation text. It is then
//!    tested through a *typed translation*: the JSON-Schema-equivalent schema in our subset
//!    (a type-less node becomes a `oneOf` over the six disjoint JSON types, each carrying the
//!    keywords that apply to it; `enum`/`const` keep only the type-matching literals; names that
//!    `required` lists but `properties` lacks are declared as `{}`). Only groups whose translation
//!    exists are counted there; the rest stay skipped.
//! 4. The six derived `additionalProperties: false` cases of RELIABILITY.md B1.3 run the same way.
//!
//! Run with `--nocapture` to see the skip list and the summary line.

use std::path::PathBuf;

use dsh_tools::json::is_integer;
use dsh_tools::subset::{CompiledSchema, Vocabulary, assert_supported_in, validate_value};
use serde_json::{Map, Value, json};

const FILES: [&str; 36] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "oneOf",
    "pattern",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "prefixItems",
    "ref",
    "defs",
    "optional/ecmascript-regex",
    "optional/non-bmp-regex",
    "optional/format/date-time",
    "optional/format/date",
    "optional/format/time",
    "optional/format/duration",
    "optional/format/email",
    "optional/format/uri",
    "optional/format/uuid",
    "optional/format/ipv4",
    "optional/format/ipv6",
    "optional/format/hostname",
];

/// Cases where documented JavaScript semantics disagree with the suite: `(file, group, test,
/// reason)`. Empty: every tested case agrees.
const EXPECTED_DIFFERENCES: &[(&str, &str, &str, &str)] = &[];

const CONSTRAINTS: [&str; 25] = [
    "type",
    "oneOf",
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
    "$ref",
    "$defs",
];
const ANNOTATIONS: [&str; 4] = ["description", "title", "default", "examples"];
const JSON_TYPES: [&str; 6] = ["object", "array", "string", "number", "boolean", "null"];

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/json-schema-test-suite/draft2020-12")
}

/// The keywords (and boolean sub-schemas) that put a schema outside the vocabulary, in order of
/// first appearance.
fn excluding_keywords(schema: &Value) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut note = |what: String| {
        if !found.contains(&what) {
            found.push(what);
        }
    };
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        let Value::Object(map) = node else {
            note(format!("boolean sub-schema `{node}`"));
            continue;
        };
        for (key, value) in map {
            if !CONSTRAINTS.contains(&key.as_str()) && !ANNOTATIONS.contains(&key.as_str()) {
                note(format!("`{key}`"));
                continue;
            }
            match key.as_str() {
                "properties" | "$defs" => {
                    stack.extend(value.as_object().into_iter().flat_map(|p| p.values()).rev())
                }
                // `items: false` after `prefixItems` is the tuple form of the vocabulary.
                "items" if value == &Value::Bool(false) && map.contains_key("prefixItems") => {}
                "items" if !value.is_array() => stack.push(value),
                "additionalProperties" if value.is_object() => stack.push(value),
                "oneOf" | "prefixItems" => {
                    stack.extend(value.as_array().into_iter().flatten().rev())
                }
                _ => {}
            }
        }
    }
    found
}

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_number().is_some_and(is_integer),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// The JSON-Schema-equivalent schema inside our subset, or why there is none.
fn typed_translation(node: &Value) -> Result<Value, String> {
    let Value::Object(map) = node else {
        return Err(format!("boolean sub-schema `{node}`"));
    };
    let mut annotations = Map::new();
    for key in ANNOTATIONS {
        if let Some(value) = map.get(key) {
            annotations.insert(key.into(), value.clone());
        }
    }
    if map.contains_key("oneOf") {
        return Err("`oneOf` in the source schema".into());
    }
    if map.contains_key("$ref") || map.contains_key("$defs") {
        return Err("`$ref` pointers would not survive a rewrite".into());
    }
    let typed_keys = map
        .keys()
        .filter(|k| !ANNOTATIONS.contains(&k.as_str()) && *k != "type")
        .count();
    if !map.contains_key("type") && typed_keys == 0 {
        return Ok(Value::Object(annotations));
    }
    let mut types: Vec<&str> = match map.get("type") {
        None => JSON_TYPES.to_vec(),
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        Some(other) => return Err(format!("type {other}")),
    };
    if types.contains(&"number") {
        types.retain(|t| *t != "integer");
    }
    let literals: Option<(&str, Vec<&Value>)> = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(entries)), None) => Some(("enum", entries.iter().collect())),
        (None, Some(constant)) => Some(("const", vec![constant])),
        (None, None) => None,
        _ => return Err("`enum` and `const` together, or a non-array `enum`".into()),
    };
    let mut branches = Vec::new();
    for ty in types {
        let mut branch = Map::new();
        branch.insert("type".into(), json!(ty));
        let keys: &[&str] = match ty {
            "object" => &[
                "properties",
                "required",
                "additionalProperties",
                "minProperties",
                "maxProperties",
            ],
            "array" => &[
                "prefixItems",
                "items",
                "minItems",
                "maxItems",
                "uniqueItems",
            ],
            "string" => &["minLength", "maxLength", "pattern", "format"],
            "number" | "integer" => &[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ],
            _ => &[],
        };
        for key in keys {
            let Some(value) = map.get(*key) else { continue };
            let translated = match *key {
                "properties" => {
                    let mut properties = Map::new();
                    for (name, child) in value.as_object().ok_or("non-object properties")? {
                        properties.insert(name.clone(), typed_translation(child)?);
                    }
                    Value::Object(properties)
                }
                "items" if value.is_boolean() => value.clone(),
                "items" => typed_translation(value)?,
                "additionalProperties" if value.is_object() => typed_translation(value)?,
                "prefixItems" => Value::Array(
                    value
                        .as_array()
                        .ok_or("non-array prefixItems")?
                        .iter()
                        .map(typed_translation)
                        .collect::<Result<_, _>>()?,
                ),
                _ => value.clone(),
            };
            branch.insert((*key).into(), translated);
        }
        if ty == "object"
            && let Some(Value::Array(names)) = map.get("required")
        {
            let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
            let properties = branch.entry("properties").or_insert_with(|| json!({}));
            for name in names.iter().filter_map(Value::as_str) {
                if let Some(properties) = properties.as_object_mut()
                    && !properties.contains_key(name)
                {
                    if closed {
                        return Err(format!(
                            "`required` names undeclared \"{name}\" under additionalProperties: false"
                        ));
                    }
                    properties.insert(name.into(), json!({}));
                }
            }
        }
        if let Some((keyword, values)) = &literals {
            let matching: Vec<Value> = values
                .iter()
                .filter(|v| type_matches(ty, v))
                .map(|v| (*v).clone())
                .collect();
            if matching.is_empty() {
                continue;
            }
            if ty == "object" || ty == "array" {
                return Err(format!("`{keyword}` with {ty} literals"));
            }
            let literal = if *keyword == "const" {
                matching[0].clone()
            } else {
                Value::Array(matching)
            };
            branch.insert((*keyword).into(), literal);
        }
        branches.push(Value::Object(branch));
    }
    let mut out = match branches.len() {
        0 => return Err("no type can satisfy the schema".into()),
        1 => branches.remove(0),
        _ => json!({ "oneOf": branches }),
    };
    if let Value::Object(out) = &mut out {
        out.extend(annotations);
    }
    Ok(out)
}

#[derive(Default)]
struct Report {
    direct_cases: usize,
    direct_groups: usize,
    translated_cases: usize,
    translated_groups: usize,
    derived_cases: usize,
    skipped: Vec<String>,
    translated: Vec<String>,
    failures: Vec<String>,
    differences_seen: usize,
    /// Per file (keyword): cases run as written, through the typed translation, and skipped.
    per_keyword: Vec<(String, [usize; 3])>,
}

impl Report {
    /// Runs every test of a group against `schema` through all entry points; returns the count.
    fn run_tests(&mut self, file: &str, group: &str, schema: &Value, tests: &[Value]) -> usize {
        let compiled = match CompiledSchema::compile(schema, Vocabulary::Parameters) {
            Ok(compiled) => compiled,
            Err(error) => {
                self.failures
                    .push(format!("{file} / {group}: schema rejected: {error}"));
                return 0;
            }
        };
        let mut passed = 0;
        for test in tests {
            let name = test["description"].as_str().unwrap_or("?");
            let data = &test["data"];
            let expected = test["valid"].as_bool().expect("valid flag");
            let by_value = validate_value(schema, data, "value").is_empty();
            let by_compiled = compiled.validate(data, "value").is_empty();
            let fast = compiled.is_valid(data);
            let agrees = by_value == expected && by_compiled == expected && fast == expected;
            let excused = EXPECTED_DIFFERENCES
                .iter()
                .any(|(f, g, t, _)| *f == file && *g == group && *t == name);
            if excused {
                self.differences_seen += 1;
            } else if agrees {
                passed += 1;
            } else {
                self.failures.push(format!(
                    "{file} / {group} / {name}: expected valid={expected}, validate_value={by_value}, \
                     validate={by_compiled}, is_valid={fast} (data {data}, schema {schema})"
                ));
            }
        }
        passed
    }

    fn count(&mut self, file: &str, slot: usize, cases: usize) {
        match self.per_keyword.iter_mut().find(|(f, _)| f == file) {
            Some((_, counts)) => counts[slot] += cases,
            None => {
                let mut counts = [0; 3];
                counts[slot] = cases;
                self.per_keyword.push((file.to_owned(), counts));
            }
        }
    }

    fn run_group(&mut self, file: &str, group: &Value, derived: bool) {
        let name = group["description"].as_str().expect("group description");
        let mut schema = group["schema"].clone();
        if let Some(map) = schema.as_object_mut() {
            map.remove("$schema");
        }
        let tests = group["tests"].as_array().expect("tests");
        let excluded = excluding_keywords(&schema);
        if !excluded.is_empty() {
            self.skipped.push(format!(
                "{file} / {name}: outside the vocabulary ({})",
                excluded.join(", ")
            ));
            self.count(file, 2, tests.len());
            return;
        }
        match assert_supported_in(&schema, Vocabulary::Parameters) {
            Ok(()) => {
                self.count(file, 0, tests.len());
                let passed = self.run_tests(file, name, &schema, tests);
                if derived {
                    self.derived_cases += passed;
                } else {
                    self.direct_cases += passed;
                    self.direct_groups += 1;
                }
            }
            Err(rejection) => {
                let reason = rejection.violations.join("; ");
                let translated = match typed_translation(&schema) {
                    Ok(translated) => translated,
                    Err(why) => {
                        self.skipped.push(format!("{file} / {name}: rejected by the subset ({reason}); no typed translation ({why})"));
                        self.count(file, 2, tests.len());
                        return;
                    }
                };
                self.count(file, 1, tests.len());
                self.translated.push(format!(
                    "{file} / {name}: rejected by the subset ({reason}); tested as {translated}"
                ));
                let passed = self.run_tests(file, name, &translated, tests);
                if derived {
                    self.derived_cases += passed;
                } else {
                    self.translated_cases += passed;
                    self.translated_groups += 1;
                }
            }
        }
    }
}

/// RELIABILITY.md B1.3: the first `additionalProperties` group without `patternProperties`; the
/// `vroom` case flips to invalid.
fn derived_additional_properties_false(file: &Value) -> Value {
    let mut group = file[0].clone();
    group["description"] = json!("derived: additionalProperties false without patternProperties");
    if let Some(schema) = group["schema"].as_object_mut() {
        assert!(
            schema.remove("patternProperties").is_some(),
            "the upstream group changed shape"
        );
    }
    for test in group["tests"].as_array_mut().expect("tests") {
        if test["description"] == "patternProperties are not additional properties" {
            test["description"] = json!("an undeclared property is invalid");
            test["valid"] = json!(false);
        }
    }
    group
}

#[test]
fn json_schema_test_suite_draft2020_12() {
    let mut report = Report::default();
    let mut groups = 0;
    for file in FILES {
        let path = suite_dir().join(format!("{file}.json"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cases: Value = serde_json::from_str(&text).expect("suite file is JSON");
        for group in cases.as_array().expect("array of groups") {
            groups += 1;
            report.run_group(file, group, false);
        }
        if file == "additionalProperties" {
            report.run_group(file, &derived_additional_properties_false(&cases), true);
        }
    }
    for line in &report.skipped {
        println!("SKIP {line}");
    }
    for line in &report.translated {
        println!("TYPED {line}");
    }
    let passed = report.direct_cases + report.translated_cases + report.derived_cases;
    let figure = format!(
        "json-schema-test-suite: {passed} cases passed, {} groups skipped (of {groups}; direct: {} cases in {} groups; \
         typed translation: {} cases in {} groups; derived additionalProperties:false: {} cases; expected differences: {})",
        report.skipped.len(),
        report.direct_cases,
        report.direct_groups,
        report.translated_cases,
        report.translated_groups,
        report.derived_cases,
        report.differences_seen,
    );
    let mut lines = vec![figure];
    for (file, [direct, translated, skipped]) in &report.per_keyword {
        lines.push(format!(
            "json-schema-test-suite {file}: {direct} as written, {translated} through a typed translation, {skipped} skipped"
        ));
    }
    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "json-schema-test-suite",
        &lines.join("\n"),
    );
    assert!(
        report.failures.is_empty(),
        "{} failing cases:\n{}",
        report.failures.len(),
        report.failures.join("\n")
    );
    assert_eq!(
        report.differences_seen,
        EXPECTED_DIFFERENCES.len(),
        "stale expected-difference entries"
    );
    assert_eq!(
        report.derived_cases, 6,
        "the six derived additionalProperties:false cases"
    );
    assert!(report.direct_groups + report.translated_groups + report.skipped.len() == groups);
    assert!(passed >= 200, "too few cases ran: {passed}");
    // The assertion keywords run on the suite's own schemas, as written (no test-side rewrite).
    for file in FILES.iter().skip(7).filter(|f| **f != "defs") {
        let counts = report.per_keyword.iter().find(|(f, _)| f.as_str() == *file);
        assert!(
            counts.is_some_and(|(_, [direct, translated, _])| *direct > 0
                // `ref`'s groups put `$ref` beside type-less structural keywords.
                && (*translated == 0 || *file == "ref")),
            "{file}: cases must run as written ({counts:?})"
        );
    }
}

#[test]
fn typed_translation_is_json_schema_equivalent_on_a_sample() {
    let translated =
        typed_translation(&json!({"minimum": 1.1, "description": "d"})).expect("translatable");
    assert_eq!(
        translated,
        json!({"oneOf": [
            {"type": "object"}, {"type": "array"}, {"type": "string"},
            {"type": "number", "minimum": 1.1}, {"type": "boolean"}, {"type": "null"}
        ], "description": "d"})
    );
    assert_eq!(
        typed_translation(&json!({"enum": [6, null]})).expect("ok"),
        json!({"oneOf": [
            {"type": "number", "enum": [6]}, {"type": "null", "enum": [null]}
        ]})
    );
    assert!(typed_translation(&json!({"const": {"a": 1}})).is_err());
    assert_eq!(typed_translation(&json!({})).expect("ok"), json!({}));
}
