//! The native `tool_search` tool (`docs/CONTRACTS.md`, "Tool search and deferred loading"): a
//! query in plain words → the best matching deferred tools' full definitions, which from then
//! on are shown to the calling scope's model after its other tools.

use dsh_tools::{Callers, ToolAnnotations, ToolDefinition, ToolError};
use serde_json::{Value, json};

use super::WeakRegistry;
use super::deferral::TOOL_SEARCH_NAME;

/// How many definitions a search returns when the call gives no `limit`.
pub const TOOL_SEARCH_DEFAULT_LIMIT: usize = 5;
/// The most a search returns.
pub const TOOL_SEARCH_MAX_LIMIT: usize = 20;

/// The model-facing description of `tool_search`. It names no tool, so it stays the same as
/// tools are registered and found.
pub const TOOL_SEARCH_DESCRIPTION: &str = "Find tools that are not loaded yet. More tools exist than are listed: describe what you need in plain words (e.g. \"create a calendar event\") and get the best matching tools' full definitions. Found tools can be called right away and stay listed from then on.";

/// Builds the registry's `tool_search` definition (one per registry).
pub(crate) fn definition(registry: WeakRegistry) -> ToolDefinition {
    ToolDefinition::builder(TOOL_SEARCH_NAME)
        .description(TOOL_SEARCH_DESCRIPTION)
        .parameters_json(json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the tool should do, in plain words."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": TOOL_SEARCH_MAX_LIMIT,
                    "description": "How many tools to return (default 5)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .callers(Callers::Native)
        .concurrency_safe(true)
        .annotations(ToolAnnotations {
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..ToolAnnotations::default()
        })
        .execute(move |args, ctx| {
            let registry = registry.clone();
            async move {
                let registry = registry
                    .upgrade()
                    .ok_or_else(|| ToolError::msg("the tool registry is gone"))?;
                let query = args["query"].as_str().unwrap_or_default();
                let limit = args["limit"]
                    .as_u64()
                    .map_or(TOOL_SEARCH_DEFAULT_LIMIT, |l| l as usize);
                let scope = ctx.execution().agent;
                let hits = registry.search_deferred(scope, query, limit);
                registry.discover(scope, hits.iter().map(|h| h.name.as_str()));
                let tools: Vec<Value> = hits
                    .iter()
                    .filter_map(|hit| registry.get(&hit.name, scope))
                    .map(|def| {
                        json!({
                            "name": def.name(),
                            "description": def.description(),
                            "parameters": def.parameters(),
                        })
                    })
                    .collect();
                if tools.is_empty() {
                    return Ok(json!({
                        "tools": [],
                        "note": format!("no tool matches {query:?}: try other words, or fewer"),
                    }));
                }
                Ok(json!({ "tools": tools }))
            }
        })
        .build()
        .expect("the tool_search definition is valid")
}
