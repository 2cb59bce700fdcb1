#![doc = include_str!("docs/crate.md")]
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see [package.metadata.docs.rs]) labels each feature-gated item with
// its feature. `doc_cfg` derives the labels from `#[cfg]` (what `doc_auto_cfg` did before it
// was folded into `doc_cfg`; rustc 1.95 rejects `doc_auto_cfg`).
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod args;
pub mod collect;
pub mod content;
pub mod definition;
pub mod error;
pub mod exec;
pub mod json;
pub mod present;
pub mod schema;
pub mod subset;
pub mod tool;

#[doc(hidden)]
pub mod __private;

pub use collect::{CollectError, ToolRegistration, ToolSet, collected_tools};
pub use definition::{
    Callers, Loading, ToolAnnotations, ToolBuilder, ToolDefinition, ToolSchemaWire,
};
pub use dsh_tools_macros::{ToolSchema, tool, tool_set};
pub use error::{
    DefinitionError, ErrorCode, ErrorInfo, HarnessError, JsonSchemaError, ToolArgsError, ToolError,
    ToolOutputError,
};
pub use exec::{State, ToolRunContext};
pub use schema::ToolSchema;

// --- content/present re-exports ---
pub use content::{ContentBlock, ContextMessage, ToolResult};
pub use present::{ToolCallView, ToolResultView};

// --- json/subset/args re-exports ---
pub use args::validate_args;
pub use subset::{CompiledSchema, Vocabulary, validate_value};
