//! The suite's tools that ask the client (elicitation, sampling, roots) and its server
//! diagnostics, written with the run context's questions (`ToolRunContext::elicit`, `sample`,
//! `roots`, `ask_all`): over 2026-07-28 they answer with input-required results, in a
//! 2025-11-25 session they send server-to-client requests. They serve only the conformance
//! test.

use dsh_tools::exec::{AskError, Elicited, InputKind, InputRequest, ToolRunContext};
use dsh_tools::{DefinitionError, ToolDefinition, tool};
use serde_json::{Value, json};

/// A form schema of string fields, all required.
fn strings(fields: &[&str]) -> Value {
    let properties: serde_json::Map<_, _> = fields
        .iter()
        .map(|field| (field.to_string(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": properties, "required": fields})
}

/// The text of a sampling result's content.
fn sampled_text(result: &Value) -> String {
    result["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A field of an accepted form, or what the user did instead.
fn field(answer: &Elicited, name: &str) -> String {
    match answer {
        Elicited::Accept(content) => match &content.get(name) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        Elicited::Decline => "(declined)".to_owned(),
        Elicited::Cancel => "(cancelled)".to_owned(),
    }
}

/// An answer as the suite's texts quote it: `action=…, content={…}`.
fn described(answer: &Elicited) -> String {
    match answer {
        Elicited::Accept(content) => {
            format!("action=accept, content={}", Value::Object(content.clone()))
        }
        Elicited::Decline => "action=decline, content={}".to_owned(),
        Elicited::Cancel => "action=cancel, content={}".to_owned(),
    }
}

/// Asks the user's name (one input-required round), then greets them.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_elicitation(ctx: ToolRunContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", strings(&["name"]))
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the client's model a question.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_sampling(ctx: ToolRunContext) -> Result<String, AskError> {
    let asked = InputRequest::sample("What is the capital of France?", 100);
    let answer = ctx.ask("capital_question", asked).await?;
    Ok(format!("The model answered: {}", sampled_text(&answer)))
}

/// Asks for the client's roots.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_list_roots(ctx: ToolRunContext) -> Result<String, AskError> {
    let roots = ctx.roots("client_roots").await?;
    let uris: Vec<_> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("The client's roots: {}", uris.join(", ")))
}

/// Asks for a confirmation; the answer comes back with the sealed request state.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_request_state(ctx: ToolRunContext) -> Result<String, AskError> {
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let answer = ctx.elicit("confirm", "Please confirm", schema).await?;
    Ok(format!("state-ok: confirmed {}", field(&answer, "ok")))
}

/// Asks a form, the model and the roots in one round.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_multiple_inputs(
    ctx: ToolRunContext,
) -> Result<String, AskError> {
    let answers = ctx
        .ask_all(vec![
            (
                "user_name",
                InputRequest::form("What is your name?", strings(&["name"])),
            ),
            ("greeting", InputRequest::sample("Generate a greeting", 50)),
            ("client_roots", InputRequest::roots()),
        ])
        .await?;
    let name = field(&Elicited::from_mcp(&answers[0])?, "name");
    Ok(format!(
        "{name}: {} ({} roots)",
        sampled_text(&answers[1]),
        answers[2]["roots"].as_array().map_or(0, Vec::len)
    ))
}

/// Asks two questions, one round each.
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_multi_round(ctx: ToolRunContext) -> Result<String, AskError> {
    let name = ctx
        .elicit("step1", "Step 1: What is your name?", strings(&["name"]))
        .await?;
    let color = ctx
        .elicit(
            "step2",
            "Step 2: What is your favorite color?",
            strings(&["color"]),
        )
        .await?;
    Ok(format!(
        "{} likes {}",
        field(&name, "name"),
        field(&color, "color")
    ))
}

/// Asks for a confirmation (the suite then alters the state it gets).
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_tampered_state(
    ctx: ToolRunContext,
) -> Result<String, AskError> {
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let answer = ctx.elicit("confirm", "Please confirm", schema).await?;
    Ok(format!("confirmed {}", field(&answer, "ok")))
}

/// Asks only what the client declared it can answer (a form and/or the model).
#[tool(read_only, concurrency_safe = true)]
async fn test_input_required_result_capabilities(ctx: ToolRunContext) -> Result<String, AskError> {
    let mut asked = Vec::new();
    if ctx.can_ask(InputKind::Elicitation) {
        asked.push((
            "user_name",
            InputRequest::form("What is your name?", strings(&["name"])),
        ));
    }
    if ctx.can_ask(InputKind::Sampling) {
        asked.push(("greeting", InputRequest::sample("Generate a greeting", 50)));
    }
    let answers = ctx.ask_all(asked).await?;
    Ok(format!("{} answers", answers.len()))
}

/// Needs the client's model: a client that did not declare sampling gets -32021.
#[tool(read_only, concurrency_safe = true)]
async fn test_missing_capability(ctx: ToolRunContext) -> Result<String, AskError> {
    let answer = ctx
        .ask("needs_sampling", InputRequest::sample("Say hello", 20))
        .await?;
    Ok(sampled_text(&answer))
}

/// Asks a form while the call's response stream is open (the answer comes in the result, never
/// as a request on the stream).
#[tool(read_only, concurrency_safe = true)]
async fn test_streaming_elicitation(ctx: ToolRunContext) -> Result<String, AskError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", strings(&["name"]))
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// The suite's logging probe: the server sends no log messages (tools report through results
/// and progress), so it only answers.
#[tool(read_only, concurrency_safe = true)]
async fn test_logging_tool() -> String {
    "Logging tool completed (the server sends no log messages)".to_owned()
}

/// Asks the user for their information (2025-11-25's `tools-call-elicitation`).
#[tool(read_only, concurrency_safe = true)]
async fn test_elicitation(ctx: ToolRunContext, message: String) -> Result<String, AskError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let answer = ctx.elicit("user_info", &message, schema).await?;
    Ok(format!("User response: {}", described(&answer)))
}

/// Asks the client's model `prompt` (2025-11-25's `tools-call-sampling`).
#[tool(read_only, concurrency_safe = true)]
async fn test_sampling(ctx: ToolRunContext, prompt: String) -> Result<String, AskError> {
    let answer = ctx
        .ask("answer", InputRequest::sample(&prompt, 100))
        .await?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

/// A form whose fields have defaults (SEP-1034).
#[tool(read_only, concurrency_safe = true)]
async fn test_elicitation_sep1034_defaults(ctx: ToolRunContext) -> Result<String, AskError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        },
    });
    let answer = ctx.elicit("defaults", "Check your details", schema).await?;
    Ok(format!("Elicitation completed: {}", described(&answer)))
}

/// A form with the five kinds of enum field (SEP-1330).
#[tool(read_only, concurrency_safe = true)]
async fn test_elicitation_sep1330_enums(ctx: ToolRunContext) -> Result<String, AskError> {
    let titled = |pairs: &[(&str, &str)]| -> Vec<Value> {
        pairs
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect()
    };
    let options = ["option1", "option2", "option3"];
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {"type": "string", "oneOf": titled(&[("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {"type": "array", "items": {"anyOf": titled(&[("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}},
        },
    });
    let answer = ctx.elicit("enums", "Pick your options", schema).await?;
    Ok(format!("Elicitation completed: {}", described(&answer)))
}

/// Every tool of this pack.
pub(crate) fn asking_tools() -> Vec<Result<ToolDefinition, DefinitionError>> {
    vec![
        test_input_required_result_elicitation::definition(),
        test_input_required_result_sampling::definition(),
        test_input_required_result_list_roots::definition(),
        test_input_required_result_request_state::definition(),
        test_input_required_result_multiple_inputs::definition(),
        test_input_required_result_multi_round::definition(),
        test_input_required_result_tampered_state::definition(),
        test_input_required_result_capabilities::definition(),
        test_missing_capability::definition(),
        test_streaming_elicitation::definition(),
        test_logging_tool::definition(),
        test_elicitation::definition(),
        test_sampling::definition(),
        test_elicitation_sep1034_defaults::definition(),
        test_elicitation_sep1330_enums::definition(),
    ]
}
