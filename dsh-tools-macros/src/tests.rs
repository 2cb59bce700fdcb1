//! Expansion tests: the macros run on token streams, outside a compiler. They check what is
//! emitted and which errors are reported together; the trybuild suite of `dsh-tools-tests`
//! checks the same errors as rustc renders them.

use proc_macro2::TokenStream;
use quote::quote;

/// The messages of the `compile_error!`s in an expansion.
fn errors(out: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(out.clone()).expect("the expansion parses as items");
    let mut messages = Vec::new();
    let text = out.to_string();
    for (i, _) in text.match_indices("compile_error") {
        let rest = &text[i..];
        if let (Some(start), Some(end)) = (rest.find('"'), rest[1..].find("\" }")) {
            messages.push(rest[start + 1..end + 1].to_owned());
        }
    }
    assert!(!file.items.is_empty());
    messages
}

fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    crate::tool::free::expand(args, item)
}

#[test]
fn a_valid_tool_expands_to_the_function_and_its_module() {
    let out = tool(
        quote!(timeout_ms = 5),
        quote! {
            /// Add.
            pub async fn add(
                /// Left.
                a: u32,
                b: u32,
            ) -> u64 { 0 }
        },
    );
    assert!(errors(&out).is_empty());
    let file: syn::File = syn::parse2(out).unwrap();
    let names: Vec<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) => Some(format!("fn {}", f.sig.ident)),
            syn::Item::Mod(m) => Some(format!("mod {}", m.ident)),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["fn add", "mod add"]);
    let syn::Item::Fn(function) = &file.items[0] else {
        unreachable!()
    };
    let syn::FnArg::Typed(first) = &function.sig.inputs[0] else {
        unreachable!()
    };
    assert!(first.attrs.is_empty(), "parameter docs are stripped");
}

#[test]
fn every_option_problem_is_reported_at_once_and_the_function_kept() {
    let out = tool(
        quote!(name = "bad name", timeout_ms = 0, descripton = "x"),
        quote!(
            fn read(path: String) -> String {
                path
            }
        ),
    );
    let messages = errors(&out);
    assert_eq!(messages.len(), 5, "{messages:#?}");
    assert!(messages[0].starts_with("unknown `#[tool]` option `descripton`"));
    assert!(messages.iter().any(|m| m.contains("must be `async`")));
    assert!(messages.iter().any(|m| m.contains("need a description")));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("tool name \\\"bad name\\\""))
    );
    assert!(messages.iter().any(|m| m.contains("must be positive")));
    assert!(out.to_string().contains("fn read"));
}

#[test]
fn items_other_than_functions_are_rejected() {
    let out = tool(
        quote!(),
        quote!(
            struct S;
        ),
    );
    assert_eq!(errors(&out).len(), 1);
    assert!(out.to_string().contains("struct S"));
}

#[test]
fn tool_sets_need_tool_methods() {
    let out = crate::tool::set::expand(quote!(), quote!(impl S { fn f(&self) {} }));
    assert_eq!(
        errors(&out),
        ["`#[tool_set]` found no `#[tool]` method in this impl block"]
    );
}

#[test]
fn tool_set_methods_are_checked_and_their_attributes_consumed() {
    let out = crate::tool::set::expand(
        quote!(),
        quote! {
            impl S {
                /// Doc.
                #[tool(bogus)]
                async fn f(&mut self, (a, b): (u8, u8)) {}
            }
        },
    );
    let messages = errors(&out);
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(
        !out.to_string().contains("# [tool"),
        "inner #[tool] attributes are removed"
    );
}

#[test]
fn derive_reports_every_unsupported_serde_attribute() {
    let out = crate::derive::expand(quote! {
        #[serde(from = "u8", remote = "X")]
        struct S {
            #[serde(with = "m", getter = "g")]
            a: u8,
            #[serde(rename(serialize = "x", deserialize = "y"))]
            b: u8,
        }
    });
    let messages = errors(&out);
    assert_eq!(messages.len(), 5, "{messages:#?}");
    assert!(
        messages[0].starts_with("`#[serde(from)]` is not supported by `#[derive(ToolSchema)]`")
    );
    assert!(messages[4].contains("reads this as \\\"y\\\" but writes it as \\\"x\\\""));
    assert!(
        out.to_string().contains("SpecKind :: Any"),
        "a stub impl avoids cascades"
    );
}

#[test]
fn derive_rejects_tuples_and_unions() {
    let out = crate::derive::expand(quote!(
        enum E {
            A(u8, u8),
            B,
        }
    ));
    assert_eq!(errors(&out).len(), 1);
    let out = crate::derive::expand(quote!(union U { a: u8 }));
    assert_eq!(
        errors(&out),
        ["`#[derive(ToolSchema)]` does not support unions"]
    );
}
