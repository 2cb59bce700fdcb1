//! Code generation for enums, one function per serde representation.
//!
//! Every branch describes exactly (or more narrowly than) what serde_derive reads for that
//! variant: an externally tagged variant is a one-key object that denies other keys, an
//! internally tagged one is an object whose tag is a `const`, an adjacently tagged one is
//! `{tag, content}`, an untagged one is the variant's own shape.

use proc_macro2::TokenStream;
use quote::quote;

use super::ast::{Container, Style, Variant};
use super::object::{object_kind, required, schema_ref, spec, tag, type_schema};

/// serde's enum representations.
enum Repr<'a> {
    External,
    Internal { tag: &'a str },
    Adjacent { tag: &'a str, content: &'a str },
    Untagged,
}

/// The schema of an enum.
pub(crate) fn enum_schema(
    c: &Container<'_>,
    variants: &[Variant<'_>],
    krate: &TokenStream,
) -> TokenStream {
    let attrs = &c.attrs;
    let repr = match (
        attrs.untagged,
        attrs.tag.as_deref(),
        attrs.content.as_deref(),
    ) {
        (true, _, _) => Repr::Untagged,
        (false, Some(tag), Some(content)) => Repr::Adjacent { tag, content },
        (false, Some(tag), None) => Repr::Internal { tag },
        (false, None, _) => Repr::External,
    };
    let description = c.description.as_deref();
    let s = quote!(#krate::schema);
    let deny = attrs.deny_unknown_fields;
    let mut branches = match repr {
        Repr::External => external(variants, deny, krate),
        Repr::Internal { tag } => variants
            .iter()
            .map(|v| internal(v, tag, deny, krate))
            .collect(),
        Repr::Adjacent { tag, content } => variants
            .iter()
            .map(|v| adjacent(v, tag, content, deny, krate))
            .collect(),
        Repr::Untagged => variants.iter().map(|v| untagged(v, deny, krate)).collect(),
    };
    if branches.len() == 1 {
        let branch = branches.remove(0);
        return match description {
            Some(d) => quote!(#branch.described(#d)),
            None => branch,
        };
    }
    spec(
        quote!(#s::SpecKind::OneOf(&[#(#branches),*])),
        description,
        krate,
    )
}

/// One string member per unit variant.
fn unit_enum(names: &[&str], krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    quote!(#s::SchemaSpec::new(#s::SpecKind::Enum(&[#(#s::Literal::Str(#names)),*])))
}

/// A one-key object `{name: schema}` that denies other keys.
fn single_key(name: &str, schema: TokenStream, krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    let property = required(name, schema, krate);
    quote! {
        #s::SpecKind::Object {
            properties: &[#property],
            flatten: &[],
            additional: #s::Additional::Deny,
        }
    }
}

/// The schema of a variant's content: its newtype field or its named fields.
fn content(v: &Variant<'_>, deny: bool, krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    match (v.style, v.fields.first()) {
        (Style::Newtype, Some(field)) => schema_ref(field.ty, krate),
        (Style::Named, _) => {
            let kind = object_kind(&v.fields, Vec::new(), deny, krate);
            quote!(&#s::SchemaSpec::new(#kind))
        }
        _ => quote!(&<() as #krate::schema::ToolSchema>::SCHEMA),
    }
}

fn external(variants: &[Variant<'_>], deny: bool, krate: &TokenStream) -> Vec<TokenStream> {
    let units: Vec<&str> = variants
        .iter()
        .filter(|v| v.style == Style::Unit)
        .map(|v| v.wire.as_str())
        .collect();
    if units.len() == variants.len() {
        return vec![unit_enum(&units, krate)];
    }
    let mut branches = Vec::new();
    let mut units_placed = false;
    for v in variants {
        if v.style == Style::Unit {
            if !units_placed {
                branches.push(unit_enum(&units, krate));
                units_placed = true;
            }
            continue;
        }
        let kind = single_key(&v.wire, content(v, deny, krate), krate);
        branches.push(spec(kind, v.description.as_deref(), krate));
    }
    branches
}

fn internal(v: &Variant<'_>, tag_name: &str, deny: bool, krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    let tag = tag(tag_name, &v.wire, true, krate);
    let description = v.description.as_deref();
    match (v.style, v.fields.first()) {
        (Style::Named, _) => spec(
            object_kind(&v.fields, vec![tag], deny, krate),
            description,
            krate,
        ),
        (Style::Newtype, Some(field)) => {
            let inner = schema_ref(field.ty, krate);
            let kind = quote! {
                #s::SpecKind::Object {
                    properties: &[#tag],
                    flatten: &[#inner],
                    additional: #krate::__private::internal_newtype_additional(#deny, #inner),
                }
            };
            spec(kind, description, krate)
        }
        _ => {
            let additional = if deny { quote!(Deny) } else { quote!(Allow) };
            let kind = quote! {
                #s::SpecKind::Object {
                    properties: &[#tag],
                    flatten: &[],
                    additional: #s::Additional::#additional,
                }
            };
            spec(kind, description, krate)
        }
    }
}

fn adjacent(
    v: &Variant<'_>,
    tag_name: &str,
    content_name: &str,
    deny: bool,
    krate: &TokenStream,
) -> TokenStream {
    let s = quote!(#krate::schema);
    let tag = tag(tag_name, &v.wire, true, krate);
    let content_property = match v.style {
        // serde reads a unit variant's content, when present, as `null`.
        Style::Unit => quote! {
            #s::Property::new(#content_name, &<() as #s::ToolSchema>::SCHEMA).optional()
        },
        _ => required(content_name, content(v, deny, krate), krate),
    };
    let additional = if deny { quote!(Deny) } else { quote!(Allow) };
    let kind = quote! {
        #s::SpecKind::Object {
            properties: &[#tag, #content_property],
            flatten: &[],
            additional: #s::Additional::#additional,
        }
    };
    spec(kind, v.description.as_deref(), krate)
}

fn untagged(v: &Variant<'_>, deny: bool, krate: &TokenStream) -> TokenStream {
    let s = quote!(#krate::schema);
    let description = v.description.as_deref();
    match (v.style, v.fields.first()) {
        (Style::Newtype, Some(field)) => type_schema(field.ty, description, krate),
        (Style::Named, _) => spec(
            object_kind(&v.fields, Vec::new(), deny, krate),
            description,
            krate,
        ),
        _ => spec(quote!(#s::SpecKind::Null), description, krate),
    }
}
