//! `range(1..=50)`: Rust's range syntax as a spelling of `range(min = 1, max = 50)`.
//!
//! `a..=b` is `min = a, max = b`; `a..b` is `min = a, exclusive_max = b` (Rust's half-open
//! range); either end may be left out (`..=50`, `1..`). Anything else inside `range(..)` that is
//! not `key = value` is refused with both spellings.

use syn::meta::ParseNestedMeta;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseBuffer, ParseStream};
use syn::{Expr, ExprRange, RangeLimits};

/// What `range(..)` accepts, shown by every error about its contents.
pub(crate) const SPELLINGS: &str = "write `range(min = 1, max = 50)` (also `exclusive_min`, `exclusive_max`) or a Rust range: `range(1..=50)`, `range(1..50)`, `range(..=50)`, `range(1..)`";

/// The ends of a range expression: `(start, end, end is inclusive)`.
pub(crate) type Ends = (Option<Expr>, Option<Expr>, bool);

/// Reads `(<range expression>)` when that is what follows `range`; `Ok(None)` (nothing read)
/// when the parenthesis opens with `key =`, the other spelling; an error naming both spellings
/// for anything else.
pub(crate) fn parse(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Ends>> {
    let fork = meta.input.fork();
    if let Ok(range) = parenthesized_range(&fork) {
        meta.input.advance_to(&fork);
        let ExprRange {
            start, end, limits, ..
        } = range;
        if start.is_none() && end.is_none() {
            return Err(meta.error(format!("`range(..)` bounds nothing; {SPELLINGS}")));
        }
        let inclusive = matches!(limits, RangeLimits::Closed(_));
        return Ok(Some((start.map(|e| *e), end.map(|e| *e), inclusive)));
    }
    let fork = meta.input.fork();
    if opens_with_key(&fork) {
        return Ok(None);
    }
    Err(meta.error(format!("unexpected `range` contents; {SPELLINGS}")))
}

fn parenthesized_range(input: ParseStream<'_>) -> syn::Result<ExprRange> {
    let content = parens(input)?;
    let range: ExprRange = content.parse()?;
    if content.is_empty() {
        Ok(range)
    } else {
        Err(content.error("expected one range"))
    }
}

/// Whether the parenthesis opens with an identifier (`min = ..`), or is empty.
fn opens_with_key(input: ParseStream<'_>) -> bool {
    parens(input).is_ok_and(|content| content.is_empty() || content.peek(syn::Ident))
}

fn parens<'a>(input: ParseStream<'a>) -> syn::Result<ParseBuffer<'a>> {
    let content;
    syn::parenthesized!(content in input);
    Ok(content)
}
