//! Provider schema dialects: exact renderings of schemas derived from Rust types and of
//! imported (MCP-style) schemas, the structural invariants of each dialect, value
//! compatibility checked with `jsonschema`, whole-tool wire shapes, and property tests.

#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

#[path = "dialect/authored.rs"]
mod authored;
#[path = "dialect/derived.rs"]
mod derived;
#[path = "dialect/imported.rs"]
mod imported;
#[path = "dialect/invariants.rs"]
mod invariants;
#[path = "dialect/properties.rs"]
mod properties;
#[path = "dialect/tools.rs"]
mod tools;
#[path = "dialect/values.rs"]
mod values;
