//! Constraint attributes on `#[derive(ToolSchema)]` fields and `#[tool]` parameters, in the
//! vocabulary of schemars 1.x and validator: `#[schema(range(min = 1, max = 100))]`,
//! `length(min, max, equal)`, `regex(pattern = "...")`, `email`, `url`, `format = "..."`,
//! `example = <expr>`, `description = "..."`, `rename = "..."`, `with = "path"`.
//!
//! The same words inside `#[schemars(...)]` and `#[validate(...)]` are honoured (so a struct
//! moves over unchanged); other words there belong to those crates and are ignored. Unknown
//! words in `#[schema(...)]` are errors with a suggestion. Patterns are parsed here with the
//! ECMAScript engine the validator uses, so an invalid one fails the build.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Lit, LitStr, UnOp};

use crate::errors::Errors;

/// The words `#[schema(...)]` knows.
const WORDS: &[&str] = &[
    "range",
    "length",
    "regex",
    "email",
    "url",
    "format",
    "example",
    "description",
    "rename",
    "with",
];

/// The formats the validator asserts (`dsh_tools::subset::FORMATS`).
const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "ipv6",
    "hostname",
];

/// A number literal as written (`-1.5`), with its value for the `min <= max` check.
#[derive(Clone)]
pub(crate) struct Number {
    tokens: TokenStream,
    value: f64,
    integer: bool,
    /// The literal's span (errors about the bound point at it).
    span: Span,
    /// The literal as written (`-1.5`, `0.0`), for messages.
    text: String,
}

/// A count literal (`length(min = 1)`) with its span.
#[derive(Clone, Copy)]
pub(crate) struct Count {
    value: u64,
    span: Span,
}

/// The constraints of one field or parameter.
#[derive(Default, Clone)]
pub(crate) struct Constraints {
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    multiple_of: Option<Number>,
    min_length: Option<Count>,
    max_length: Option<Count>,
    pattern: Option<LitStr>,
    format: Option<String>,
    /// `example = <expr>`.
    pub(crate) example: Option<Expr>,
    /// `description = "..."`.
    pub(crate) description: Option<String>,
    /// `rename = "..."`.
    pub(crate) rename: Option<LitStr>,
    /// `with = "path"`: a `const fn() -> SchemaSpec`.
    pub(crate) with: Option<syn::Path>,
    /// The first assertion word (`range`, `length`, `regex`, ...): a check that fails when the
    /// schema is evaluated (a number range on a string) is reported there.
    checks_span: Option<Span>,
}

/// Which attribute a word came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Schema,
    Schemars,
    Validate,
}

/// Whether `attr` is one of the constraint attributes (`schema`, `schemars`, `validate`).
pub(crate) fn is_constraint_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident("schema") || path.is_ident("schemars") || path.is_ident("validate")
}

impl std::fmt::Debug for Constraints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Constraints").finish_non_exhaustive()
    }
}

impl Constraints {
    /// Reads every constraint attribute of an item.
    pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Self {
        let mut out = Self::default();
        for attr in attrs {
            let source = if attr.path().is_ident("schema") {
                Source::Schema
            } else if attr.path().is_ident("schemars") {
                Source::Schemars
            } else if attr.path().is_ident("validate") {
                Source::Validate
            } else {
                continue;
            };
            let result = attr.parse_nested_meta(|meta| out.word(&meta, source, errors));
            if let Err(error) = result
                && source == Source::Schema
            {
                errors.push(error);
            }
        }
        out.check(errors);
        out
    }

    /// Whether no constraint is set (annotations aside).
    pub(crate) fn is_empty(&self) -> bool {
        self.minimum.is_none()
            && self.maximum.is_none()
            && self.exclusive_minimum.is_none()
            && self.exclusive_maximum.is_none()
            && self.multiple_of.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.pattern.is_none()
            && self.format.is_none()
            && self.example.is_none()
            && self.description.is_none()
            && self.rename.is_none()
            && self.with.is_none()
    }

    fn word(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        source: Source,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let word = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if matches!(
            word.as_str(),
            "range" | "length" | "multiple_of" | "regex" | "pattern" | "email" | "url" | "format"
        ) {
            self.checks_span.get_or_insert_with(|| meta.path.span());
        }
        match word.as_str() {
            "range" => {
                if let Some((start, end, inclusive)) = crate::range::parse(meta)? {
                    self.set_range_ends(start, end, inclusive)?;
                    return Ok(());
                }
                self.range_words(meta)
            }
            "length" => meta.parse_nested_meta(|inner| {
                let key = inner
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let n = count(&inner)?;
                match key.as_str() {
                    "min" => self.min_length = Some(n),
                    "max" => self.max_length = Some(n),
                    "equal" => {
                        self.min_length = Some(n);
                        self.max_length = Some(n);
                    }
                    _ => return Err(inner.error("expected `min`, `max` or `equal`")),
                }
                Ok(())
            }),
            "multiple_of" if source != Source::Validate => {
                self.multiple_of = Some(number(meta)?);
                Ok(())
            }
            "regex" | "pattern" => {
                if meta.input.peek(syn::Token![=]) {
                    self.pattern = Some(meta.value()?.parse()?);
                    return Ok(());
                }
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("pattern") {
                        self.pattern = Some(inner.value()?.parse()?);
                    } else {
                        // validator's `regex(path = ...)` names a runtime value: not readable.
                        skip(&inner)?;
                    }
                    Ok(())
                })
            }
            "email" => {
                self.format = Some("email".into());
                skip(meta)
            }
            "url" => {
                self.format = Some("uri".into());
                skip(meta)
            }
            "format" => {
                let lit: LitStr = meta.value()?.parse()?;
                if !FORMATS.contains(&lit.value().as_str()) {
                    errors.spanned(
                        &lit,
                        format!(
                            "unknown format {:?}: the validator asserts {}",
                            lit.value(),
                            FORMATS.join(", ")
                        ),
                    );
                }
                self.format = Some(lit.value());
                Ok(())
            }
            "example" => {
                self.example = Some(meta.value()?.parse()?);
                Ok(())
            }
            "description" => {
                let lit: LitStr = meta.value()?.parse()?;
                self.description = Some(lit.value());
                Ok(())
            }
            "rename" if source != Source::Validate => {
                self.rename = Some(meta.value()?.parse()?);
                Ok(())
            }
            "with" if source == Source::Schema => {
                let value: Expr = meta.value()?.parse()?;
                let path = match &value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => s.parse::<syn::Path>()?,
                    Expr::Path(path) => path.path.clone(),
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "expected the path of a `const fn() -> SchemaSpec`",
                        ));
                    }
                };
                self.with = Some(path);
                Ok(())
            }
            _ if source == Source::Schema => {
                let hint = suggestion(&word)
                    .map(|w| format!("did you mean `{w}`?"))
                    .unwrap_or_else(|| {
                        let all: Vec<String> = WORDS.iter().map(|w| format!("`{w}`")).collect();
                        format!("expected one of {}", all.join(", "))
                    });
                errors.spanned(
                    &meta.path,
                    format!("unknown `#[schema]` word `{word}`; {hint}"),
                );
                skip(meta)
            }
            // schemars and validator words we do not read (`extend`, `contains`, `custom` …).
            _ => skip(meta),
        }
    }

    /// `range(min = .., max = .., exclusive_min = .., exclusive_max = ..)`.
    fn range_words(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        meta.parse_nested_meta(|inner| {
            let key = inner
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let slot = match key.as_str() {
                "min" => &mut self.minimum,
                "max" => &mut self.maximum,
                "exclusive_min" => &mut self.exclusive_minimum,
                "exclusive_max" => &mut self.exclusive_maximum,
                _ => {
                    return Err(inner.error(format!(
                        "expected `min`, `max`, `exclusive_min` or `exclusive_max`; {}",
                        crate::range::SPELLINGS
                    )));
                }
            };
            *slot = Some(number(&inner)?);
            Ok(())
        })
    }

    /// `range(a..=b)` / `range(a..b)`: the ends of a Rust range expression.
    fn set_range_ends(
        &mut self,
        start: Option<Expr>,
        end: Option<Expr>,
        inclusive: bool,
    ) -> syn::Result<()> {
        let end_of = |expr: Expr| {
            number_of(expr).map_err(|error| {
                let text = format!(
                    "{error}: the ends of a range are number literals, like `range(1..=50)`"
                );
                syn::Error::new(error.span(), text)
            })
        };
        if let Some(start) = start {
            self.minimum = Some(end_of(start)?);
        }
        if let Some(end) = end {
            let slot = if inclusive {
                &mut self.maximum
            } else {
                &mut self.exclusive_maximum
            };
            *slot = Some(end_of(end)?);
        }
        Ok(())
    }

    /// Bounds that leave no value (`min > max`, equal exclusive bounds), reported on the lower
    /// bound's literal; a pattern the engine cannot compile.
    fn check(&self, errors: &mut Errors) {
        let lower = [
            ("min", &self.minimum, false),
            ("exclusive_min", &self.exclusive_minimum, true),
        ];
        let upper = [
            ("max", &self.maximum, false),
            ("exclusive_max", &self.exclusive_maximum, true),
        ];
        for (low_name, low, low_open) in lower {
            for (high_name, high, high_open) in upper {
                let (Some(low), Some(high)) = (low, high) else {
                    continue;
                };
                let empty =
                    low.value > high.value || (low.value == high.value && (low_open || high_open));
                if empty {
                    let relation = if low.value > high.value {
                        "greater than"
                    } else {
                        "equal to"
                    };
                    errors.push(syn::Error::new(
                        low.span,
                        format!(
                            "`range`: `{low_name}` ({}) is {relation} `{high_name}` ({}), so no value fits",
                            low.text, high.text
                        ),
                    ));
                }
            }
        }
        if let (Some(min), Some(max)) = (self.min_length, self.max_length)
            && min.value > max.value
        {
            errors.push(syn::Error::new(
                min.span,
                format!(
                    "`length`: `min` ({}) is greater than `max` ({}), so no value fits",
                    min.value, max.value
                ),
            ));
        }
        if let Some(m) = &self.multiple_of
            && m.value.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            errors.push(syn::Error::new(
                m.span,
                "`multiple_of` must be greater than 0",
            ));
        }
        if let Some(pattern) = &self.pattern
            && let Err(error) = regress::Regex::with_flags(&pattern.value(), "u")
        {
            errors.spanned(
                pattern,
                format!("invalid regular expression (ECMAScript, `u` flag): {error}"),
            );
        }
    }

    /// `SchemaSpec` expression for a value of type `ty` with these constraints applied, or
    /// `None` when there are none that change the schema.
    pub(crate) fn apply(&self, base: TokenStream, krate: &TokenStream) -> TokenStream {
        let s = quote!(#krate::schema);
        let mut spec = match &self.with {
            // Called in the `const` of the schema: the path must name a `const fn`.
            Some(path) => quote_spanned!(path.span()=> #path()),
            None => base,
        };
        let literal = |n: &Option<Number>| match n {
            Some(Number {
                tokens,
                integer,
                value,
                ..
            }) => {
                if *integer && *value >= 0.0 {
                    quote!(::core::option::Option::Some(#s::Literal::UInt(#tokens)))
                } else if *integer {
                    quote!(::core::option::Option::Some(#s::Literal::Int(#tokens)))
                } else {
                    quote!(::core::option::Option::Some(#s::Literal::Float(#tokens)))
                }
            }
            None => quote!(::core::option::Option::None),
        };
        let count = |n: Option<Count>| match n {
            Some(Count { value, .. }) => quote!(::core::option::Option::Some(#value)),
            None => quote!(::core::option::Option::None),
        };
        let text = |t: Option<String>| match t {
            Some(t) => quote!(::core::option::Option::Some(#t)),
            None => quote!(::core::option::Option::None),
        };
        let has_checks = self.minimum.is_some()
            || self.maximum.is_some()
            || self.exclusive_minimum.is_some()
            || self.exclusive_maximum.is_some()
            || self.multiple_of.is_some()
            || self.min_length.is_some()
            || self.max_length.is_some()
            || self.pattern.is_some()
            || self.format.is_some();
        if has_checks {
            let (min, max) = (literal(&self.minimum), literal(&self.maximum));
            let (xmin, xmax) = (
                literal(&self.exclusive_minimum),
                literal(&self.exclusive_maximum),
            );
            let multiple = literal(&self.multiple_of);
            let (min_len, max_len) = (count(self.min_length), count(self.max_length));
            let pattern = text(self.pattern.as_ref().map(LitStr::value));
            let format = text(self.format.clone());
            // A check that cannot apply panics in the `const`: the error points at the word.
            let span = self.checks_span.unwrap_or_else(Span::call_site);
            spec = quote_spanned! {span=>
                #spec.with_checks(#s::Checks {
                    minimum: #min,
                    maximum: #max,
                    exclusive_minimum: #xmin,
                    exclusive_maximum: #xmax,
                    multiple_of: #multiple,
                    min_length: #min_len,
                    max_length: #max_len,
                    pattern: #pattern,
                    format: #format,
                    unique_items: false,
                })
            };
        }
        if let Some(example) = &self.example {
            spec = quote! {
                #spec.with_examples(|| {
                    #krate::__private::serde_json::to_value(&(#example))
                        .unwrap_or(#krate::__private::serde_json::Value::Null)
                })
            };
        }
        spec
    }
}

/// `key = <number literal>` (an optional leading `-`).
fn number(meta: &ParseNestedMeta<'_>) -> syn::Result<Number> {
    number_of(meta.value()?.parse()?)
}

/// A number literal (an optional leading `-`).
fn number_of(expr: Expr) -> syn::Result<Number> {
    let (lit, negative) = match &expr {
        Expr::Lit(ExprLit { lit, .. }) => (lit, false),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (lit, true),
            other => return Err(syn::Error::new_spanned(other, "expected a number literal")),
        },
        _ => return Err(syn::Error::new_spanned(&expr, "expected a number literal")),
    };
    let (value, integer) = match lit {
        Lit::Int(int) => (int.base10_parse::<f64>()?, true),
        Lit::Float(float) => (float.base10_parse::<f64>()?, false),
        _ => return Err(syn::Error::new_spanned(lit, "expected a number literal")),
    };
    let digits = match lit {
        Lit::Int(int) => {
            let d = int.base10_digits();
            syn::parse_str::<TokenStream>(d)?
        }
        Lit::Float(float) => {
            let d = float.base10_digits();
            let d = if d.contains(['.', 'e', 'E']) {
                d.to_owned()
            } else {
                format!("{d}.0")
            };
            syn::parse_str::<TokenStream>(&d)?
        }
        _ => lit.to_token_stream(),
    };
    // The re-emitted digits keep the literal's span, so errors about them point at it.
    let span = lit.span();
    let digits: TokenStream = digits
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect();
    let text = format!("{}{}", if negative { "-" } else { "" }, digits);
    let tokens = if negative { quote!(-#digits) } else { digits };
    Ok(Number {
        tokens,
        value: if negative { -value } else { value },
        integer,
        span,
        text,
    })
}

/// `key = <non-negative integer literal>`.
fn count(meta: &ParseNestedMeta<'_>) -> syn::Result<Count> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    Ok(Count {
        value: lit.base10_parse()?,
        span: lit.span(),
    })
}

/// Consumes whatever follows a word: `= expr`, `(...)` or nothing.
fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

/// The closest known word, if close enough.
fn suggestion(word: &str) -> Option<&'static str> {
    WORDS
        .iter()
        .map(|w| (strsim::jaro_winkler(word, w), *w))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, w)| w)
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    fn parse(attrs: Vec<Attribute>) -> (Constraints, Vec<String>) {
        let mut errors = Errors::new();
        let constraints = Constraints::parse(&attrs, &mut errors);
        let messages = match errors.finish() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (constraints, messages)
    }

    #[test]
    fn reads_the_three_vocabularies() {
        let (c, errors) = parse(vec![
            parse_quote!(#[schema(range(min = 1, max = 100), description = "Per page")]),
            parse_quote!(#[schemars(length(min = 2), extend("x" = 1))]),
            parse_quote!(#[validate(email, custom(function = "f"))]),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(c.minimum.as_ref().map(|n| n.value), Some(1.0));
        assert_eq!(c.min_length.map(|n| n.value), Some(2));
        assert_eq!(c.format.as_deref(), Some("email"));
        assert_eq!(c.description.as_deref(), Some("Per page"));
    }

    #[test]
    fn reports_bad_input_at_compile_time() {
        let (_, errors) = parse(vec![parse_quote!(#[schema(rnage(min = 1))])]);
        assert_eq!(
            errors,
            vec!["unknown `#[schema]` word `rnage`; did you mean `range`?"]
        );
        let (_, errors) = parse(vec![parse_quote!(#[schema(range(min = 5, max = -1))])]);
        assert_eq!(
            errors,
            vec!["`range`: `min` (5) is greater than `max` (-1), so no value fits"]
        );
        let (_, errors) = parse(vec![parse_quote!(
            #[schema(range(exclusive_min = 0.5, max = 0.5, exclusive_max = 0.25))]
        )]);
        assert_eq!(
            errors,
            vec![
                "`range`: `exclusive_min` (0.5) is equal to `max` (0.5), so no value fits",
                "`range`: `exclusive_min` (0.5) is greater than `exclusive_max` (0.25), so no value fits"
            ]
        );
        let (_, errors) = parse(vec![parse_quote!(#[validate(length(min = 3, max = 2))])]);
        assert_eq!(
            errors,
            vec!["`length`: `min` (3) is greater than `max` (2), so no value fits"]
        );
        // A bound that admits exactly one value is fine.
        let (_, errors) = parse(vec![parse_quote!(#[schema(range(min = 1, max = 1))])]);
        assert!(errors.is_empty(), "{errors:?}");
        let (_, errors) = parse(vec![parse_quote!(#[schema(regex(pattern = "(a"))])]);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with("invalid regular expression"),
            "{errors:?}"
        );
        let (_, errors) = parse(vec![parse_quote!(#[schema(format = "iri")])]);
        assert!(
            errors[0].starts_with("unknown format \"iri\""),
            "{errors:?}"
        );
        // Unknown words of the other crates are theirs.
        let (_, errors) = parse(vec![parse_quote!(#[validate(nested, rnage(min = 1))])]);
        assert!(errors.is_empty(), "{errors:?}");
    }
}
