#![doc = include_str!("docs/crate.md")]
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

// The facade (serde's shape): the core's items at the root, Code Mode as `code`. The heavy
// half (swc, QuickJS, Monty) is `dsh-tools-code`, built only with the `code-mode` feature.

#[doc(inline)]
pub use dsh_tools_core::*;

/// Code Mode: the model writes a program against a generated SDK, run in a sandbox whose
/// `tools.*` calls go back through the registry's pipeline (the `dsh-tools-code` crate).
#[cfg(feature = "code-mode")]
pub mod code {
    #[doc(inline)]
    pub use dsh_tools_code::*;
}
