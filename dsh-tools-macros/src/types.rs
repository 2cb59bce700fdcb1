//! Syntactic type inspection. Macros see tokens, not types: these helpers recognise types by
//! the last segment of their path, the way rmcp and serde do.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::visit::Visit;
use syn::{GenericArgument, PathArguments, Type, TypePath};

/// Peels `(T)` and invisible groups.
pub(crate) fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Paren(inner) => peel(&inner.elem),
        Type::Group(inner) => peel(&inner.elem),
        _ => ty,
    }
}

/// The last path segment of a plain path type (`a::b::C<T>` → `C<T>`).
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match peel(ty) {
        Type::Path(TypePath {
            qself: None, path, ..
        }) => path.segments.last(),
        _ => None,
    }
}

/// Whether the type's last path segment is `name` (with any generic arguments).
pub(crate) fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == name)
}

/// The type arguments of the last segment, in order (`Result<T, E>` → `[T, E]`).
pub(crate) fn type_args(ty: &Type) -> Vec<&Type> {
    let Some(segment) = last_segment(ty) else {
        return Vec::new();
    };
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return Vec::new();
    };
    args.args
        .iter()
        .filter_map(|arg| match arg {
            GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
        .collect()
}

/// Whether the type is `()`.
pub(crate) fn is_unit(ty: &Type) -> bool {
    matches!(peel(ty), Type::Tuple(tuple) if tuple.elems.is_empty())
}

/// Whether the type is `Option<_>` (syntactically).
pub(crate) fn is_option(ty: &Type) -> bool {
    is_named(ty, "Option") && type_args(ty).len() == 1
}

/// Whether the type is `Vec<ContentBlock>`: a tool returning content blocks.
pub(crate) fn is_content(ty: &Type) -> bool {
    is_named(ty, "Vec")
        && matches!(type_args(ty).as_slice(), [item] if is_named(item, "ContentBlock"))
}

/// What a type mentions that a `#[tool]` parameter may not.
#[derive(Default)]
pub(crate) struct Mentions {
    /// The first `impl Trait` inside the type.
    pub(crate) impl_trait: Option<TokenStream>,
    /// The first reference inside the type.
    pub(crate) reference: Option<TokenStream>,
    /// The first `Self` inside the type.
    pub(crate) self_type: Option<TokenStream>,
}

impl<'ast> Visit<'ast> for Mentions {
    fn visit_type_impl_trait(&mut self, node: &'ast syn::TypeImplTrait) {
        self.impl_trait
            .get_or_insert_with(|| node.to_token_stream());
    }

    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        self.reference.get_or_insert_with(|| node.to_token_stream());
        syn::visit::visit_type_reference(self, node);
    }

    fn visit_path(&mut self, node: &'ast syn::Path) {
        if let Some(first) = node.segments.first()
            && first.ident == "Self"
        {
            self.self_type
                .get_or_insert_with(|| first.ident.to_token_stream());
        }
        syn::visit::visit_path(self, node);
    }

    fn visit_qself(&mut self, node: &'ast syn::QSelf) {
        self.self_type
            .get_or_insert_with(|| node.ty.to_token_stream());
        syn::visit::visit_qself(self, node);
    }
}

/// The first relative path inside `ty` that starts with `ident` (a type the generated code
/// would shadow).
pub(crate) fn first_segment_named(ty: &Type, ident: &str) -> Option<TokenStream> {
    struct Finder<'a> {
        ident: &'a str,
        found: Option<TokenStream>,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_path(&mut self, node: &'ast syn::Path) {
            if node.leading_colon.is_none()
                && let Some(first) = node.segments.first()
                && first.ident == self.ident
            {
                self.found.get_or_insert_with(|| node.to_token_stream());
            }
            syn::visit::visit_path(self, node);
        }
    }
    let mut finder = Finder { ident, found: None };
    finder.visit_type(ty);
    finder.found
}

/// Scans a type for what [`Mentions`] tracks.
pub(crate) fn mentions(ty: &Type) -> Mentions {
    let mut mentions = Mentions::default();
    mentions.visit_type(ty);
    mentions
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    #[test]
    fn recognises_by_last_segment() {
        let ty: Type = parse_quote!(std::result::Result<u8, String>);
        assert!(is_named(&ty, "Result"));
        assert_eq!(type_args(&ty).len(), 2);
        assert!(is_option(&parse_quote!(Option<u8>)));
        assert!(!is_option(&parse_quote!(Optional<u8>)));
        assert!(is_unit(&parse_quote!(())));
        assert!(is_content(&parse_quote!(Vec<dsh_tools::ContentBlock>)));
        assert!(!is_content(&parse_quote!(Vec<String>)));
    }

    #[test]
    fn finds_impl_trait_references_and_self() {
        let m = mentions(&parse_quote!(Vec<impl Into<String>>));
        assert!(m.impl_trait.is_some() && m.reference.is_none());
        let m = mentions(&parse_quote!(Option<&'static str>));
        assert!(m.reference.is_some());
        let m = mentions(&parse_quote!(Vec<Self>));
        assert!(m.self_type.is_some());
        let m = mentions(&parse_quote!(<Self as Tr>::Out));
        assert!(m.self_type.is_some());
        let m = mentions(&parse_quote!(std::collections::HashMap<String, u8>));
        assert!(m.impl_trait.is_none() && m.reference.is_none() && m.self_type.is_none());
    }

    #[test]
    fn finds_shadowed_names() {
        assert!(first_segment_named(&parse_quote!(Vec<Args>), "Args").is_some());
        assert!(first_segment_named(&parse_quote!(Args::Inner), "Args").is_some());
        assert!(first_segment_named(&parse_quote!(crate::Args), "Args").is_none());
        assert!(first_segment_named(&parse_quote!(::x::Args), "Args").is_none());
    }
}
