// The docs' examples use the facade, which depends on this crate: they are hidden from this
// crate's doctest collection and run as the doctests of `dsh-tools-tests` (tests/src/lib.rs).
#![cfg_attr(not(doctest), doc = include_str!("docs/crate.md"))]
#![warn(missing_docs)]

mod attr;
mod case;
mod constraints;
mod derive;
mod docs;
mod dummy;
mod errors;
mod krate;
mod range;
mod tool;
mod types;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

#[cfg_attr(not(doctest), doc = include_str!("docs/tool.md"))]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::free::expand(args.into(), item.into()).into()
}

#[cfg_attr(not(doctest), doc = include_str!("docs/tool_set.md"))]
#[proc_macro_attribute]
pub fn tool_set(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::set::expand(args.into(), item.into()).into()
}

#[cfg_attr(not(doctest), doc = include_str!("docs/derive.md"))]
#[proc_macro_derive(ToolSchema, attributes(serde, schema, schemars, validate))]
pub fn derive_tool_schema(item: TokenStream) -> TokenStream {
    derive::expand(item.into()).into()
}
