//! Schemas derived from Rust types (`#[derive(ToolSchema)]`, `#[tool]`) — the shapes users
//! report as broken across providers — rendered exactly in every dialect.

use std::collections::HashMap;

use dsh_tools::schema::{Property, SchemaSpec, ToolSchema};
use dsh_tools::tool;
use dsh_tools_runtime::dialect::{Dialect, IssueKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::invariants::render_checked;

/// Sort order.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Newest,
    Oldest,
}

/// Search the notes.
#[tool]
pub async fn search_notes(
    /// Words to look for.
    query: String,
    /// Only notes with one of these tags.
    tags: Option<Vec<String>>,
    /// Sort order.
    order: Order,
    /// At most this many results.
    limit: Option<u8>,
) -> Vec<String> {
    let _ = (query, tags, order, limit);
    Vec::new()
}

/// A closed range of lines.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
pub struct Range {
    /// First line.
    pub from: u32,
    /// Last line (the end of the file when absent).
    pub to: Option<u32>,
}

/// Where to look.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
pub struct Scope {
    /// The lines.
    pub range: Range,
    /// Extra labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Counts per word.
    pub counts: HashMap<String, u32>,
}

/// A shape.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
pub enum Shape {
    Empty,
    /// A circle's radius.
    Circle(u8),
    /// A rectangle.
    Rect {
        width: u8,
        height: Option<u8>,
    },
}

/// An edit.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// Insert text.
    Insert {
        at: u32,
        text: String,
    },
    /// Delete lines.
    Delete {
        range: Range,
    },
    Clear,
}

/// A change.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
#[serde(tag = "t", content = "c")]
pub enum Change {
    Noop,
    Rename(String),
}

/// A loose value.
#[derive(Debug, Clone, Serialize, Deserialize, dsh_tools::ToolSchema)]
#[serde(untagged)]
pub enum Loose {
    Flag(bool),
    Text(String),
}

/// The single parameter `v` of a tool.
#[derive(Debug, Serialize, Deserialize, dsh_tools::ToolSchema)]
pub struct Wrap<T> {
    pub v: T,
}

pub(crate) fn params<T: ToolSchema>() -> Value {
    T::SCHEMA.to_parameters_schema().unwrap()
}

const SCOPE_ARGS: SchemaSpec = SchemaSpec::object(&[Property::new("scope", &Scope::SCHEMA)]);

/// Renders `schema` in `dialect` (checking the dialect's invariants) and compares the result,
/// the strict flag and the issues (kind and path) exactly.
pub(crate) fn expect(
    schema: &Value,
    dialect: Dialect,
    expected: Value,
    strict: bool,
    issues: &[(IssueKind, &str)],
) {
    let rendered = render_checked(schema, dialect).unwrap();
    assert_eq!(
        rendered.schema, expected,
        "{dialect}\nactual: {}",
        rendered.schema
    );
    assert_eq!(rendered.strict, strict, "{dialect} strict");
    let actual: Vec<(IssueKind, &str)> = rendered
        .issues
        .iter()
        .map(|i| (i.kind, i.path.as_str()))
        .collect();
    assert_eq!(actual, issues, "{dialect} issues: {:#?}", rendered.issues);
}

#[test]
fn search_notes_in_every_dialect() {
    let schema = search_notes::definition().unwrap().parameters().clone();
    expect(
        &schema,
        Dialect::Mcp,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "tags": {
                    "oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "Only notes with one of these tags."
                },
                "order": {"type": "string", "description": "Sort order.", "enum": ["newest", "oldest"]},
                "limit": {
                    "oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
                    "description": "At most this many results."
                }
            },
            "required": ["query", "order"]
        }),
        false,
        &[],
    );
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "tags": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "Only notes with one of these tags."
                },
                "order": {"type": "string", "description": "Sort order.", "enum": ["newest", "oldest"]},
                "limit": {
                    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
                    "description": "At most this many results."
                }
            },
            "required": ["query", "tags", "order", "limit"],
            "additionalProperties": false
        }),
        true,
        &[],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "tags": {
                    "type": "array",
                    "nullable": true,
                    "items": {"type": "string"},
                    "description": "Only notes with one of these tags."
                },
                "order": {"type": "string", "description": "Sort order.", "enum": ["newest", "oldest"]},
                "limit": {
                    "type": "integer",
                    "nullable": true,
                    "minimum": 0,
                    "description": "At most this many results."
                }
            },
            "required": ["query", "order"]
        }),
        false,
        &[],
    );
    expect(
        &schema,
        Dialect::Anthropic,
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "tags": {
                    "oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "description": "Only notes with one of these tags."
                },
                "order": {"type": "string", "description": "Sort order.", "enum": ["newest", "oldest"]},
                "limit": {
                    "oneOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
                    "description": "At most this many results."
                }
            },
            "required": ["query", "order"]
        }),
        false,
        &[],
    );
}

#[test]
fn scope_in_every_dialect() {
    let schema = SCOPE_ARGS.to_parameters_schema().unwrap();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        schema.clone(),
        false,
        &[(
            IssueKind::Unsupported,
            "#/properties/scope/properties/counts/additionalProperties",
        )],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "scope": {
                    "type": "object",
                    "description": "Where to look.",
                    "properties": {
                        "range": {
                            "type": "object",
                            "description": "The lines.",
                            "properties": {
                                "from": {
                                    "type": "integer",
                                    "description": "First line.",
                                    "minimum": 0,
                                    "maximum": u32::MAX
                                },
                                "to": {
                                    "type": "integer",
                                    "nullable": true,
                                    "minimum": 0,
                                    "maximum": u32::MAX,
                                    "description": "Last line (the end of the file when absent)."
                                }
                            },
                            "required": ["from"]
                        },
                        "labels": {
                            "type": "array",
                            "description": "Extra labels.",
                            "items": {"type": "string"}
                        },
                        "counts": {"type": "object", "description": "Counts per word."}
                    },
                    "required": ["range", "counts"]
                }
            },
            "required": ["scope"]
        }),
        false,
        &[(
            IssueKind::Dropped,
            "#/properties/scope/properties/counts/additionalProperties",
        )],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn shape_in_every_dialect() {
    let schema = params::<Wrap<Shape>>();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {"type": "string", "enum": ["Empty"]},
                        {
                            "type": "object",
                            "description": "A circle's radius.",
                            "properties": {"Circle": {"type": "integer", "minimum": 0, "maximum": 255}},
                            "required": ["Circle"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "description": "A rectangle.",
                            "properties": {
                                "Rect": {
                                    "type": "object",
                                    "properties": {
                                        "width": {"type": "integer", "minimum": 0, "maximum": 255},
                                        "height": {
                                            "anyOf": [
                                                {
                                                    "type": "integer",
                                                    "minimum": 0,
                                                    "maximum": 255
                                                },
                                                {"type": "null"}
                                            ]
                                        }
                                    },
                                    "required": ["width", "height"],
                                    "additionalProperties": false
                                }
                            },
                            "required": ["Rect"],
                            "additionalProperties": false
                        }
                    ],
                    "description": "A shape."
                }
            },
            "required": ["v"],
            "additionalProperties": false
        }),
        true,
        &[],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {"type": "string", "enum": ["Empty"], "description": "A shape."},
                        {
                            "type": "object",
                            "description": "A circle's radius.",
                            "properties": {"Circle": {"type": "integer", "minimum": 0, "maximum": 255}},
                            "required": ["Circle"]
                        },
                        {
                            "type": "object",
                            "description": "A rectangle.",
                            "properties": {
                                "Rect": {
                                    "type": "object",
                                    "properties": {
                                        "width": {"type": "integer", "minimum": 0, "maximum": 255},
                                        "height": {
                                            "type": "integer",
                                            "nullable": true,
                                            "minimum": 0,
                                            "maximum": 255
                                        }
                                    },
                                    "required": ["width"]
                                }
                            },
                            "required": ["Rect"]
                        }
                    ]
                }
            },
            "required": ["v"]
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn edit_in_every_dialect() {
    let schema = params::<Wrap<Edit>>();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {
                            "type": "object",
                            "description": "Insert text.",
                            "properties": {
                                "op": {"type": "string", "enum": ["insert"]},
                                "at": {"type": "integer", "minimum": 0, "maximum": u32::MAX},
                                "text": {"type": "string"}
                            },
                            "required": ["op", "at", "text"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "description": "Delete lines.",
                            "properties": {
                                "op": {"type": "string", "enum": ["delete"]},
                                "range": {
                                    "type": "object",
                                    "description": "A closed range of lines.",
                                    "properties": {
                                        "from": {
                                            "type": "integer",
                                            "description": "First line.",
                                            "minimum": 0,
                                            "maximum": u32::MAX
                                        },
                                        "to": {
                                            "anyOf": [
                                                {
                                                    "type": "integer",
                                                    "minimum": 0,
                                                    "maximum": u32::MAX
                                                },
                                                {"type": "null"}
                                            ],
                                            "description": "Last line (the end of the file when absent)."
                                        }
                                    },
                                    "required": ["from", "to"],
                                    "additionalProperties": false
                                }
                            },
                            "required": ["op", "range"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {"op": {"type": "string", "enum": ["clear"]}},
                            "required": ["op"],
                            "additionalProperties": false
                        }
                    ],
                    "description": "An edit."
                }
            },
            "required": ["v"],
            "additionalProperties": false
        }),
        true,
        &[],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {
                            "type": "object",
                            "description": "Insert text.",
                            "properties": {
                                "op": {"type": "string", "enum": ["insert"]},
                                "at": {"type": "integer", "minimum": 0, "maximum": u32::MAX},
                                "text": {"type": "string"}
                            },
                            "required": ["op", "at", "text"]
                        },
                        {
                            "type": "object",
                            "description": "Delete lines.",
                            "properties": {
                                "op": {"type": "string", "enum": ["delete"]},
                                "range": {
                                    "type": "object",
                                    "description": "A closed range of lines.",
                                    "properties": {
                                        "from": {
                                            "type": "integer",
                                            "description": "First line.",
                                            "minimum": 0,
                                            "maximum": u32::MAX
                                        },
                                        "to": {
                                            "type": "integer",
                                            "nullable": true,
                                            "minimum": 0,
                                            "maximum": u32::MAX,
                                            "description": "Last line (the end of the file when absent)."
                                        }
                                    },
                                    "required": ["from"]
                                }
                            },
                            "required": ["op", "range"]
                        },
                        {
                            "type": "object",
                            "properties": {"op": {"type": "string", "enum": ["clear"]}},
                            "required": ["op"],
                            "description": "An edit."
                        }
                    ]
                }
            },
            "required": ["v"]
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn change_in_every_dialect() {
    let schema = params::<Wrap<Change>>();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"t": {"type": "string", "enum": ["Noop"]}, "c": {"type": "null"}},
                            "required": ["t", "c"],
                            "additionalProperties": false
                        },
                        {
                            "type": "object",
                            "properties": {
                                "t": {"type": "string", "enum": ["Rename"]},
                                "c": {"type": "string"}
                            },
                            "required": ["t", "c"],
                            "additionalProperties": false
                        }
                    ],
                    "description": "A change."
                }
            },
            "required": ["v"],
            "additionalProperties": false
        }),
        true,
        &[],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"t": {"type": "string", "enum": ["Noop"]}, "c": {"type": "null"}},
                            "required": ["t"],
                            "description": "A change."
                        },
                        {
                            "type": "object",
                            "properties": {
                                "t": {"type": "string", "enum": ["Rename"]},
                                "c": {"type": "string"}
                            },
                            "required": ["t", "c"],
                            "description": "A change."
                        }
                    ]
                }
            },
            "required": ["v"]
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn loose_in_every_dialect() {
    let schema = params::<Wrap<Option<Loose>>>();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [{"type": "boolean"}, {"type": "string"}, {"type": "null"}],
                    "description": "A loose value."
                }
            },
            "required": ["v"],
            "additionalProperties": false
        }),
        true,
        &[],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "v": {
                    "anyOf": [
                        {"type": "boolean", "nullable": true, "description": "A loose value."},
                        {"type": "string", "nullable": true, "description": "A loose value."}
                    ]
                }
            }
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}
