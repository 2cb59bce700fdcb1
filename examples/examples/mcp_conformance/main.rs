//! Both ends of MCP as the official conformance suite (`@modelcontextprotocol/conformance`)
//! drives them: `serve` is our streamable-HTTP server with the example coding tools plus the
//! tools the suite's server scenarios call (those that ask the client are in `asks.rs`);
//! `client URL` is our MCP client (`McpImport`) doing
//! what the suite's client scenarios ask.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example mcp_conformance -- serve   # prints the endpoint URL
//! node --import ./tests/node/conformance-node20.mjs \
//!   tests/node/node_modules/@modelcontextprotocol/conformance/dist/index.js server --url URL
//! ```
//!
//! In the `auth/*` scenarios the client authorizes with OAuth (`McpOAuth`) the way a host
//! without a browser would: it follows the authorization URL itself and takes the code from the
//! redirect (the suite's authorization server consents at once).
//!
//! `examples/tests/mcp_conformance.rs` runs the whole suite against both and asserts which
//! scenarios pass; the README says which do not apply to dsh-tools and why.
//!
//! The suite's tools are ordinary `#[tool]` functions: content the harness has no core block
//! for (MCP image data, audio, embedded resources) is returned as blocks that already have
//! MCP's shape, which the server passes through as they are.

mod asks;
mod tasks;

use std::time::Duration;

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{
    AskError, CallerInput, InputKind, InputRequest, ToolExecutionInput, ToolRunContext,
};
use dsh_tools::{ContentBlock, ToolDefinition, tool};
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::{
    AgentFuture, AuthorizationAgent, McpHttpOptions, McpImport, McpOAuth, McpServer,
};
use serde_json::{Value, json};

/// A 1×1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight samples of 8-bit mono silence at 8 kHz, as a WAV file.
const SILENCE_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// A content block in MCP's own shape (passed through by the server as it is).
fn mcp_block(block: Value) -> ContentBlock {
    match block {
        Value::Object(map) => ContentBlock::Unknown(map),
        other => ContentBlock::Text {
            text: other.to_string(),
        },
    }
}

fn image_block() -> ContentBlock {
    mcp_block(json!({"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}))
}

fn resource_block() -> ContentBlock {
    mcp_block(json!({
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    }))
}

/// Returns a fixed text.
#[tool(read_only, concurrency_safe = true)]
async fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Returns a short WAV clip of silence.
#[tool(read_only, concurrency_safe = true)]
async fn test_audio_content() -> Vec<ContentBlock> {
    vec![mcp_block(
        json!({"type": "audio", "data": SILENCE_WAV, "mimeType": "audio/wav"}),
    )]
}

/// Returns an embedded text resource.
#[tool(read_only, concurrency_safe = true)]
async fn test_embedded_resource() -> Vec<ContentBlock> {
    vec![resource_block()]
}

/// A tool whose content is `content()`, handed to the server as it is (`render`).
///
/// The image tools are built this way rather than as content-returning `#[tool]`s: those read
/// their blocks back as [`ContentBlock`]s, where `"type": "image"` is the harness's own image
/// attachment block, which an MCP image (`data`, `mimeType`) is not.
fn content_tool(
    name: &str,
    description: &str,
    content: fn() -> Vec<ContentBlock>,
) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .concurrency_safe(true)
        .render(move |_, _| content())
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("a valid tool")
}

fn image_tools() -> [ToolDefinition; 2] {
    [
        content_tool("test_image_content", "Returns a 1x1 red PNG image.", || {
            vec![image_block()]
        }),
        content_tool(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource.",
            || {
                vec![
                    ContentBlock::Text {
                        text: "Multiple content types test:".to_owned(),
                    },
                    image_block(),
                    resource_block(),
                ]
            },
        ),
    ]
}

/// Always fails.
#[tool(read_only, concurrency_safe = true)]
async fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 of 100, then returns.
///
/// The steps are 150 ms apart: the server forwards at most one report per 100 ms (besides the
/// first and the completing one), so reports closer together would be merged.
#[tool(read_only, concurrency_safe = true)]
async fn test_tool_with_progress(ctx: ToolRunContext) -> String {
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        ctx.progress(done, Some(100.0), None);
    }
    "Progress test completed".to_owned()
}

/// A tool whose parameters use `$defs`, `$ref` and `additionalProperties: false` (the
/// suite's JSON Schema 2020-12 scenario).
fn json_schema_2020_12_tool() -> ToolDefinition {
    ToolDefinition::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .parameters_json(json!({
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                    },
                },
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
            },
            "additionalProperties": false,
        }))
        .execute(|args, _ctx| async move { Ok(json!({"received": *args})) })
        .build()
        .expect("a valid tool")
}

/// A tool whose `region` parameter a client mirrors into the `Mcp-Param-Region` header
/// (SEP-2243, `x-mcp-header`): the server refuses a call whose header does not match.
///
/// `x-mcp-header` is outside the harness's parameter subset, so the schema is given raw (not
/// validated by the harness: the tool reads what it needs itself).
fn region_tool() -> ToolDefinition {
    ToolDefinition::builder("test_region_header")
        .description("Echoes the region its caller also sends as the Mcp-Param-Region header.")
        .raw_parameters(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
            "required": ["region"],
        }))
        .execute(|args, _ctx| async move {
            match args["region"].as_str() {
                Some(region) => Ok(json!({"region": region})),
                None => Err(dsh_tools::ToolError::msg("region must be a string")),
            }
        })
        .build()
        .expect("a valid tool")
}

/// The served registry: the example coding tools and the suite's tools.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let mut tools: Vec<_> = dsh_tools_examples::coding::coding_tools()
        .expect("valid tools")
        .into_iter()
        .map(Ok)
        .collect();
    tools.extend([
        test_simple_text::definition(),
        test_audio_content::definition(),
        test_embedded_resource::definition(),
        test_error_handling::definition(),
        test_tool_with_progress::definition(),
    ]);
    tools.extend(asks::asking_tools());
    tools.extend(tasks::task_tools());
    for tool in tools {
        registry
            .register(tool.expect("a valid tool"))
            .expect("registered")
            .keep();
    }
    for tool in image_tools()
        .into_iter()
        .chain([json_schema_2020_12_tool(), region_tool()])
    {
        registry.register(tool).expect("registered").keep();
    }
    registry
}

/// Serves on an ephemeral loopback port, prints the endpoint URL, serves until killed.
async fn serve() {
    let registry = registry();
    let server = McpServer::new(&registry)
        .with_server_info("dsh-tools-conformance", env!("CARGO_PKG_VERSION"))
        .with_tasks(tasks::tasks());
    let addr = ([127, 0, 0, 1], 0).into();
    let http = server.serve_http(addr).await.unwrap_or_else(|e| {
        eprintln!("mcp_conformance: {e}");
        std::process::exit(1);
    });
    println!("{}", http.url());
    http.wait().await;
}

/// The Client ID Metadata Document URL the suite's authorization servers accept.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Follows the authorization URL without a browser and returns the redirect it answers with.
struct Headless;

impl AuthorizationAgent for Headless {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:3000/callback".to_owned()
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = http
                .get(authorization_url)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!(
                        "no redirect from the authorization URL ({})",
                        response.status()
                    )
                })
        })
    }
}

/// The scenario's context (`MCP_CONFORMANCE_CONTEXT`), or `null`.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Arguments for a tool the scenario only needs called: each required property with a plain
/// value of its type.
fn minimal_arguments(schema: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number" | "integer") => json!(0),
            Some("boolean") => json!(false),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("test"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

/// OAuth as the scenario's context (`MCP_CONFORMANCE_CONTEXT`) configures it: the
/// client-credentials grant in the client-credentials scenarios, a pre-registered client when
/// it names one, else a Client ID Metadata Document or dynamic registration.
fn oauth(scenario: &str) -> McpOAuth {
    let context = context();
    if let (true, Some(id), Some(secret)) = (
        scenario.starts_with("auth/client-credentials"),
        context["client_id"].as_str(),
        context["client_secret"].as_str(),
    ) {
        return McpOAuth::client_credentials(id, secret.to_owned());
    }
    let oauth = McpOAuth::new(Headless)
        .client_name("dsh-tools-conformance")
        .client_metadata_url(CLIENT_METADATA_URL);
    match context["client_id"].as_str() {
        Some(id) => {
            oauth.preregistered_client(id, context["client_secret"].as_str().map(str::to_owned))
        }
        None => oauth,
    }
}

/// The host's answer to a server's questions, as a user who accepts everything would give it:
/// every form is accepted with each field's default, and `true` for a yes/no field without one
/// (the suite's MRTR scenario asks for a confirmation); nothing else is answered.
struct Confirm;

/// The content a form is accepted with.
fn accepted(requested_schema: &Value) -> Value {
    let mut content = serde_json::Map::new();
    for (name, field) in requested_schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
    {
        match (field.get("default"), field["type"].as_str()) {
            (Some(default), _) => {
                content.insert(name.clone(), default.clone());
            }
            (None, Some("boolean")) => {
                content.insert(name.clone(), Value::Bool(true));
            }
            _ => {}
        }
    }
    json!({"action": "accept", "content": content})
}

impl CallerInput for Confirm {
    fn can_answer(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn ask(
        &self,
        _key: &str,
        request: InputRequest,
    ) -> BoxFuture<'static, Result<Value, AskError>> {
        let answer = match request.kind {
            InputKind::Elicitation => Ok(accepted(&request.params["requestedSchema"])),
            other => Err(AskError::NotDeclared(other)),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// What the client does in a scenario (`MCP_CONFORMANCE_SCENARIO`): connect and import the
/// server's tools, call the tool the scenario is about (in the `auth/*` scenarios: every tool),
/// close.
async fn client(url: &str) -> Result<(), String> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let registry = ToolRegistry::new();
    registry.set_input_service(Arc::new(Confirm));
    let options = McpHttpOptions::new().oauth(oauth(&scenario));
    let connection = McpImport::new(&registry)
        .connect_http_with("server", url, &options)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))?;
    let named = |tool: &str, arguments| vec![(format!("mcp__server__{tool}"), arguments)];
    let calls = match scenario.as_str() {
        "tools_call" => named("add_numbers", json!({"a": 5, "b": 3})),
        "sse-retry" => named("test_reconnection", json!({})),
        "sep-2322-client-request-state" => [
            "test_mrtr_echo_state",
            "test_mrtr_no_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_result_type",
        ]
        .into_iter()
        .flat_map(|tool| named(tool, json!({})))
        .collect(),
        "elicitation-sep1034-client-defaults" => {
            named("test_client_elicitation_defaults", json!({}))
        }
        // The calls the scenario's context lists (`toolCalls`), as they are.
        "http-custom-headers" => context()["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|call| {
                named(
                    call["name"].as_str().unwrap_or_default(),
                    call["arguments"].clone(),
                )
            })
            .collect(),
        every if every.starts_with("auth/") || every == "http-invalid-tool-headers" => connection
            .tools()
            .into_iter()
            .map(|tool| {
                let schema = registry
                    .get(&tool.public_name, None)
                    .map(|def| def.parameters().clone());
                (
                    tool.public_name,
                    minimal_arguments(&schema.unwrap_or_default()),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut outcome = Ok(());
    for (tool, arguments) in calls {
        let agent = registry.new_scope();
        let mut input = ToolExecutionInput::new("c1", tool.clone(), arguments);
        input.agent = Some(agent.id());
        let result = registry.execute(input).await;
        println!("{}", serde_json::to_string(&result).unwrap_or_default());
        if result.is_error() {
            outcome = Err(format!("{tool} failed"));
        }
        agent.dispose();
    }
    connection.close().await;
    outcome
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["serve"] => serve().await,
        ["client", url] => {
            if let Err(e) = client(url).await {
                eprintln!("mcp_conformance: {e}");
                std::process::exit(1);
            }
        }
        _ => {
            eprintln!("usage: mcp_conformance serve | mcp_conformance client URL");
            std::process::exit(2);
        }
    }
}
