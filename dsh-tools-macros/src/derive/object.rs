//! Code generation for structs and for the objects inside enum variants.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::ast::{Container, Field, Style};

/// `SchemaSpec::new(kind)`, with a description when there is one.
pub(crate) fn spec(
    kind: TokenStream,
    description: Option<&str>,
    krate: &TokenStream,
) -> TokenStream {
    let described = description.map(|d| quote!(.described(#d)));
    quote!(#krate::schema::SchemaSpec::new(#kind) #described)
}

/// A type's own schema, re-described when `description` is given.
pub(crate) fn type_schema(
    ty: &syn::Type,
    description: Option<&str>,
    krate: &TokenStream,
) -> TokenStream {
    let described = description.map(|d| quote!(.described(#d)));
    quote_spanned!(ty.span()=> <#ty as #krate::schema::ToolSchema>::SCHEMA #described)
}

/// `&<T as ToolSchema>::SCHEMA`, spanned on the type so a missing impl is reported there.
pub(crate) fn schema_ref(ty: &syn::Type, krate: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> &<#ty as #krate::schema::ToolSchema>::SCHEMA)
}

/// A property that must be present whatever its schema (an enum's variant key or content).
pub(crate) fn required(name: &str, schema: TokenStream, krate: &TokenStream) -> TokenStream {
    quote! {
        #krate::schema::Property {
            name: #name,
            schema: #schema,
            required: true,
            description: ::core::option::Option::None,
        }
    }
}

/// A `const` string property: an enum's tag (required) or a struct's tag (optional: serde
/// writes it and ignores it when reading).
pub(crate) fn tag(name: &str, value: &str, required: bool, krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    let optional = (!required).then(|| quote!(.optional()));
    quote! {
        #s::Property::new(
            #name,
            &#s::SchemaSpec::new(#s::SpecKind::Const(#s::Literal::Str(#value))),
        ) #optional
    }
}

fn property(field: &Field<'_>, krate: &TokenStream) -> TokenStream {
    let ty = field.ty;
    let wire = &field.wire;
    let described = field.description.as_deref().map(|d| quote!(.described(#d)));
    let optional = field.default.then(|| quote!(.optional()));
    let base = quote_spanned!(ty.span()=> <#ty as #krate::schema::ToolSchema>::SCHEMA);
    let schema = field.constraints.apply(base, krate);
    quote_spanned! {ty.span()=>
        #krate::schema::Property::new(#wire, &#schema)
            #described #optional
    }
}

/// How undeclared keys are treated: plain `Allow`/`Deny`, or the facade's const check when
/// flattened fields or aliases make it depend on the other specs.
fn additional(
    deny: bool,
    alias: bool,
    flatten: &[TokenStream],
    krate: &TokenStream,
) -> TokenStream {
    let s = quote!(#krate::schema);
    match (flatten.is_empty(), alias, deny) {
        (true, false, true) => quote!(#s::Additional::Deny),
        (true, false, false) => quote!(#s::Additional::Allow),
        _ => quote!(#krate::__private::object_additional(#deny, #alias, &[#(#flatten),*])),
    }
}

/// `SpecKind::Object { .. }` of named fields, after the `leading` properties (tags).
pub(crate) fn object_kind(
    fields: &[Field<'_>],
    leading: Vec<TokenStream>,
    deny: bool,
    krate: &TokenStream,
) -> TokenStream {
    let mut properties = leading;
    properties.extend(
        fields
            .iter()
            .filter(|f| !f.flatten)
            .map(|f| property(f, krate)),
    );
    let flatten: Vec<TokenStream> = fields
        .iter()
        .filter(|f| f.flatten)
        .map(|f| schema_ref(f.ty, krate))
        .collect();
    let alias = fields.iter().any(|f| f.alias);
    let additional = additional(deny, alias, &flatten, krate);
    quote! {
        #krate::schema::SpecKind::Object {
            properties: &[#(#properties),*],
            flatten: &[#(#flatten),*],
            additional: #additional,
        }
    }
}

/// The schema of a struct.
pub(crate) fn struct_schema(
    c: &Container<'_>,
    style: Style,
    fields: &[Field<'_>],
    krate: &TokenStream,
) -> TokenStream {
    let description = c.description.as_deref();
    match style {
        Style::Named if c.attrs.transparent => match fields.first() {
            Some(field) => type_schema(field.ty, description, krate),
            None => spec(quote!(#krate::schema::SpecKind::Any), description, krate),
        },
        Style::Named => {
            let leading = c
                .attrs
                .tag
                .as_deref()
                .map(|name| tag(name, &c.ser_name, false, krate))
                .into_iter()
                .collect();
            let kind = object_kind(fields, leading, c.attrs.deny_unknown_fields, krate);
            spec(kind, description, krate)
        }
        Style::Newtype => match fields.first() {
            Some(field) => type_schema(field.ty, description, krate),
            None => spec(quote!(#krate::schema::SpecKind::Null), description, krate),
        },
        Style::Unit => spec(quote!(#krate::schema::SpecKind::Null), description, krate),
    }
}
