//! `#[tool_set]` on an inherent `impl` block: its `#[tool]` methods become tools that share one
//! instance (`impl ToolSet for T`), with their argument structs in a companion module
//! `<snake_case_type>_tools`.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt as _;
use syn::{Attribute, ImplItem, ImplItemFn, ItemImpl, Type};

use super::check;
use super::codegen::{self, Callee};
use super::sig::{self, Site, ToolSig};
use crate::attr::{ToolOptions, fallback_krate, house_style};
use crate::case::{pascal_case, snake_case};
use crate::dummy;
use crate::errors::Errors;
use crate::types;

/// The options of `#[tool_set(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
struct ToolSetOptions {
    /// The path of the `dsh_tools` crate (default `::dsh_tools`).
    #[darling(rename = "crate")]
    krate: Option<syn::Path>,
}

/// Whether an attribute is `#[tool]` / `#[tool(...)]` / `#[dsh_tools::tool(...)]`.
fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// One `#[tool]` method.
struct Method {
    sig: ToolSig,
    args: syn::Ident,
    /// The attribute's path as written (`tool`, `dsh_tools::tool`).
    attr_path: syn::Path,
    /// The method's `#[cfg(...)]` attributes.
    cfgs: Vec<Attribute>,
}

/// Expands `#[tool_set(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut block: ItemImpl = match syn::parse2(item.clone()) {
        Ok(block) => block,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "`#[tool_set]` applies to an inherent `impl` block whose `#[tool]` methods take `&self`",
            );
            return dummy::with_error(item, error);
        }
    };
    let mut errors = Errors::new();
    let options = errors.handle(
        NestedMeta::parse_meta_list(args.clone())
            .map_err(darling::Error::from)
            .and_then(|items| ToolSetOptions::from_list(&items))
            .map_err(|e| house_style(e, "#[tool_set]", &["crate"])),
    );
    let krate = match options.and_then(|o| o.krate) {
        Some(path) => quote!(#path),
        None => fallback_krate(&args),
    };
    if let Some((path, _)) = &block.trait_ {
        errors.spanned(
            path,
            "`#[tool_set]` applies to an inherent impl block, not a trait impl",
        );
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        errors.spanned(
            &block.generics,
            "`#[tool_set]` impl blocks cannot be generic: a tool set is one concrete state type",
        );
    }
    let type_name = match types::peel(&block.self_ty) {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.unraw())
        }
        _ => None,
    };
    if type_name.is_none() {
        errors.spanned(
            &block.self_ty,
            "`#[tool_set]` needs a named type (`impl Workspace { .. }`)",
        );
    }
    let methods = methods(&mut block, &mut errors);
    let generated: Vec<(String, &str)> = methods
        .iter()
        .map(|m| (m.args.to_string(), "the arguments struct"))
        .collect();
    for method in &methods {
        check::shadowing(&method.sig, &generated, false, &mut errors);
    }
    if methods.is_empty() && errors.is_empty() {
        errors.spanned(
            &block.self_ty,
            "`#[tool_set]` found no `#[tool]` method in this impl block",
        );
    }
    let self_ty = &block.self_ty;
    let attr_uses = attr_uses(&methods);
    match (errors.finish(), type_name) {
        (Ok(()), Some(type_name)) => {
            let generated = generate(&methods, self_ty, &type_name, &krate);
            quote!(#block #attr_uses #generated)
        }
        (Err(error), _) => {
            let mut out = dummy::with_error(quote!(#block #attr_uses), error);
            if block.generics.params.is_empty() && block.trait_.is_none() {
                out.extend(dummy::tool_set_stub(self_ty, &krate));
            }
            out
        }
        (Ok(()), None) => quote!(#block #attr_uses),
    }
}

/// The `#[tool]` attributes are consumed here: this keeps the user's `use dsh_tools::tool`
/// counted as used.
fn attr_uses(methods: &[Method]) -> TokenStream {
    let uses = methods.iter().map(|m| {
        let path = &m.attr_path;
        quote!(#[allow(unused_imports)] use #path as _;)
    });
    quote!(const _: () = { #(#uses)* };)
}

/// Finds the `#[tool]` methods, strips their tool attributes and parameter docs, and checks them.
fn methods(block: &mut ItemImpl, errors: &mut Errors) -> Vec<Method> {
    let mut methods = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(function) = item else {
            continue;
        };
        let tool_attrs: Vec<Attribute> = function
            .attrs
            .iter()
            .filter(|a| is_tool_attr(a))
            .cloned()
            .collect();
        let Some(first) = tool_attrs.first() else {
            continue;
        };
        for extra in &tool_attrs[1..] {
            errors.spanned(extra, "duplicate `#[tool]` attribute");
        }
        function.attrs.retain(|a| !is_tool_attr(a));
        let options = ToolOptions::from_attribute(&first.meta, &mut *errors).unwrap_or_default();
        if let Some(krate) = &options.krate {
            errors.spanned(
                krate,
                "set `crate` on `#[tool_set(crate = \"...\")]`, not on its methods",
            );
        }
        let attr_path = first.path().clone();
        methods.push(method(function, options, attr_path, errors));
    }
    methods
}

fn method(
    function: &mut ImplItemFn,
    options: ToolOptions,
    attr_path: syn::Path,
    errors: &mut Errors,
) -> Method {
    let sig = sig::analyse(
        &function.sig,
        &function.attrs,
        options,
        Site::Method,
        errors,
    );
    dummy::strip_param_docs(&mut function.sig);
    let args = format_ident!("{}Args", pascal_case(&sig.ident.unraw().to_string()));
    let cfgs = dummy::cfg_attrs(&function.attrs)
        .into_iter()
        .cloned()
        .collect();
    Method {
        sig,
        args,
        attr_path,
        cfgs,
    }
}

fn generate(
    methods: &[Method],
    self_ty: &Type,
    type_name: &syn::Ident,
    krate: &TokenStream,
) -> TokenStream {
    let module = format_ident!("{}_tools", snake_case(&type_name.to_string()));
    let module_doc = format!(
        "Argument structs of the `#[tool]` methods of `{type_name}`, generated by `#[tool_set]`."
    );
    let structs = methods.iter().map(|m| {
        let cfgs = &m.cfgs;
        codegen::args_struct(&m.sig, krate, &m.args, &quote!(#(#cfgs)*))
    });
    let definitions = methods.iter().map(|m| {
        let cfgs = &m.cfgs;
        let args_struct = &m.args;
        let assertions = codegen::assertions(&m.sig, krate, true);
        let builder = codegen::builder(
            &m.sig,
            krate,
            &quote!(#module::#args_struct),
            Callee::Method(&m.sig.ident),
        );
        quote! {
            #(#cfgs)*
            {
                #assertions
                let __this = ::std::sync::Arc::clone(&self);
                __tools.push((#builder)?);
            }
        }
    });
    quote! {
        #[doc = #module_doc]
        #[allow(
            unreachable_pub,
            unused_imports,
            reason = "generated by #[tool_set]: the argument structs are public for presenters"
        )]
        pub mod #module {
            use super::*;
            #(#structs)*
        }

        impl #krate::ToolSet for #self_ty {
            fn tool_definitions(
                self: ::std::sync::Arc<Self>,
            ) -> ::core::result::Result<::std::vec::Vec<#krate::ToolDefinition>, #krate::DefinitionError> {
                let mut __tools = ::std::vec::Vec::new();
                #(#definitions)*
                ::core::result::Result::Ok(__tools)
            }
        }
    }
}
