//! Whole tools in each provider's wire shape.

use dsh_tools::exec::ScopeId;
use dsh_tools::{ToolAnnotations, ToolDefinition, ToolSchemaWire};
use serde_json::{Map, Value, json};

use super::{Dialect, DialectError, DialectOptions, Issue, render_schema};
use crate::ToolRegistry;

/// What a tool rendering reads: a [`ToolSchemaWire`] (name, description, parameters) or a
/// [`ToolDefinition`] (which adds the output schema and annotations MCP can carry).
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The parameter schema (canonical).
    pub parameters: &'a Value,
    /// The output schema, if known (MCP sends it when it describes an object).
    pub output_schema: Option<&'a Value>,
    /// Behaviour hints, if known (MCP sends them when any is set).
    pub annotations: Option<ToolAnnotations>,
}

impl<'a> From<&'a ToolSchemaWire> for ToolInfo<'a> {
    fn from(tool: &'a ToolSchemaWire) -> Self {
        Self {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
            output_schema: None,
            annotations: None,
        }
    }
}

impl<'a> From<&'a ToolDefinition> for ToolInfo<'a> {
    fn from(tool: &'a ToolDefinition) -> Self {
        Self {
            name: tool.name(),
            description: tool.description(),
            parameters: tool.parameters(),
            output_schema: Some(tool.output_schema()),
            annotations: Some(tool.annotations()),
        }
    }
}

/// A tool in a provider's wire shape.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedTool {
    /// The tool's name.
    pub name: String,
    /// The wire value, ready to put in the provider's `tools` list.
    pub wire: Value,
    /// OpenAI strict mode: whether the tool is sent strict.
    pub strict: bool,
    /// What the parameter rendering changed (output-schema issues, for MCP, have paths that
    /// start with `outputSchema#`).
    pub issues: Vec<Issue>,
}

/// Renders a tool in `dialect`'s wire shape:
///
/// - MCP: `{name, description, inputSchema, outputSchema?, annotations?}` — `outputSchema` only
///   when the output schema's root is `"type": "object"` (MCP requires it), `annotations`
///   only when a hint is set;
/// - OpenAI: `{type: "function", function: {name, description, parameters, strict}}` (Chat
///   Completions);
/// - Gemini: `{name, description, parameters}` — `parameters` left out when the tool takes no
///   properties (Gemini rejects an object without them);
/// - Anthropic: `{name, description, input_schema}`.
///
/// OpenAI and Anthropic accept names of 1 to 64 characters from `a-z A-Z 0-9 _ -`; Gemini
/// names start with a letter or `_` and may also hold `.` and `:`. Other names fail with
/// [`DialectError::InvalidToolName`]. Every failure is wrapped in [`DialectError::Tool`].
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use dsh_tools_runtime::dialect::{Dialect, DialectOptions, render_tool};
/// use serde_json::json;
///
/// let tool = ToolDefinition::builder("echo")
///     .description("Echo the text.")
///     .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .execute(|args, _| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// let openai = render_tool(&tool, Dialect::OpenAiStrict, &DialectOptions::default()).unwrap();
/// assert_eq!(openai.wire, json!({
///     "type": "function",
///     "function": {
///         "name": "echo",
///         "description": "Echo the text.",
///         "parameters": {
///             "type": "object",
///             "properties": {"text": {"type": "string"}},
///             "required": ["text"],
///             "additionalProperties": false
///         },
///         "strict": true
///     }
/// }));
/// let anthropic = render_tool(&tool, Dialect::Anthropic, &DialectOptions::default()).unwrap();
/// assert_eq!(anthropic.wire["input_schema"], *tool.parameters());
/// ```
pub fn render_tool<'a>(
    tool: impl Into<ToolInfo<'a>>,
    dialect: Dialect,
    options: &DialectOptions,
) -> Result<RenderedTool, DialectError> {
    let tool = tool.into();
    render(&tool, dialect, options).map_err(|source| DialectError::Tool {
        tool: tool.name.to_owned(),
        source: Box::new(source),
    })
}

fn render(
    tool: &ToolInfo<'_>,
    dialect: Dialect,
    options: &DialectOptions,
) -> Result<RenderedTool, DialectError> {
    check_name(tool.name, dialect)?;
    let rendered = render_schema(tool.parameters, dialect, options)?;
    let mut issues = rendered.issues;
    let mut wire = Map::new();
    match dialect {
        Dialect::OpenAiStrict => {
            let function = json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": rendered.schema,
                "strict": rendered.strict,
            });
            wire.insert("type".into(), "function".into());
            wire.insert("function".into(), function);
        }
        Dialect::Gemini => {
            wire.insert("name".into(), tool.name.into());
            wire.insert("description".into(), tool.description.into());
            if rendered.schema.get("properties").is_some() {
                wire.insert("parameters".into(), rendered.schema);
            }
        }
        Dialect::Anthropic => {
            wire.insert("name".into(), tool.name.into());
            wire.insert("description".into(), tool.description.into());
            wire.insert("input_schema".into(), rendered.schema);
        }
        Dialect::Mcp => {
            wire.insert("name".into(), tool.name.into());
            wire.insert("description".into(), tool.description.into());
            wire.insert("inputSchema".into(), rendered.schema);
            let object_output = tool
                .output_schema
                .filter(|s| s.get("type").and_then(Value::as_str) == Some("object"));
            if let Some(output) = object_output {
                let output = render_schema(output, Dialect::Mcp, options)?;
                issues.extend(output.issues.into_iter().map(|mut issue| {
                    issue.path = format!("outputSchema{}", issue.path);
                    issue
                }));
                wire.insert("outputSchema".into(), output.schema);
            }
            let hints = tool
                .annotations
                .and_then(|a| serde_json::to_value(a).ok())
                .filter(|a| a.as_object().is_some_and(|a| !a.is_empty()));
            if let Some(hints) = hints {
                wire.insert("annotations".into(), hints);
            }
        }
    }
    Ok(RenderedTool {
        name: tool.name.to_owned(),
        wire: Value::Object(wire),
        strict: rendered.strict,
        issues,
    })
}

fn check_name(name: &str, dialect: Dialect) -> Result<(), DialectError> {
    let invalid = |rule| {
        Err(DialectError::InvalidToolName {
            dialect,
            name: name.to_owned(),
            rule,
        })
    };
    let length = name.chars().count();
    match dialect {
        Dialect::OpenAiStrict | Dialect::Anthropic => {
            let ok = (1..=64).contains(&length)
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !ok {
                return invalid("1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`");
            }
        }
        Dialect::Gemini => {
            let first = name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
            let ok = first
                && length <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'));
            if !ok {
                return invalid(
                    "a letter or `_` first, then a-z, A-Z, 0-9, `_`, `.`, `:` and `-`, at most 64 characters",
                );
            }
        }
        Dialect::Mcp => {}
    }
    Ok(())
}

impl ToolRegistry {
    /// The tools of [`ToolRegistry::schemas`] (what `scope`'s model is shown, in order: deferred
    /// tools not found yet and code-only tools left out), rendered
    /// in `dialect`'s wire shape — what a host puts in the provider request's `tools` list.
    /// The first tool that cannot be rendered fails the whole list, naming the tool; use
    /// [`render_tool`] over [`ToolRegistry::visible`] for per-tool results and issues.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use dsh_tools_runtime::dialect::{Dialect, DialectOptions};
    ///
    /// let registry = ToolRegistry::new();
    /// registry.register(ToolDefinition::builder("ping").description("Ping.")
    ///     .execute(|_, _| async { Ok(serde_json::Value::Null) }).build().unwrap()).unwrap().keep();
    /// let tools = registry.schemas_in(None, Dialect::Gemini, &DialectOptions::default()).unwrap();
    /// assert_eq!(tools, [serde_json::json!({"name": "ping", "description": "Ping."})]);
    /// ```
    pub fn schemas_in(
        &self,
        scope: Option<ScopeId>,
        dialect: Dialect,
        options: &DialectOptions,
    ) -> Result<Vec<Value>, DialectError> {
        self.shown(scope)
            .iter()
            .filter(|tool| tool.callers().model())
            .map(|tool| render_tool(tool, dialect, options).map(|r| r.wire))
            .collect()
    }
}
