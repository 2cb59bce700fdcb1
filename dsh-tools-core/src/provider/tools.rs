//! The `tools` list of a provider request, with deferred loading mapped to the provider's own
//! tool search where it has one (`docs/CONTRACTS.md`, "Tool search and deferred loading").

use dsh_tools::{ToolDefinition, ToolSchemaWire};
use serde_json::{Value, json};

use super::Provider;
use crate::TOOL_SEARCH_NAME;
use crate::dialect::{Dialect, DialectError, DialectOptions, render_tool};

/// Anthropic's server-side search over tools sent with `defer_loading` (natural-language
/// queries, BM25), and the beta its requests need.
pub const ANTHROPIC_TOOL_SEARCH: &str = "tool_search_tool_bm25_20251119";
/// The `anthropic-beta` header value Anthropic's tool search needs.
pub const ANTHROPIC_TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// The `tools` list of a `provider` request for a native scope: `shown` are the wire tools of
/// its prompt (`ToolRegistry::prompt(scope)?.tools`, which hold the reserved `tool_search` when
/// the scope defers tools) and `deferred` the tools it has not found yet
/// (`ToolRegistry::deferred(scope)`).
///
/// - Anthropic Messages: our `tool_search` becomes Anthropic's own
///   ([`ANTHROPIC_TOOL_SEARCH`]; send the [`ANTHROPIC_TOOL_SEARCH_BETA`] header) and every
///   deferred tool is sent after the others with `"defer_loading": true`: Anthropic searches
///   them and loads the matches itself.
/// - OpenAI Responses: the same with `{"type": "tool_search"}` and function tools in the
///   Responses shape (`{type, name, description, parameters, strict}`).
/// - OpenAI Chat Completions and Gemini, which have no such mechanism: the shown tools as they
///   are, our `tool_search` among them; deferred tools are not sent.
///
/// The model may then call a deferred tool by name: it stays executable.
///
/// ```
/// use dsh_tools::{Loading, ToolDefinition};
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::dialect::DialectOptions;
/// use dsh_tools_runtime::provider::{Provider, request_tools};
///
/// let tool = |name: &str| ToolDefinition::builder(name).description("A tool.")
///     .execute(|_, _| async { Ok(serde_json::Value::Null) }).build().unwrap();
/// let registry = ToolRegistry::new();
/// registry.register(tool("read")).unwrap().keep();
/// registry.register(tool("archive").with_loading(Loading::Deferred)).unwrap().keep();
/// let shown = registry.prompt(None).unwrap().tools;
/// let deferred = registry.deferred(None);
/// let options = DialectOptions::default();
///
/// let anthropic = request_tools(Provider::Anthropic, &shown, &deferred, &options).unwrap();
/// assert_eq!(anthropic[1]["type"], "tool_search_tool_bm25_20251119");
/// assert_eq!(anthropic[2]["name"], "archive");
/// assert_eq!(anthropic[2]["defer_loading"], true);
///
/// let gemini = request_tools(Provider::Gemini, &shown, &deferred, &options).unwrap();
/// let names: Vec<&str> = gemini.iter().map(|t| t["name"].as_str().unwrap()).collect();
/// assert_eq!(names, ["read", "tool_search"]);
/// ```
pub fn request_tools(
    provider: Provider,
    shown: &[ToolSchemaWire],
    deferred: &[ToolDefinition],
    options: &DialectOptions,
) -> Result<Vec<Value>, DialectError> {
    let dialect = match provider {
        Provider::OpenAiChat | Provider::OpenAiResponses => Dialect::OpenAiStrict,
        Provider::Anthropic => Dialect::Anthropic,
        Provider::Gemini => Dialect::Gemini,
    };
    let native_search = match provider {
        Provider::Anthropic => {
            Some(json!({"type": ANTHROPIC_TOOL_SEARCH, "name": "tool_search_tool_bm25"}))
        }
        Provider::OpenAiResponses => Some(json!({"type": "tool_search"})),
        Provider::OpenAiChat | Provider::Gemini => None,
    };
    let shape = |wire: Value| match provider {
        Provider::OpenAiResponses => responses_shape(wire),
        _ => wire,
    };
    let mut tools = Vec::with_capacity(shown.len() + deferred.len());
    for tool in shown {
        match &native_search {
            Some(search) if tool.name == TOOL_SEARCH_NAME => tools.push(search.clone()),
            _ => tools.push(shape(render_tool(tool, dialect, options)?.wire)),
        }
    }
    if native_search.is_some() && shown.iter().any(|t| t.name == TOOL_SEARCH_NAME) {
        for tool in deferred {
            let mut wire = shape(render_tool(tool, dialect, options)?.wire);
            if let Value::Object(map) = &mut wire {
                map.insert("defer_loading".into(), Value::Bool(true));
            }
            tools.push(wire);
        }
    }
    Ok(tools)
}

/// A Chat Completions function tool (`{type, function: {...}}`) in the Responses shape
/// (`{type, name, description, parameters, strict}`).
fn responses_shape(wire: Value) -> Value {
    let Value::Object(mut map) = wire else {
        return wire;
    };
    if let Some(Value::Object(function)) = map.remove("function") {
        map.extend(function);
    }
    Value::Object(map)
}
