//! Procedural macros of [`dsh-tools`](https://docs.rs/dsh-tools): `#[tool]`, `#[tool_set]` and
//! `#[derive(ToolSchema)]`.
//!
//! Use them through the facade (`dsh_tools::{tool, tool_set, ToolSchema}`): the generated code
//! names `::dsh_tools` and its `__private` re-exports, so a crate needs no direct dependency on
//! this one, nor on serde or inventory.
#![warn(missing_docs)]

mod attr;
mod case;
mod constraints;
mod derive;
mod docs;
mod dummy;
mod errors;
mod range;
mod tool;
mod types;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

#[doc = include_str!("docs/tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::free::expand(args.into(), item.into()).into()
}

#[doc = include_str!("docs/tool_set.md")]
#[proc_macro_attribute]
pub fn tool_set(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::set::expand(args.into(), item.into()).into()
}

#[doc = include_str!("docs/derive.md")]
#[proc_macro_derive(ToolSchema, attributes(serde, schema, schemars, validate))]
pub fn derive_tool_schema(item: TokenStream) -> TokenStream {
    derive::expand(item.into()).into()
}
