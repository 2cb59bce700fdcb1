//! The TypeScript SDK of Code Mode (`docs/CONTRACTS.md`, "The SDK" and "TypeScript types"): the
//! text the model writes its `run_code` programs against.
//!
//! - [`json_schema_to_ts`]: one JSON Schema as one TypeScript type (text). Inside the reference
//!   subset the text is exactly the reference's; beyond it, real-world schemas (`anyOf`,
//!   `allOf`, `$ref`/`$defs`, type arrays, `nullable`, formats and bounds …) keep their types,
//!   and what cannot be typed degrades to `unknown` where it stands. A `$ref` cycle is cut with
//!   `unknown` in this text; the SDK declares it as a named recursive alias (`$TreeEntry`).
//! - [`render_tools_sdk`]: the `tools:sdk` prompt section — [`INSTRUCTIONS`] and the
//!   declarations (`JsonValue`, `ToolArgsMap`, `ToolOutputMap` of the typed outputs, `ToolName`,
//!   `ToolCallError`, `tools`), built as a swc TypeScript AST and printed by `swc_ecma_codegen`.
//!
//! How it works: a schema is lowered once into a flat arena of type nodes (`ir`) — by the
//! reference transcription (`reference`) when the schema lies in the subset, else by the wide
//! lowering (`wide`, `shape`, `refs`, `doc`). The arena is printed either as text (`text`) or
//! as swc AST (`ast`, `print`). Every traversal is iterative or depth-capped, so deep schemas
//! cannot overflow the stack.
//!
//! ```
//! use dsh_tools_runtime::code::sdk::{SdkTool, json_schema_to_ts, render_tools_sdk};
//! use serde_json::json;
//!
//! assert_eq!(json_schema_to_ts(&json!({"type": ["string", "null"]}), 0), "string | null");
//! let sdk = render_tools_sdk(&[]);
//! assert!(sdk.contains("interface ToolArgsMap {}\n\ninterface ToolOutputMap {}"));
//! ```

mod ast;
mod doc;
mod instructions;
mod ir;
mod keywords;
mod print;
mod reference;
mod refs;
mod render;
mod shape;
mod text;
mod ts_type;
mod wide;

pub use instructions::INSTRUCTIONS;
pub use render::{SdkTool, render_tools_sdk, sdk_declarations, sdk_tool_from};
pub use ts_type::json_schema_to_ts;
#[doc(hidden)]
pub use ts_type::json_schema_to_ts_wide;
