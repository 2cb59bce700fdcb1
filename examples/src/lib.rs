//! Examples for `dsh-tools`: a coding tool pack written with `#[tool]`, and the `dsh-tools`
//! command-line host.
//!
//! - [`coding`]: `read_file`, `write_file`, `edit_file`, `list_dir`, `glob`, `grep` and `bash`,
//!   each an ordinary `async fn` with a typed output, model-actionable error messages and UI
//!   cards ([`coding::coding_tools`] builds all seven).
//! - [`cli`]: the `dsh-tools` binary (`list`, `catalog`, `schema check`, `schema validate`,
//!   `args validate`, …).
//!
//! The tools are collected through `inventory`, so a host linking this crate finds them with
//! `dsh_tools::collected_tools()`:
//!
//! ```
//! let tools = dsh_tools::collected_tools().unwrap();
//! assert!(tools.iter().any(|tool| tool.name() == "read_file"));
//! # let _ = dsh_tools_examples::coding::coding_tools;
//! ```

pub mod cli;
pub mod coding;
