//! Protected Resource Metadata (RFC 9728): where it is served and what it says.

use serde_json::{Value, json};

use super::jwt::split_origin;

/// The well-known prefix of the metadata paths.
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata of one protected resource.
#[derive(Debug, Clone)]
pub(super) struct ResourceMetadata {
    /// The metadata URL that 401 challenges name (`resource_metadata`): the well-known path
    /// with the resource's path appended (RFC 9728 §3.1).
    pub(super) url: String,
    /// The request paths the document is served at: the suffixed one and the root one.
    pub(super) paths: Vec<String>,
    /// The document.
    pub(super) document: Value,
}

impl ResourceMetadata {
    pub(super) fn new(resource: &str, issuer: &str, scopes: Vec<String>) -> Self {
        let (origin, path) = split_origin(resource).unwrap_or((resource, ""));
        let path = path.trim_end_matches('/');
        let suffixed = format!("{WELL_KNOWN}{path}");
        let mut paths = vec![suffixed.clone()];
        if !path.is_empty() {
            paths.push(WELL_KNOWN.to_owned());
        }
        Self {
            url: format!("{origin}{suffixed}"),
            paths,
            document: json!({
                "resource": resource,
                "authorization_servers": [issuer],
                "scopes_supported": scopes,
                "bearer_methods_supported": ["header"],
                "resource_name": "dsh-tools MCP server",
            }),
        }
    }

    /// Whether `path` is one of the metadata paths.
    pub(super) fn serves(&self, path: &str) -> bool {
        self.paths.iter().any(|p| p == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixed_url_and_both_paths() {
        let meta = ResourceMetadata::new(
            "http://127.0.0.1:8080/mcp",
            "https://as.example",
            vec!["tools:read".into()],
        );
        assert_eq!(
            meta.url,
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert!(meta.serves("/.well-known/oauth-protected-resource/mcp"));
        assert!(meta.serves("/.well-known/oauth-protected-resource"));
        assert_eq!(
            meta.document["authorization_servers"][0],
            "https://as.example"
        );
        let root = ResourceMetadata::new("https://mcp.example", "https://as.example", vec![]);
        assert_eq!(
            root.url,
            "https://mcp.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(root.paths.len(), 1);
    }
}
