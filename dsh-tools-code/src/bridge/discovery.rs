//! Tool search inside programs (`docs/CONTRACTS.md`, "Tool search and deferred loading"):
//! `tools.$search(query)` and `tools.$describe(name)`, answered on the host from the calling
//! scope's deferred tools. They are not tool calls: no pipeline, no journal entry, no dispatch
//! event. What they return is marked found, so the next prompt's SDK declares it.

use dsh_tools::exec::ScopeId;
use serde_json::{Value, json};

use crate::flavour::Flavour;
use crate::runtime::BindingFn;
use crate::texts::{DESCRIBE, SEARCH};
use dsh_tools_core::extension::WeakRegistry;
use dsh_tools_core::{TOOL_SEARCH_DEFAULT_LIMIT, TOOL_SEARCH_MAX_LIMIT, ToolRegistry};

/// `$search` and `$describe` for programs run by `agent`, in the language of `flavour` (the
/// signatures they return are its declarations).
pub(super) fn bindings(
    registry: &ToolRegistry,
    agent: Option<ScopeId>,
    flavour: &'static Flavour,
) -> [(String, BindingFn); 2] {
    let signature = flavour.signature;
    let weak = registry.downgrade();
    let search: BindingFn = {
        let weak = weak.clone();
        std::sync::Arc::new(move |arguments: Value| {
            let answer = with_registry(&weak, |registry| {
                search(registry, agent, signature, &arguments)
            });
            Box::pin(std::future::ready(answer)) as _
        })
    };
    let describe: BindingFn = std::sync::Arc::new(move |arguments: Value| {
        let answer = with_registry(&weak, |registry| {
            describe(registry, agent, signature, &arguments)
        });
        Box::pin(std::future::ready(answer)) as _
    });
    [(SEARCH.to_owned(), search), (DESCRIBE.to_owned(), describe)]
}

fn with_registry(
    weak: &WeakRegistry,
    answer: impl FnOnce(&ToolRegistry) -> Result<Value, String>,
) -> Result<Value, String> {
    let registry = weak
        .upgrade()
        .ok_or_else(|| "the tool registry is gone".to_owned())?;
    answer(&registry)
}

/// `$search(query)` or `$search({query, limit})`: `[{name, score, signature}]`, best first.
fn search(
    registry: &ToolRegistry,
    agent: Option<ScopeId>,
    signature: fn(&dsh_tools::ToolDefinition) -> String,
    arguments: &Value,
) -> Result<Value, String> {
    let (query, limit) = match arguments {
        Value::String(query) => (query.as_str(), TOOL_SEARCH_DEFAULT_LIMIT),
        Value::Object(map) => {
            let query = map.get("query").and_then(Value::as_str).ok_or_else(|| {
                "tools.$search: expected a query string, or {query: string, limit?: number}"
                    .to_owned()
            })?;
            let limit = match map.get("limit") {
                None | Some(Value::Null) => TOOL_SEARCH_DEFAULT_LIMIT,
                Some(limit) => limit
                    .as_u64()
                    .filter(|l| (1..=TOOL_SEARCH_MAX_LIMIT as u64).contains(l))
                    .ok_or_else(|| {
                        format!("tools.$search: limit must be an integer from 1 to {TOOL_SEARCH_MAX_LIMIT}")
                    })? as usize,
            };
            (query, limit)
        }
        _ => {
            return Err(
                "tools.$search: expected a query string, or {query: string, limit?: number}"
                    .to_owned(),
            );
        }
    };
    let hits = registry.search_deferred(agent, query, limit);
    registry.discover(agent, hits.iter().map(|h| h.name.as_str()));
    let found: Vec<Value> = hits
        .iter()
        .filter_map(|hit| {
            let def = registry.get(&hit.name, agent)?;
            Some(json!({"name": hit.name, "score": hit.score, "signature": signature(&def)}))
        })
        .collect();
    Ok(Value::Array(found))
}

/// `$describe(name)`: `{name, signature}` of a tool the program may call, or `null`.
fn describe(
    registry: &ToolRegistry,
    agent: Option<ScopeId>,
    signature: fn(&dsh_tools::ToolDefinition) -> String,
    arguments: &Value,
) -> Result<Value, String> {
    let name = arguments
        .as_str()
        .ok_or_else(|| "tools.$describe: expected a tool name (a string)".to_owned())?;
    let Some(def) = super::binding::callable(registry, agent)
        .into_iter()
        .find(|def| def.name() == name && def.callers().code())
    else {
        return Ok(Value::Null);
    };
    registry.discover(agent, [name]);
    Ok(json!({"name": name, "signature": signature(&def)}))
}
