//! The TypeScript SDK of Code Mode (`docs/CONTRACTS.md`, "The SDK" and "TypeScript types"): the
//! text the model writes its `run_code` programs against.
//!
//! - [`json_schema_to_ts`]: one JSON Schema as one TypeScript type (text). Inside the reference
//!   subset the text is exactly the reference's; beyond it, real-world schemas (`anyOf`,
//!   `allOf`, `$ref`/`$defs`, type arrays, `nullable`, formats and bounds …) keep their types,
//!   and what cannot be typed degrades to `unknown` where it stands. A `$ref` cycle is cut with
//!   `unknown` in this text; the SDK declares it as a named recursive alias (`$TreeEntry`).
//! - [`render_tools_sdk`]: the `tools:sdk` prompt section — [`INSTRUCTIONS`] and the
//!   declarations (`JsonValue`, `JsonObject`, `ToolArgsMap`, `ToolOutputMap` of the typed
//!   outputs, `ToolName`, `ToolCallError`, `tools`), built as a swc TypeScript AST and printed by
//!   `swc_ecma_codegen` in a compact layout (every token of it is in the model's context).
//!
//! - [`SdkCache`]: the same section for a set of tool definitions, re-printing only the tools
//!   it has not printed yet (a registry keeps one for all its scopes).
//!
//! How it works: a schema is lowered once into a flat arena of type nodes (`ir`) — by the
//! reference transcription (`reference`) when the schema lies in the subset, else by the wide
//! lowering (`wide`, `shape`, `refs`, `doc`). The arena is printed either as text (`text`) or
//! as swc AST (`ast`, `nodes`, `print`). Every traversal is iterative or depth-capped, so deep
//! schemas cannot overflow the stack. The SDK prints each tool's share on its own (`fragment`:
//! its map members and aliases, alias names as placeholders) and assembles the shares
//! (`assemble`: alias numbering, the fixed declarations); `cache` keeps the shares per tool
//! definition.
//!
//! ```
//! use dsh_tools_runtime::code::sdk::{SdkTool, json_schema_to_ts, render_tools_sdk};
//! use serde_json::json;
//!
//! assert_eq!(json_schema_to_ts(&json!({"type": ["string", "null"]}), 0), "string | null");
//! let sdk = render_tools_sdk(&[]);
//! assert!(sdk.contains("interface ToolArgsMap {}\n\ninterface ToolOutputMap {}"));
//! ```

mod assemble;
mod ast;
mod cache;
pub(crate) mod doc;
mod fixed;
mod fragment;
mod instructions;
mod ir;
mod keywords;
mod nodes;
mod print;
mod reference;
mod refs;
mod render;
mod shape;
mod signature;
mod text;
mod ts_type;
mod wide;

pub use cache::{RenderedSdk, SdkCache};
pub use instructions::INSTRUCTIONS;
pub use render::sdk_declarations_whole;
pub use render::{SdkTool, render_tools_sdk, sdk_declarations, sdk_tool_from};
pub(crate) use signature::signature;
pub use ts_type::json_schema_to_ts;
pub use ts_type::json_schema_to_ts_wide;
