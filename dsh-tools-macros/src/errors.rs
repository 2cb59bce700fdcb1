//! The error accumulator (serde_derive's `Ctxt`): every misuse is collected, spanned on the
//! user's tokens, and reported at once.
//!
//! Errors are kept as `syn::Error` so that one built from tokens covers them from the first to
//! the last (`new_spanned`), which darling's single-span errors cannot do on stable.

use std::fmt::Display;

use quote::ToTokens;

/// Collects errors; must be [`Errors::finish`]ed (dropping it unchecked is a macro bug).
#[derive(Debug)]
pub(crate) struct Errors {
    errors: Option<Vec<syn::Error>>,
}

impl Errors {
    /// An empty accumulator.
    pub(crate) fn new() -> Self {
        Self {
            errors: Some(Vec::new()),
        }
    }

    fn list(&mut self) -> &mut Vec<syn::Error> {
        self.errors.get_or_insert_with(Vec::new)
    }

    /// An error covering `tokens` (first to last token).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.list().push(syn::Error::new_spanned(tokens, message));
    }

    /// An error produced elsewhere (syn or darling).
    pub(crate) fn push(&mut self, error: impl Into<syn::Error>) {
        let error = error.into();
        self.list().push(error);
    }

    /// Keeps the value of a result, recording its error.
    pub(crate) fn handle<T, E: Into<syn::Error>>(&mut self, result: Result<T, E>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(error);
                None
            }
        }
    }

    /// Whether no error was recorded so far.
    pub(crate) fn is_empty(&self) -> bool {
        self.errors.as_ref().is_none_or(Vec::is_empty)
    }

    /// All recorded errors combined into one, or `Ok`.
    pub(crate) fn finish(mut self) -> syn::Result<()> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Errors {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.as_ref().is_some_and(|e| !e.is_empty()) {
            panic!("dsh-tools-macros bug: errors were recorded but never reported");
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::Span;
    use quote::quote;

    use super::*;

    #[test]
    fn combines_every_error() {
        let mut errors = Errors::new();
        assert!(errors.is_empty());
        errors.spanned(quote!(a b), "first");
        errors.push(syn::Error::new(Span::call_site(), "second"));
        errors.handle::<(), _>(Err(darling::Error::custom("third")));
        let combined = errors.finish().unwrap_err();
        let messages: Vec<String> = combined.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second", "third"]);
    }

    #[test]
    fn empty_is_ok() {
        assert!(Errors::new().finish().is_ok());
    }
}
