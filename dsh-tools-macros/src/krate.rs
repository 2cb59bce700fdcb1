//! Where the generated code finds `dsh_tools`: the crate the caller depends on.
//!
//! A crate that depends on `dsh-tools` (under any name) gets `::dsh_tools` (or its rename). A host
//! that depends only on `dsh-tools-runtime` gets `::dsh_tools_runtime::dsh_tools`, the facade's
//! re-export, so `dsh_tools_runtime::tool` works without a second dependency. `crate = "…"` on
//! the attribute overrides both.

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// The path of `dsh_tools` as the calling crate can name it.
pub(crate) fn default_path() -> TokenStream {
    if let Ok(found) = crate_name("dsh-tools") {
        return found_path(found, "dsh_tools");
    }
    match crate_name("dsh-tools-runtime") {
        Ok(found) => {
            let runtime = found_path(found, "dsh_tools_runtime");
            quote!(#runtime::dsh_tools)
        }
        // No manifest (a build outside cargo) or neither dependency: name the crate as it is
        // published; the compiler then says that `dsh_tools` is missing.
        Err(_) => quote!(::dsh_tools),
    }
}

/// `::name` for a dependency; for the crate itself (its tests, examples and doctests, which
/// are separate crates), its published name.
fn found_path(found: FoundCrate, published: &str) -> TokenStream {
    let name = match found {
        FoundCrate::Itself => published.to_owned(),
        FoundCrate::Name(name) => name,
    };
    let ident = Ident::new(&name, Span::call_site());
    quote!(::#ident)
}
