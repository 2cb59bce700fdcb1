//! What the macros emit when the input is wrong: the user's item (so IDEs keep working and
//! the function stays callable), the errors, and stubs of the generated items so that code
//! naming them does not pile secondary errors onto the real one (tokio, clap and thiserror do
//! the same).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ItemFn, Signature};

use crate::docs;

/// The tokens followed by the errors.
pub(crate) fn with_error(mut tokens: TokenStream, error: syn::Error) -> TokenStream {
    tokens.extend(error.into_compile_error());
    tokens
}

/// Removes `///` docs from parameters (rustc rejects them there; they are read as property
/// descriptions).
pub(crate) fn strip_param_docs(sig: &mut Signature) {
    for input in &mut sig.inputs {
        match input {
            FnArg::Typed(typed) => docs::strip(&mut typed.attrs),
            FnArg::Receiver(receiver) => docs::strip(&mut receiver.attrs),
        }
    }
}

/// The `#[cfg(...)]` attributes of an item, to put on what is generated for it.
pub(crate) fn cfg_attrs(attrs: &[syn::Attribute]) -> Vec<&syn::Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).collect()
}

/// A companion module whose `definition()` cannot be called: keeps `read_file::NAME` and
/// `read_file::definition()` resolvable while the real errors are fixed.
pub(crate) fn companion_stub(function: &ItemFn, name: &str, krate: &TokenStream) -> TokenStream {
    let ident = &function.sig.ident;
    let vis = &function.vis;
    let cfgs = cfg_attrs(&function.attrs);
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(unreachable_pub, dead_code, reason = "stub emitted next to a #[tool] error")]
        #vis mod #ident {
            pub const NAME: &str = #name;
            pub fn definition() -> ::core::result::Result<#krate::ToolDefinition, #krate::DefinitionError> {
                ::core::unimplemented!("`#[tool]` reported a compile error")
            }
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
            pub struct Tool;
        }
    }
}

/// `impl ToolSet for T` with an uncallable body, next to `#[tool_set]` errors.
pub(crate) fn tool_set_stub(self_ty: &syn::Type, krate: &TokenStream) -> TokenStream {
    quote! {
        impl #krate::ToolSet for #self_ty {
            fn tool_definitions(
                self: ::std::sync::Arc<Self>,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::ToolDefinition>, #krate::DefinitionError> {
                ::core::unimplemented!("`#[tool_set]` reported a compile error")
            }
        }
    }
}

/// `impl ToolSchema for T` accepting anything, next to `#[derive(ToolSchema)]` errors, so uses
/// of the type do not report "`T` has no tool schema" on top of the real error.
pub(crate) fn schema_stub(input: &syn::DeriveInput, krate: &TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #krate::schema::ToolSchema for #ident #ty_generics #where_clause {
            const SCHEMA: #krate::schema::SchemaSpec =
                #krate::schema::SchemaSpec::new(#krate::schema::SpecKind::Any);
        }
    }
}
