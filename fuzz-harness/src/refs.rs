//! Schemas built around `$ref` and `$defs`: the reference resolution shared by the Code Mode SDK
//! and the provider dialects (cycles, refs to refs, dangling and foreign refs, JSON-pointer
//! escapes).

use dsh_tools::subset::{CompiledSchema, Vocabulary, unsupported_violations};
use dsh_tools_runtime::code::json_schema_to_ts;
use dsh_tools_runtime::code::strip::{SourceLimits, strip_program};
use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_schema};
use serde_json::{Map, Value, json};

use crate::on_sandbox_stack;

/// The schemas of one input: a JSON object is a `$defs` map (its first key is referenced from a
/// property, from `items` and from the root); any other JSON value is a schema of its own.
fn schemas(input: Value) -> Vec<Value> {
    let Value::Object(defs) = input else {
        return vec![input];
    };
    let first = defs.keys().next().cloned().unwrap_or_default();
    let pointer = format!("#/$defs/{}", first.replace('~', "~0").replace('/', "~1"));
    let defs = Value::Object(defs);
    let mut whole = Map::new();
    whole.insert("$defs".to_owned(), defs.clone());
    vec![
        json!({
            "type": "object",
            "properties": {"v": {"$ref": pointer}, "list": {"type": "array", "items": {"$ref": pointer}}},
            "required": ["v"],
            "$defs": defs
        }),
        json!({"$ref": pointer, "$defs": defs}),
        json!({"type": "object", "properties": {"v": {"$ref": "#"}}, "definitions": defs}),
        Value::Object(whole),
    ]
}

/// The `$ref` target. Input: a JSON value: an object is a `$defs` map (its first key is
/// referenced from a property, from `items`, from the root and through `definitions`), anything
/// else a schema of its own.
///
/// Properties: every dialect renders or refuses without panicking and Gemini's rendering keeps
/// no `$ref`; the TypeScript of each schema parses; assertion and compilation agree.
pub fn ref_schema(data: &[u8]) {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for schema in schemas(input) {
        on_sandbox_stack(|| check(&schema));
    }
}

fn check(schema: &Value) {
    for dialect in [
        Dialect::Mcp,
        Dialect::OpenAiStrict,
        Dialect::Gemini,
        Dialect::Anthropic,
    ] {
        let Ok(rendered) = render_schema(schema, dialect, &DialectOptions::default()) else {
            continue;
        };
        if dialect == Dialect::Gemini {
            assert!(
                !has_key(&rendered.schema, "$ref"),
                "Gemini kept a $ref: {} from {schema}",
                rendered.schema
            );
        }
    }
    let ts = json_schema_to_ts(schema, 0);
    let program = format!("let value: {ts} = null as any;\nreturn value;");
    if let Err(error) = strip_program(&program, &SourceLimits::default())
        && !error.is_source_limit()
    {
        panic!(
            "json_schema_to_ts printed a type swc does not parse ({error}):\n{ts}\nfor {schema}"
        );
    }
    let violations = unsupported_violations(schema, Vocabulary::Reference);
    let compiled = CompiledSchema::compile(schema, Vocabulary::Reference);
    assert_eq!(
        compiled.as_ref().err().map(|e| e.violations.clone()),
        (!violations.is_empty()).then_some(violations),
        "assertion and compilation disagree on {schema}"
    );
}

/// Whether `key` is a keyword of some schema node in `value` (iterative; the keys of a
/// `properties` map are property names, not keywords).
fn has_key(value: &Value, key: &str) -> bool {
    let mut stack = vec![(value, false)];
    while let Some((current, names)) = stack.pop() {
        match current {
            Value::Object(map) => {
                if !names && map.contains_key(key) {
                    return true;
                }
                stack.extend(map.iter().map(|(k, v)| (v, !names && k == "properties")));
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, false))),
            _ => {}
        }
    }
    false
}
