//! Tool parameters mirrored into HTTP headers (SEP-2243, `x-mcp-header`): a served tool whose
//! parameters schema marks a property with `"x-mcp-header": "Name"` is listed with it, a
//! client sends that argument again as `Mcp-Param-Name`, and the HTTP transport refuses a
//! `tools/call` whose headers do not match its body (HTTP 400, JSON-RPC -32020) before the
//! call runs (`docs/CONTRACTS.md`, "MCP").
//!
//! rmcp's transport does the checking; it asks the handler for the called tool's input schema.

use rmcp::model::Tool;

use super::handler::RegistryHandler;
use super::wire::mcp_tool;

/// The listing of the served tool `name` when its parameters declare `x-mcp-header`
/// properties (what rmcp checks the headers of a call against); `None` for any other tool,
/// whose calls carry no parameter headers to check.
pub(crate) fn declaring_tool(handler: &RegistryHandler, name: &str) -> Option<Tool> {
    let def = handler.registry.get(name, Some(handler.agent))?;
    if !def.callers().model() || !declares_headers(def.parameters()) {
        return None;
    }
    Some(mcp_tool(&def))
}

/// Whether a parameters schema marks any property, at any depth of `properties`, with
/// `x-mcp-header`.
fn declares_headers(schema: &serde_json::Value) -> bool {
    schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .is_some_and(|properties| {
            properties.values().any(|property| {
                property.get("x-mcp-header").is_some() || declares_headers(property)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_marked_property_at_any_depth_declares_headers() {
        let flat = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        let nested = json!({"properties": {"where": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
        }}}});
        let none = json!({"properties": {"region": {"type": "string"}}});
        assert!(declares_headers(&flat));
        assert!(declares_headers(&nested));
        assert!(!declares_headers(&none));
    }
}
