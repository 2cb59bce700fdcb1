//! Tool definitions built from closures and raw JSON schemas, with the definition-time checks of
//! `#[tool]`, and the execution-side result shape.

use std::sync::Arc;

use dsh_tools::content::ToolResult;
use dsh_tools::exec::{ToolExecution, ToolExecutionResult, ToolRunContext};
use dsh_tools::present::ToolCallView;
use dsh_tools::{ContentBlock, DefinitionError, ToolDefinition, ToolError};
use serde_json::{Value, json};

fn echo() -> dsh_tools::ToolBuilder {
    ToolDefinition::builder("echo")
        .description("Echo the text back.")
        .parameters_json(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 5}},
            "required": ["text"]
        }))
        .output_json(json!({"type": "string"}))
        .execute(|args, _ctx| async move { Ok(args["text"].clone()) })
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn schema_projection_has_exactly_three_keys() {
    let tool = echo().timeout_ms(50).build().unwrap();
    let wire = serde_json::to_value(tool.schema()).unwrap();
    assert_eq!(
        wire.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name", "description", "parameters"]
    );
    assert_eq!(tool.timeout_ms(), Some(50));
}

#[test]
fn execute_validates_arguments_before_the_body_runs() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let tool = echo()
        .execute(move |args, _ctx| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move { Ok(args["text"].clone()) }
        })
        .build()
        .unwrap();
    let bad = block_on(tool.execute(
        Arc::new(json!({"text": "too long"})),
        ToolRunContext::detached("c"),
    ));
    let err = bad.unwrap_err();
    assert_eq!(
        err.message(),
        "invalid arguments: \"text\" must be at most 5 characters long"
    );
    assert_eq!(err.info().unwrap().code, "INVALID_ARGS");
    assert_eq!(err.info().unwrap().name, "ToolArgsError");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    let good = block_on(tool.execute(
        Arc::new(json!({"text": "hi"})),
        ToolRunContext::detached("c"),
    ));
    assert_eq!(good.unwrap(), json!("hi"));
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn raw_parameters_are_passed_through_unvalidated() {
    let tool = ToolDefinition::builder("mcp__fs__read")
        .description("imported")
        .raw_parameters(
            json!({"type": "object", "properties": {"p": {"type": "string", "format": "uri"}}}),
        )
        .execute(|args, _ctx| async move { Ok((*args).clone()) })
        .build()
        .unwrap();
    assert!(!tool.validates_args());
    assert_eq!(tool.parameters()["properties"]["p"]["format"], "uri");
    assert!(tool.validate_args(&json!({"p": 1})).is_ok());
}

#[test]
fn definition_time_checks() {
    let zero = echo().timeout_ms(0).build().unwrap_err();
    assert_eq!(
        zero.to_string(),
        "defineTool(echo): timeoutMs must be a positive finite number"
    );
    let name = ToolDefinition::builder("9lives")
        .description("x")
        .build()
        .unwrap_err();
    assert!(
        matches!(name, DefinitionError::InvalidName { .. }),
        "{name}"
    );
    let long = "a".repeat(65);
    assert!(matches!(
        ToolDefinition::builder(long)
            .description("x")
            .build()
            .unwrap_err(),
        DefinitionError::InvalidName { .. }
    ));
    let missing = ToolDefinition::builder("x")
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap_err();
    assert_eq!(missing.to_string(), "tool \"x\" is missing its description");
    let no_body = ToolDefinition::builder("x")
        .description("d")
        .build()
        .unwrap_err();
    assert_eq!(
        no_body.to_string(),
        "tool \"x\" is missing its execute body"
    );
    let bad_output = echo()
        .output_json(json!({"type": "string", "format": "uri"}))
        .build()
        .unwrap_err();
    assert_eq!(
        bad_output.to_string(),
        "unsupported JSON schema: schema.format is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/prefixItems/enum/const/$ref/$defs + annotations)"
    );
    let not_object = echo()
        .parameters_json(json!({"type": "string"}))
        .build()
        .unwrap_err();
    assert!(matches!(
        not_object,
        DefinitionError::ParametersNotObject { .. }
    ));
}

#[test]
fn presenters_are_soft_and_concurrency_is_fail_closed() {
    let tool = echo()
        .present_call(|args| Some(ToolCallView::generic(args["text"].as_str()?.to_owned())))
        .concurrency_classifier(|args| args["text"] == "safe")
        .build()
        .unwrap();
    assert_eq!(
        tool.present_call(&json!({"text": "hi"})).unwrap().title(),
        "hi"
    );
    // Invalid arguments: no card, never a panic.
    assert!(tool.present_call(&json!({"text": 7})).is_none());
    assert!(
        tool.present_result(
            &json!({"text": "hi"}),
            &ToolResult {
                content: vec![],
                is_error: false,
                meta: None
            }
        )
        .is_none()
    );
    assert!(tool.is_concurrency_safe(&json!({"text": "safe"})));
    assert!(!tool.is_concurrency_safe(&json!({"text": "other"})));
    assert!(!tool.is_concurrency_safe(&json!({"text": 1})));
    let exclusive = echo().build().unwrap();
    assert!(!exclusive.is_concurrency_safe(&json!({"text": "safe"})));
}

#[test]
fn default_render_and_finaliser() {
    let tool = echo()
        .output_json(json!({}))
        .finalize_content(|_exec, result| {
            result
                .is_error()
                .then(|| vec![ContentBlock::text("finalised")])
        })
        .build()
        .unwrap();
    assert_eq!(
        tool.render(&json!({}), &json!("raw text")),
        vec![ContentBlock::text("raw text")]
    );
    assert_eq!(
        tool.render(&json!({}), &json!({"a": [1, 2]})),
        vec![ContentBlock::text("{\n  \"a\": [\n    1,\n    2\n  ]\n}")]
    );
    let exec = ToolExecution::detached("c", "echo", json!({}));
    let failed = ToolExecutionResult::failure(ToolError::msg("x"));
    assert_eq!(
        tool.finalize_content(&exec, &failed),
        Some(vec![ContentBlock::text("finalised")])
    );
}

#[test]
fn result_wire_shape_round_trips() {
    let success: ToolExecutionResult = serde_json::from_value(json!({
        "isError": false, "value": null, "content": [{"type": "text", "text": "null"}], "concludesTurn": true
    }))
    .unwrap();
    assert_eq!(success.value(), Some(&Value::Null));
    assert_eq!(
        serde_json::to_value(&success).unwrap(),
        json!({"isError": false, "value": null, "content": [{"type": "text", "text": "null"}], "concludesTurn": true})
    );
    let failure = ToolExecutionResult::failure(
        dsh_tools::ToolArgsError::new(vec!["\"a\" must be a string".into()]).into(),
    );
    let wire = serde_json::to_value(&failure).unwrap();
    assert_eq!(
        wire,
        json!({
            "isError": true,
            "error": {"message": "invalid arguments: \"a\" must be a string", "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"}},
            "content": [{"type": "text", "text": "Error: invalid arguments: \"a\" must be a string"}]
        })
    );
    let back: ToolExecutionResult = serde_json::from_value(wire).unwrap();
    assert_eq!(back, failure);
    assert!(
        serde_json::from_value::<ToolExecutionResult>(json!({"isError": true, "content": []}))
            .is_err()
    );
}

#[test]
fn run_context_collects_deferred_contexts_and_turn_conclusion() {
    let exec = Arc::new(ToolExecution::detached("c9", "t", json!({})));
    let (ctx, handle) = ToolRunContext::new(exec, tokio_util::sync::CancellationToken::new());
    ctx.defer_context(dsh_tools::ContextMessage {
        content: vec![ContentBlock::text("later")],
        source: None,
    });
    assert!(!handle.concludes_turn());
    ctx.clone().conclude_turn();
    assert!(handle.concludes_turn());
    assert_eq!(handle.take_deferred().len(), 1);
    assert!(handle.take_deferred().is_empty());
    assert_eq!(ctx.call_id(), "c9");
    assert_eq!(ctx.root_call_id(), "c9");
    assert!(ctx.state::<String>().is_none());
}

#[test]
fn width_bounds_are_validated_but_not_shown() {
    use dsh_tools::schema::{Property, SchemaSpec, ToolSchema};
    const ARGS: SchemaSpec = SchemaSpec::closed_object(&[
        Property::new("lines", &<u32>::SCHEMA),
        Property::new("delta", &<i8>::SCHEMA),
    ]);
    let def = ToolDefinition::builder("tail")
        .description("The last lines.")
        .parameters_spec(&ARGS)
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .unwrap();
    assert_eq!(
        def.parameters(),
        &json!({"type": "object", "additionalProperties": false, "properties": {
            "lines": {"type": "integer", "minimum": 0},
            "delta": {"type": "integer"}
        }, "required": ["lines", "delta"]})
    );
    assert_eq!(
        def.validate_args(&json!({"lines": 4294967296u64, "delta": -129}))
            .unwrap_err()
            .violations,
        [
            "\"lines\" must be at most 4294967295",
            "\"delta\" must be at least -128"
        ]
    );
    assert!(
        def.validate_args(&json!({"lines": 4294967295u64, "delta": 127}))
            .is_ok()
    );
}
