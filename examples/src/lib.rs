//! Examples for `dsh-tools`: a coding tool pack written with `#[tool]` (the tools the
//! `dsh-tools` command-line host, package `dsh-tools-cli`, serves).
//!
//! - [`coding`]: `read_file`, `write_file`, `edit_file`, `list_dir`, `glob`, `grep` and `bash`,
//!   each an ordinary `async fn` with a typed output, model-actionable error messages and UI
//!   cards ([`coding::coding_tools`] builds all seven).
//!
//! The tools are collected through `inventory`, so a host linking this crate finds them with
//! `dsh_tools::collected_tools()`:
//!
//! ```
//! let tools = dsh_tools::collected_tools().unwrap();
//! assert!(tools.iter().any(|tool| tool.name() == "read_file"));
//! # let _ = dsh_tools_examples::coding::coding_tools;
//! ```

pub mod coding;
