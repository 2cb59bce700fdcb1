//! The `#[tool(...)]` options, parsed with darling: unknown options get a "did you mean"
//! suggestion, duplicates are reported on their second occurrence, and every problem of one
//! attribute is reported at once.

use std::collections::HashSet;

use darling::ast::NestedMeta;
use darling::{Error, FromMeta};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Lit, Meta};

use crate::errors::Errors;

/// `concurrency_safe = true | false | path::to::classifier`.
#[derive(Debug, Clone)]
pub(crate) enum ConcurrencySafe {
    /// Every call is parallel-safe (`true`) or exclusive (`false`).
    Always(bool),
    /// `fn(&Args) -> bool` decides per call.
    Classifier(syn::Path),
}

impl FromMeta for ConcurrencySafe {
    fn from_word() -> darling::Result<Self> {
        Ok(Self::Always(true))
    }

    fn from_bool(value: bool) -> darling::Result<Self> {
        Ok(Self::Always(value))
    }

    fn from_string(value: &str) -> darling::Result<Self> {
        syn::parse_str(value)
            .map(Self::Classifier)
            .map_err(|_| Error::unknown_value(value))
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(lit) => Self::from_value(&lit.lit),
            Expr::Path(path) => Ok(Self::Classifier(path.path.clone())),
            Expr::Group(group) => Self::from_expr(&group.expr),
            _ => Err(Error::custom(
                "expected `true`, `false` or the path of a `fn(&Args) -> bool` classifier",
            )
            .with_span(expr)),
        }
    }
}

/// The options of `#[tool(...)]` (on a free function or on a `#[tool_set]` method).
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub(crate) struct ToolOptions {
    /// The tool's name (default: the function's name).
    pub(crate) name: Option<syn::LitStr>,
    /// The description (default: the `///` docs).
    pub(crate) description: Option<syn::LitStr>,
    /// The deadline in milliseconds.
    pub(crate) timeout_ms: Option<syn::LitInt>,
    /// Scheduling.
    pub(crate) concurrency_safe: Option<ConcurrencySafe>,
    /// `fn(&Args) -> Option<ToolCallView>`.
    pub(crate) present_call: Option<syn::Path>,
    /// `fn(&Args, &ToolResult) -> Option<ToolResultView>`.
    pub(crate) present_result: Option<syn::Path>,
    /// `fn(&Args, &Out) -> Vec<ContentBlock>`.
    pub(crate) render: Option<syn::Path>,
    /// `fn(&Args, &Out) -> serde_json::Value`.
    pub(crate) presentation_meta: Option<syn::Path>,
    /// `fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>>`.
    pub(crate) finalize_content: Option<syn::Path>,
    /// `readOnlyHint`.
    pub(crate) read_only: Option<bool>,
    /// `destructiveHint`.
    pub(crate) destructive: Option<bool>,
    /// `idempotentHint`.
    pub(crate) idempotent: Option<bool>,
    /// `openWorldHint`.
    pub(crate) open_world: Option<bool>,
    /// `"native"`, `"code"` or `"both"` (checked by `check::callers`).
    pub(crate) callers: Option<syn::LitStr>,
    /// Found on demand through tool search (`dsh_tools::Loading::Deferred`).
    pub(crate) deferred: darling::util::Flag,
    /// Always loaded, whatever the registry's threshold (`dsh_tools::Loading::Pinned`).
    pub(crate) pinned: darling::util::Flag,
    /// The result budget in tokens (checked positive by `check::max_result_tokens`).
    pub(crate) max_result_tokens: Option<syn::LitInt>,
    /// `fn(&Args) -> String`: how to get the rest of a cut result.
    pub(crate) result_hint: Option<syn::Path>,
    /// Every call asks for approval first (`ToolBuilder::requires_approval`).
    pub(crate) requires_approval: darling::util::Flag,
    /// Accept (and ignore) argument keys that are not parameters, as the reference's open
    /// parameter map does; by default they are refused before the body runs.
    pub(crate) allow_unknown_args: darling::util::Flag,
    /// The path of the `dsh_tools` crate (default `::dsh_tools`).
    #[darling(rename = "crate")]
    pub(crate) krate: Option<syn::Path>,
}

/// The options of `#[tool]`, for "expected one of" messages.
const TOOL_OPTIONS: &[&str] = &[
    "name",
    "description",
    "timeout_ms",
    "concurrency_safe",
    "present_call",
    "present_result",
    "render",
    "presentation_meta",
    "finalize_content",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "callers",
    "deferred",
    "pinned",
    "max_result_tokens",
    "result_hint",
    "requires_approval",
    "allow_unknown_args",
    "crate",
];

/// Rewrites darling's messages in the house style ("unknown `#[tool]` option `descr`; did
/// you mean `description`?"), keeping their spans, one error per problem.
pub(crate) fn house_style(error: darling::Error, attribute: &str, options: &[&str]) -> syn::Error {
    let expected: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
    let mut combined: Option<syn::Error> = None;
    for error in error {
        let span = error.span();
        let text = error.to_string();
        let message = if let Some(rest) = text.strip_prefix("Unknown field: ") {
            match rest.split_once(". Did you mean ") {
                Some((field, hint)) => {
                    format!("unknown `{attribute}` option {field}; did you mean {hint}")
                }
                None => {
                    let field = rest.split(". Available").next().unwrap_or(rest);
                    format!(
                        "unknown `{attribute}` option {field}; expected one of {}",
                        expected.join(", ")
                    )
                }
            }
        } else if let Some(field) = text.strip_prefix("Duplicate field ") {
            format!("duplicate `{attribute}` option {field}")
        } else {
            let mut chars = text.chars();
            chars
                .next()
                .map(|first| first.to_lowercase().chain(chars).collect())
                .unwrap_or_default()
        };
        let error = syn::Error::new(span, message);
        match &mut combined {
            Some(all) => all.combine(error),
            None => combined = Some(error),
        }
    }
    combined.unwrap_or_else(|| syn::Error::new(proc_macro2::Span::call_site(), "invalid options"))
}

impl ToolOptions {
    /// Parses the arguments of `#[tool(...)]`, recording problems into `errors`. When some
    /// options are wrong, the others are still read (and checked by the caller), so that every
    /// problem is reported at once; `None` only when nothing could be read.
    pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Option<Self> {
        let items = match NestedMeta::parse_meta_list(args) {
            Ok(items) => items,
            Err(error) => {
                errors.push(error);
                return None;
            }
        };
        match Self::from_list(&items) {
            Ok(options) => Some(options),
            Err(error) => {
                errors.push(house_style(error, "#[tool]", TOOL_OPTIONS));
                let mut seen = HashSet::new();
                let readable: Vec<NestedMeta> = items
                    .into_iter()
                    .filter(|item| match item {
                        NestedMeta::Meta(meta) => meta
                            .path()
                            .get_ident()
                            .map(|ident| ident.to_string())
                            .is_some_and(|name| {
                                TOOL_OPTIONS.contains(&name.as_str()) && seen.insert(name)
                            }),
                        NestedMeta::Lit(_) | NestedMeta::NameValueInvalidExpr(_) => false,
                    })
                    .collect();
                Self::from_list(&readable).ok()
            }
        }
    }

    /// Parses an inner `#[tool]` / `#[tool(...)]` attribute of a `#[tool_set]` method.
    pub(crate) fn from_attribute(meta: &Meta, errors: &mut Errors) -> Option<Self> {
        match meta {
            Meta::Path(_) => Some(Self::default()),
            Meta::List(list) => Self::parse(list.tokens.clone(), errors),
            Meta::NameValue(nv) => {
                errors.spanned(nv, "expected `#[tool]` or `#[tool(option = ...)]`");
                None
            }
        }
    }

    /// The crate path the generated code goes through.
    pub(crate) fn krate(&self) -> TokenStream {
        match &self.krate {
            Some(path) => quote!(#path),
            None => crate::krate::default_path(),
        }
    }

    /// Whether any annotation flag was given.
    pub(crate) fn has_annotations(&self) -> bool {
        self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// The literal of a boolean flag, for code generation.
pub(crate) fn hint(value: Option<bool>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The crate path of the `crate = "..."` option found among raw tokens, for the fallback
/// expansion when the options themselves failed to parse.
pub(crate) fn fallback_krate(args: &TokenStream) -> TokenStream {
    let parsed = NestedMeta::parse_meta_list(args.clone()).unwrap_or_default();
    for item in parsed {
        if let NestedMeta::Meta(Meta::NameValue(nv)) = item
            && nv.path.is_ident("crate")
            && let Expr::Lit(lit) = &nv.value
            && let Lit::Str(text) = &lit.lit
            && let Ok(path) = text.parse::<syn::Path>()
        {
            return quote!(#path);
        }
    }
    crate::krate::default_path()
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn parse(tokens: TokenStream) -> Result<ToolOptions, Vec<String>> {
        let mut errors = Errors::new();
        let options = ToolOptions::parse(tokens, &mut errors);
        match errors.finish() {
            Ok(()) => Ok(options.unwrap()),
            Err(error) => Err(error.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn parses_every_option() {
        let options = parse(quote! {
            name = "x", description = "d", timeout_ms = 5, concurrency_safe = my::classify,
            present_call = a, present_result = b, render = c, presentation_meta = d,
            finalize_content = e, read_only, destructive = false, idempotent = true,
            open_world = true, callers = "code", max_result_tokens = 500, crate = "::dsh"
        })
        .unwrap();
        assert_eq!(options.callers.as_ref().unwrap().value(), "code");
        assert_eq!(
            options.max_result_tokens.as_ref().unwrap().base10_digits(),
            "500"
        );
        assert_eq!(options.name.as_ref().unwrap().value(), "x");
        assert_eq!(options.timeout_ms.as_ref().unwrap().base10_digits(), "5");
        assert!(matches!(
            options.concurrency_safe,
            Some(ConcurrencySafe::Classifier(_))
        ));
        assert_eq!(options.read_only, Some(true));
        assert_eq!(options.destructive, Some(false));
        assert_eq!(options.krate().to_string(), ":: dsh");
    }

    #[test]
    fn concurrency_accepts_words_and_bools() {
        let word = parse(quote!(concurrency_safe)).unwrap();
        assert!(matches!(
            word.concurrency_safe,
            Some(ConcurrencySafe::Always(true))
        ));
        let no = parse(quote!(concurrency_safe = false)).unwrap();
        assert!(matches!(
            no.concurrency_safe,
            Some(ConcurrencySafe::Always(false))
        ));
    }

    #[test]
    fn reports_unknown_and_duplicate_options_together_in_house_style() {
        let messages =
            parse(quote!(descripton = "x", name = "a", name = "b", zzz = 1)).unwrap_err();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages.contains(
                &"unknown `#[tool]` option `descripton`; did you mean `description`?".to_owned()
            ),
            "{messages:?}"
        );
        assert!(
            messages.contains(&"duplicate `#[tool]` option `name`".to_owned()),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("unknown `#[tool]` option `zzz`; expected one of `name`, ")),
            "{messages:?}"
        );
    }

    #[test]
    fn keeps_the_readable_options_of_a_broken_list() {
        let mut errors = Errors::new();
        let options = ToolOptions::parse(
            quote!(bogus = 1, name = "n", name = "m", timeout_ms = 3),
            &mut errors,
        );
        let options = options.unwrap();
        assert_eq!(options.name.unwrap().value(), "n");
        assert!(options.timeout_ms.is_some());
        assert_eq!(errors.finish().unwrap_err().into_iter().count(), 2);
    }

    #[test]
    fn finds_the_crate_path_in_broken_options() {
        let tokens = quote!(bogus = 1, crate = "my::dsh");
        assert_eq!(fallback_krate(&tokens).to_string(), "my :: dsh");
        assert_eq!(fallback_krate(&quote!(!!)).to_string(), ":: dsh_tools");
    }
}
