//! `#[derive(ToolSchema)]`.
//!
//! - [`attr`]: `#[serde(...)]` as serde_derive reads it;
//! - [`ast`]: the checked type (wire names, flags);
//! - [`object`] / [`enums`]: the `SchemaSpec` expressions.

mod ast;
mod attr;
mod enums;
mod object;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, GenericParam, parse_quote};

use crate::dummy;
use crate::errors::Errors;
use ast::{Container, Data};

/// Expands `#[derive(ToolSchema)]`.
pub(crate) fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let krate = crate::krate::default_path();
    let mut errors = Errors::new();
    let container = Container::from_ast(&input, &mut errors);
    match (errors.finish(), container) {
        (Ok(()), Some(container)) => implementation(&container, &krate),
        (result, _) => {
            let mut out = dummy::schema_stub(&input, &krate);
            if let Err(error) = result {
                out.extend(error.into_compile_error());
            }
            out
        }
    }
}

fn implementation(c: &Container<'_>, krate: &TokenStream) -> TokenStream {
    let schema = match &c.data {
        Data::Struct(style, fields) => object::struct_schema(c, *style, fields, krate),
        Data::Enum(variants) => enums::enum_schema(c, variants, krate),
    };
    let mut generics = c.input.generics.clone();
    let bounded: Vec<syn::Ident> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect();
    let where_clause = generics.make_where_clause();
    for ident in bounded {
        where_clause
            .predicates
            .push(parse_quote!(#ident: #krate::schema::ToolSchema));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let ident = c.ident();
    let name = ident.to_string();
    // Named after the type, so that a recursive type is emitted once under `$defs`.
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::schema::ToolSchema for #ident #ty_generics #where_clause {
            const SCHEMA: #krate::schema::SchemaSpec =
                (#schema).named(#name, || ::core::any::type_name::<Self>());
        }
    }
}
