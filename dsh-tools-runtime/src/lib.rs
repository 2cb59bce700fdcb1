#![doc = include_str!("docs/crate.md")]
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see [package.metadata.docs.rs]) labels each feature-gated item with
// its feature. `doc_cfg` derives the labels from `#[cfg]` (what `doc_auto_cfg` did before it
// was folded into `doc_cfg`; rustc 1.95 rejects `doc_auto_cfg`).
#![cfg_attr(docsrs, feature(doc_cfg))]
// The crate docs link the MCP bridge's types, which exist with the `mcp` feature only; the
// all-features docs (docs.rs's) still fail on any broken link.
#![cfg_attr(
    not(feature = "mcp"),
    allow(
        rustdoc::broken_intra_doc_links,
        reason = "the crate docs link mcp::McpServer, absent without the mcp feature"
    )
)]

// The crate root declares the modules and re-exports the registry's types. Dependencies point
// one way, each module naming only those before it: error, tokens, search, approval, catalog,
// acp, pipeline, registry, extension, dialect, provider, code, mcp (ARCHITECTURE.md;
// tests/tests/architecture/ checks it).

#[cfg(feature = "acp")]
pub mod acp;
pub mod approval;
pub mod catalog;
#[cfg(feature = "code-mode")]
pub mod code;
pub mod dialect;
mod error;
pub mod extension;
#[cfg(feature = "mcp")]
pub mod mcp;
mod pipeline;
#[cfg(feature = "provider")]
pub mod provider;
mod registry;
pub mod search;
pub mod tokens;

pub use dsh_tools;
pub use error::{RegistryError, ToolNotFoundError};
pub use pipeline::{batch, hooks, timeout};
pub use registry::{
    PresentationMode, PromptError, PromptSection, PromptSurface, Registration, RegistryChange,
    RegistryConfig, Scope, TOOL_SEARCH_DEFAULT_LIMIT, TOOL_SEARCH_DESCRIPTION,
    TOOL_SEARCH_MAX_LIMIT, TOOL_SEARCH_NAME, ToolRegistry, ToolRestriction,
};
