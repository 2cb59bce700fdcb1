//! Imported schemas as MCP servers send them: `$schema`, `definitions`/`$defs` with `$ref`,
//! recursion, OpenAPI `nullable`, type arrays, root combinators, open maps.

use serde_json::{Value, json};

use dsh_tools_runtime::dialect::{Dialect, IssueKind};

use super::derived::expect;

pub(crate) fn github_issue() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "owner": {"type": "string", "description": "Repository owner"},
            "labels": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "assignee": {"$ref": "#/definitions/User", "description": "Who to assign"},
            "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
            "due": {"type": ["string", "null"], "format": "date"}
        },
        "required": ["owner"],
        "additionalProperties": false,
        "definitions": {
            "User": {
                "type": "object",
                "properties": {
                    "login": {"type": "string", "minLength": 1},
                    "id": {"type": "integer", "exclusiveMinimum": 0}
                },
                "required": ["login"]
            }
        }
    })
}

pub(crate) fn tree() -> Value {
    json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "description": "A tree node.",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                },
                "required": ["name"]
            }
        }
    })
}

pub(crate) fn openapi() -> Value {
    json!({
        "type": "object",
        "title": "ListArgs",
        "properties": {
            "page": {"type": "integer", "format": "int32", "minimum": 1, "nullable": true},
            "filter": {"type": "object", "nullable": true, "properties": {"q": {"type": "string"}}},
            "size": {"type": "number", "minimum": 0, "exclusiveMinimum": true}
        }
    })
}

pub(crate) fn at_least_one() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "url": {"type": "string", "format": "uri"}
        },
        "anyOf": [{"required": ["id"]}, {"required": ["url"]}]
    })
}

pub(crate) fn root_union() -> Value {
    json!({
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"]},
            {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}}, "required": ["kind", "url"]}
        ]
    })
}

pub(crate) fn all_of_ref() -> Value {
    json!({
        "type": "object",
        "properties": {
            "opts": {"allOf": [{"$ref": "#/$defs/Opts"}], "description": "Options"}
        },
        "$defs": {"Opts": {"type": "object", "title": "Opts", "properties": {"verbose": {"type": "boolean"}}}}
    })
}

pub(crate) fn type_arrays() -> Value {
    json!({
        "type": "object",
        "properties": {
            "value": {"type": ["string", "number", "null"], "minLength": 1, "minimum": 0, "description": "A value."}
        },
        "required": ["value"]
    })
}

pub(crate) fn open_objects() -> Value {
    json!({
        "type": "object",
        "properties": {
            "meta": {"type": "object"},
            "env": {"type": "object", "patternProperties": {"^[A-Z]+$": {"type": "string"}}},
            "any": {}
        }
    })
}

#[test]
fn github_issue_in_every_dialect() {
    let schema = github_issue();
    expect(
        &schema,
        Dialect::Mcp,
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "labels": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "assignee": {"$ref": "#/definitions/User", "description": "Who to assign"},
                "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
                "due": {"type": ["string", "null"], "format": "date"}
            },
            "required": ["owner"],
            "additionalProperties": false,
            "definitions": {
                "User": {
                    "type": "object",
                    "properties": {
                        "login": {"type": "string", "minLength": 1},
                        "id": {"type": "integer", "exclusiveMinimum": 0}
                    },
                    "required": ["login"]
                }
            }
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
                "owner": {"type": "string", "description": "Repository owner"},
                "labels": {"type": ["array", "null"], "items": {"type": "string"}, "minItems": 1},
                "assignee": {
                    "type": ["object", "null"],
                    "description": "Who to assign",
                    "properties": {
                        "login": {"type": "string"},
                        "id": {"type": ["integer", "null"], "exclusiveMinimum": 0}
                    },
                    "required": ["login", "id"],
                    "additionalProperties": false
                },
                "state": {"type": ["string", "null"], "enum": ["open", "closed", null]},
                "due": {"type": ["string", "null"], "format": "date"}
            },
            "required": ["owner", "labels", "assignee", "state", "due"],
            "additionalProperties": false,
            "definitions": {
                "User": {
                    "type": "object",
                    "properties": {
                        "login": {"type": "string"},
                        "id": {"type": ["integer", "null"], "exclusiveMinimum": 0}
                    },
                    "required": ["login", "id"],
                    "additionalProperties": false
                }
            }
        }),
        true,
        &[(
            IssueKind::Dropped,
            "#/definitions/User/properties/login/minLength",
        )],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "labels": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "assignee": {
                    "type": "object",
                    "description": "Who to assign",
                    "properties": {
                        "login": {"type": "string", "minLength": 1},
                        "id": {"type": "integer", "minimum": 1}
                    },
                    "required": ["login"]
                },
                "state": {"type": "string", "enum": ["open", "closed"]},
                "due": {"type": "string", "nullable": true}
            },
            "required": ["owner"]
        }),
        false,
        &[(IssueKind::Dropped, "#/properties/due/format")],
    );
    expect(
        &schema,
        Dialect::Anthropic,
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "labels": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "assignee": {"$ref": "#/definitions/User", "description": "Who to assign"},
                "state": {"type": "string", "enum": ["open", "closed"], "default": "open"},
                "due": {"type": ["string", "null"], "format": "date"}
            },
            "required": ["owner"],
            "additionalProperties": false,
            "definitions": {
                "User": {
                    "type": "object",
                    "properties": {
                        "login": {"type": "string", "minLength": 1},
                        "id": {"type": "integer", "exclusiveMinimum": 0}
                    },
                    "required": ["login"]
                }
            }
        }),
        false,
        &[],
    );
}

#[test]
fn tree_in_every_dialect() {
    let schema = tree();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "required": ["root"],
            "additionalProperties": false,
            "$defs": {
                "Node": {
                    "type": "object",
                    "description": "A tree node.",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Node"}}
                    },
                    "required": ["name", "children"],
                    "additionalProperties": false
                }
            }
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
                "root": {
                    "type": "object",
                    "description": "A tree node.",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {
                            "type": "array",
                            "items": {"type": "object", "description": "A tree node."}
                        }
                    },
                    "required": ["name"]
                }
            },
            "required": ["root"]
        }),
        false,
        &[(
            IssueKind::Degraded,
            "#/$defs/Node/properties/children/items/$ref",
        )],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn openapi_in_every_dialect() {
    let schema = openapi();
    expect(
        &schema,
        Dialect::Mcp,
        json!({
            "type": "object",
            "properties": {
                "page": {"type": ["integer", "null"], "format": "int32", "minimum": 1},
                "filter": {"type": ["object", "null"], "properties": {"q": {"type": "string"}}},
                "size": {"type": "number", "exclusiveMinimum": 0}
            }
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
                "page": {"type": ["integer", "null"], "minimum": 1},
                "filter": {
                    "type": ["object", "null"],
                    "properties": {"q": {"type": ["string", "null"]}},
                    "required": ["q"],
                    "additionalProperties": false
                },
                "size": {"type": ["number", "null"], "exclusiveMinimum": 0}
            },
            "required": ["page", "filter", "size"],
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
                "page": {"type": "integer", "nullable": true, "format": "int32", "minimum": 1},
                "filter": {"type": "object", "nullable": true, "properties": {"q": {"type": "string"}}},
                "size": {"type": "number"}
            }
        }),
        false,
        &[(IssueKind::Dropped, "#/properties/size/exclusiveMinimum")],
    );
    expect(
        &schema,
        Dialect::Anthropic,
        json!({
            "type": "object",
            "properties": {
                "page": {"type": ["integer", "null"], "format": "int32", "minimum": 1},
                "filter": {"type": ["object", "null"], "properties": {"q": {"type": "string"}}},
                "size": {"type": "number", "exclusiveMinimum": 0}
            }
        }),
        false,
        &[],
    );
}

#[test]
fn at_least_one_in_every_dialect() {
    let schema = at_least_one();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {"id": {"type": ["string", "null"]}, "url": {"type": ["string", "null"]}},
            "required": ["id", "url"],
            "additionalProperties": false
        }),
        true,
        &[
            (IssueKind::Dropped, "#/anyOf"),
            (IssueKind::Dropped, "#/properties/url/format"),
        ],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({"type": "object", "properties": {"id": {"type": "string"}, "url": {"type": "string"}}}),
        false,
        &[
            (IssueKind::Dropped, "#/anyOf"),
            (IssueKind::Dropped, "#/properties/url/format"),
        ],
    );
    expect(
        &schema,
        Dialect::Anthropic,
        json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "url": {"type": "string", "format": "uri"}}
        }),
        false,
        &[(IssueKind::Dropped, "#/anyOf")],
    );
}

#[test]
fn root_union_in_every_dialect() {
    let schema = root_union();
    expect(
        &schema,
        Dialect::Mcp,
        json!({
            "type": "object",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": "file"}, "path": {"type": "string"}},
                    "required": ["kind", "path"]
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "url"}, "url": {"type": "string"}},
                    "required": ["kind", "url"]
                }
            ]
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
                "kind": {"type": "string", "enum": ["file", "url"]},
                "path": {"type": ["string", "null"]},
                "url": {"type": ["string", "null"]}
            },
            "required": ["kind", "path", "url"],
            "additionalProperties": false
        }),
        true,
        &[(IssueKind::Degraded, "#/oneOf")],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["file", "url"]},
                "path": {"type": "string"},
                "url": {"type": "string"}
            },
            "required": ["kind"]
        }),
        false,
        &[(IssueKind::Degraded, "#/oneOf")],
    );
    expect(
        &schema,
        Dialect::Anthropic,
        json!({
            "type": "object",
            "properties": {
                "kind": {"enum": ["file", "url"]},
                "path": {"type": "string"},
                "url": {"type": "string"}
            },
            "required": ["kind"]
        }),
        false,
        &[(IssueKind::Degraded, "#/oneOf")],
    );
}

#[test]
fn all_of_ref_in_every_dialect() {
    let schema = all_of_ref();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "opts": {
                    "type": ["object", "null"],
                    "description": "Options",
                    "title": "Opts",
                    "properties": {"verbose": {"type": ["boolean", "null"]}},
                    "required": ["verbose"],
                    "additionalProperties": false
                }
            },
            "required": ["opts"],
            "additionalProperties": false,
            "$defs": {
                "Opts": {
                    "type": "object",
                    "title": "Opts",
                    "properties": {"verbose": {"type": ["boolean", "null"]}},
                    "required": ["verbose"],
                    "additionalProperties": false
                }
            }
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
                "opts": {
                    "type": "object",
                    "description": "Options",
                    "properties": {"verbose": {"type": "boolean"}}
                }
            }
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn type_arrays_in_every_dialect() {
    let schema = type_arrays();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        json!({
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [{"type": "string"}, {"type": "number", "minimum": 0}, {"type": "null"}],
                    "description": "A value."
                }
            },
            "required": ["value"],
            "additionalProperties": false
        }),
        true,
        &[(IssueKind::Dropped, "#/properties/value/minLength")],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [
                        {
                            "type": "string",
                            "nullable": true,
                            "minLength": 1,
                            "description": "A value."
                        },
                        {
                            "type": "number",
                            "nullable": true,
                            "minimum": 0,
                            "description": "A value."
                        }
                    ]
                }
            },
            "required": ["value"]
        }),
        false,
        &[],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}

#[test]
fn open_objects_in_every_dialect() {
    let schema = open_objects();
    expect(&schema, Dialect::Mcp, schema.clone(), false, &[]);
    expect(
        &schema,
        Dialect::OpenAiStrict,
        schema.clone(),
        false,
        &[
            (IssueKind::Unsupported, "#/properties/meta"),
            (IssueKind::Unsupported, "#/properties/env"),
            (IssueKind::Unsupported, "#/properties/env/patternProperties"),
            (IssueKind::Unsupported, "#/properties/any"),
        ],
    );
    expect(
        &schema,
        Dialect::Gemini,
        json!({
            "type": "object",
            "properties": {"meta": {"type": "object"}, "env": {"type": "object"}, "any": {}}
        }),
        false,
        &[(IssueKind::Dropped, "#/properties/env/patternProperties")],
    );
    expect(&schema, Dialect::Anthropic, schema.clone(), false, &[]);
}
