//! The core of `dsh-tools-runtime`: the tool registry (a global layer and agent scopes), the
//! execution pipeline (policies, guards, approval, timeouts, parallel batches, result budgets),
//! tool search, token counts, the provider dialects and turns, ACP tool cards, the markdown
//! catalog and the MCP bridge — everything but Code Mode, which builds on this crate's public
//! [`extension`] API in `dsh-tools-code`.
//!
//! Hosts normally depend on `dsh-tools-runtime`, which re-exports this crate at its root (and
//! Code Mode as `dsh_tools_runtime::code` with its default `code-mode` feature); the examples
//! below are written that way. A host that wants only native tools depends on the runtime
//! without default features, or on this crate.
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see [package.metadata.docs.rs]) labels each feature-gated item with
// its feature. `doc_cfg` derives the labels from `#[cfg]` (what `doc_auto_cfg` did before it
// was folded into `doc_cfg`; rustc 1.95 rejects `doc_auto_cfg`).
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate root declares the modules and re-exports the registry's types. Dependencies point
// one way, each module naming only those before it: error, tokens, search, approval, catalog,
// acp, pipeline, registry, extension, dialect, provider, mcp (ARCHITECTURE.md;
// tests/tests/architecture/ checks it).

#[cfg(feature = "acp")]
pub mod acp;
pub mod approval;
pub mod catalog;
pub mod dialect;
mod error;
pub mod extension;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "otel")]
mod otel;
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
