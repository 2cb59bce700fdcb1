//! `#[tool]` and `#[tool_set]`.
//!
//! - [`sig`]: the front end (a signature and its options, checked);
//! - [`check`]: compile-time checks of the options;
//! - [`codegen`]: the arguments struct, assertions and builder chain;
//! - [`free`] / [`set`]: the two expansions;
//! - [`value`]: a free tool's `Tool` struct and its `impl dsh_tools::tool::Tool`.

mod check;
mod codegen;
pub(crate) mod free;
pub(crate) mod set;
mod sig;
mod value;
