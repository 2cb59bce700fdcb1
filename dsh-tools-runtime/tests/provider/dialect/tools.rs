//! Whole tools in each provider's wire shape, name rules, errors, and the registry view.

use dsh_tools::{ToolAnnotations, ToolDefinition, ToolSchemaWire};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::dialect::{
    Dialect, DialectError, DialectOptions, OnUnsupported, render_tool,
};
use serde_json::{Value, json};

fn definition(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Count words.")
        .parameters_json(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text."}},
            "required": ["text"]
        }))
        .output_json(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"words": {"type": "integer"}},
            "required": ["words"]
        }))
        .annotations(ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        })
        .execute(|_, _| async { Ok(json!({"words": 0})) })
        .build()
        .unwrap()
}

fn wire(tool: &ToolDefinition, dialect: Dialect) -> Value {
    render_tool(tool, dialect, &DialectOptions::default())
        .unwrap()
        .wire
}

#[test]
fn each_dialect_has_its_wire_shape() {
    let tool = definition("count_words");
    let parameters = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text."}},
        "required": ["text"]
    });
    assert_eq!(
        wire(&tool, Dialect::Mcp),
        json!({
            "name": "count_words",
            "description": "Count words.",
            "inputSchema": parameters,
            "outputSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"words": {"type": "integer"}},
                "required": ["words"]
            },
            "annotations": {"readOnlyHint": true}
        })
    );
    assert_eq!(
        wire(&tool, Dialect::OpenAiStrict),
        json!({
            "type": "function",
            "function": {
                "name": "count_words",
                "description": "Count words.",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text."}},
                    "required": ["text"],
                    "additionalProperties": false
                },
                "strict": true
            }
        })
    );
    assert_eq!(
        wire(&tool, Dialect::Gemini),
        json!({"name": "count_words", "description": "Count words.", "parameters": parameters})
    );
    assert_eq!(
        wire(&tool, Dialect::Anthropic),
        json!({"name": "count_words", "description": "Count words.", "input_schema": parameters})
    );
}

#[test]
fn wire_schemas_render_without_output_or_annotations() {
    let schema = ToolSchemaWire {
        name: "ping".into(),
        description: "Ping.".into(),
        parameters: json!({"type": "object", "properties": {}}),
    };
    let options = DialectOptions::default();
    assert_eq!(
        render_tool(&schema, Dialect::Mcp, &options).unwrap().wire,
        json!({"name": "ping", "description": "Ping.", "inputSchema": {"type": "object", "properties": {}}})
    );
    // Gemini rejects an object without properties: a tool without parameters sends none.
    assert_eq!(
        render_tool(&schema, Dialect::Gemini, &options)
            .unwrap()
            .wire,
        json!({"name": "ping", "description": "Ping."})
    );
    // OpenAI strict: a tool without parameters is a closed empty object.
    assert_eq!(
        render_tool(&schema, Dialect::OpenAiStrict, &options)
            .unwrap()
            .wire["function"]["parameters"],
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn output_schemas_that_are_not_objects_stay_out_of_mcp() {
    let tool = ToolDefinition::builder("shout")
        .description("Shout.")
        .output_json(json!({"type": "string"}))
        .execute(|_, _| async { Ok(json!("HI")) })
        .build()
        .unwrap();
    let mcp = wire(&tool, Dialect::Mcp);
    assert!(mcp.get("outputSchema").is_none(), "{mcp}");
    assert!(mcp.get("annotations").is_none(), "{mcp}");
}

#[test]
fn names_the_provider_rejects_fail_with_their_rule() {
    let tool = definition("grep.search");
    let err = render_tool(&tool, Dialect::OpenAiStrict, &DialectOptions::default()).unwrap_err();
    assert_eq!(err.code(), "INVALID_TOOL_NAME");
    assert_eq!(
        err.to_string(),
        "tool \"grep.search\": openai-strict rejects the tool name \"grep.search\": 1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`"
    );
    assert!(render_tool(&tool, Dialect::Anthropic, &DialectOptions::default()).is_err());
    assert!(render_tool(&tool, Dialect::Gemini, &DialectOptions::default()).is_ok());
    assert!(render_tool(&tool, Dialect::Mcp, &DialectOptions::default()).is_ok());
    let long = ToolSchemaWire {
        name: "9".repeat(65),
        description: String::new(),
        parameters: json!({"type": "object"}),
    };
    assert!(matches!(
        render_tool(&long, Dialect::Gemini, &DialectOptions::default()),
        Err(DialectError::Tool { .. })
    ));
}

#[test]
fn unsupported_strict_schemas_fail_or_fall_back() {
    let tool = ToolSchemaWire {
        name: "tally".into(),
        description: "Tally.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"}}},
            "required": ["counts"]
        }),
    };
    let lenient = render_tool(&tool, Dialect::OpenAiStrict, &DialectOptions::default()).unwrap();
    assert!(!lenient.strict);
    assert_eq!(lenient.wire["function"]["strict"], json!(false));
    assert_eq!(lenient.wire["function"]["parameters"], tool.parameters);
    let options = DialectOptions::default().on_unsupported(OnUnsupported::Error);
    let err = render_tool(&tool, Dialect::OpenAiStrict, &options).unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED_SCHEMA");
    assert_eq!(
        err.to_string(),
        "tool \"tally\": openai-strict cannot express the schema: #/properties/counts/additionalProperties: a map (schema-valued `additionalProperties`) has open keys; strict mode needs every property declared"
    );
}

#[test]
fn schemas_that_are_not_object_schemas_fail() {
    let options = DialectOptions::default();
    for (parameters, code) in [
        (json!({"type": "string"}), "ROOT_NOT_OBJECT"),
        (json!([1]), "NOT_A_SCHEMA"),
        (json!(false), "NOT_A_SCHEMA"),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "number"}]}),
            "ROOT_NOT_OBJECT",
        ),
    ] {
        for dialect in [Dialect::OpenAiStrict, Dialect::Gemini, Dialect::Anthropic] {
            let err = dsh_tools_runtime::dialect::render_schema(&parameters, dialect, &options)
                .unwrap_err();
            assert_eq!(err.code(), code, "{dialect} {parameters}");
        }
    }
    // `true` and an untyped root describe the arguments object.
    for parameters in [json!(true), json!({}), json!({"type": ["object", "null"]})] {
        let rendered =
            dsh_tools_runtime::dialect::render_schema(&parameters, Dialect::Mcp, &options).unwrap();
        assert_eq!(rendered.schema, json!({"type": "object"}), "{parameters}");
    }
}

#[test]
fn dialect_names_round_trip() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>().unwrap(), dialect);
        assert_eq!(dialect.to_string(), dialect.as_str());
    }
    assert_eq!(
        "gemini ".parse::<Dialect>().unwrap_err().code(),
        "UNKNOWN_DIALECT"
    );
}

#[test]
fn the_registry_renders_a_scope_in_a_dialect() {
    let registry = ToolRegistry::new();
    registry.register(definition("count_words")).unwrap().keep();
    let agent = registry.new_scope();
    agent.register(definition("agent_only")).unwrap().keep();
    let names = |tools: Vec<Value>| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let options = DialectOptions::default();
    assert_eq!(
        names(
            registry
                .schemas_in(None, Dialect::Anthropic, &options)
                .unwrap()
        ),
        ["count_words"]
    );
    assert_eq!(
        names(
            registry
                .schemas_in(Some(agent.id()), Dialect::Anthropic, &options)
                .unwrap()
        ),
        ["count_words", "agent_only"]
    );
    let openai = registry
        .schemas_in(Some(agent.id()), Dialect::OpenAiStrict, &options)
        .unwrap();
    assert!(
        openai
            .iter()
            .all(|t| t["function"]["strict"] == json!(true))
    );
}
