//! `///` doc comments: reading them as descriptions, and stripping them where rustc rejects them
//! (function parameters).

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// Whether an attribute is a doc comment (`///`, `/** */` or `#[doc = ...]`).
pub(crate) fn is_doc(attr: &Attribute) -> bool {
    attr.path().is_ident("doc")
}

/// The description written in doc comments: every line with one leading space stripped, then
/// reflowed the way markdown reads it — the hard-wrapped lines of one paragraph are joined with a
/// space, paragraphs are separated by a blank line, and list items, indented lines and fenced
/// code keep their line breaks — and the whole text trimmed. `None` when there is no (non-blank) doc
/// text. Doc attributes whose value is not a string literal (`#[doc = include_str!(..)]`) are
/// skipped: their text is not known to the macro.
pub(crate) fn description(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| is_doc(a)) {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) = &nv.value
        else {
            continue;
        };
        for line in text.value().split('\n') {
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
        }
    }
    let text = reflow(&lines);
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Whether a line must start on a line of its own (a list item, an indented or fenced line).
fn starts_block(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with([' ', '\t'])
        || trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || trimmed.starts_with('#')
        || trimmed.starts_with('|')
        || trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn reflow(lines: &[String]) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    let mut previous_blank = true;
    for line in lines {
        let fence = line.trim_start().starts_with("```");
        if line.trim().is_empty() && !in_fence {
            if !previous_blank {
                out.push_str("\n\n");
            }
            previous_blank = true;
            continue;
        }
        if in_fence || fence || starts_block(line) || previous_blank {
            if !previous_blank && !out.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push(' ');
        }
        out.push_str(line);
        if in_fence || fence {
            out.push('\n');
        }
        if fence {
            in_fence = !in_fence;
        }
        previous_blank = false;
    }
    out
}

/// Removes the doc attributes from a list (parameter docs become property descriptions; rustc
/// rejects them on parameters).
pub(crate) fn strip(attrs: &mut Vec<Attribute>) {
    attrs.retain(|attr| !is_doc(attr) && !crate::constraints::is_constraint_attr(attr));
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    fn attrs(item: syn::ItemStruct) -> Vec<Attribute> {
        item.attrs
    }

    #[test]
    fn joins_lines_and_strips_one_space() {
        let attrs = attrs(parse_quote! {
            /// Read a file.
            ///
            ///   Indented stays indented.
            #[derive(Debug)]
            struct S;
        });
        assert_eq!(
            description(&attrs).as_deref(),
            Some("Read a file.\n\n  Indented stays indented.")
        );
    }

    #[test]
    fn reflows_hard_wrapped_paragraphs_but_keeps_lists() {
        let attrs = attrs(parse_quote! {
            /// Read a file from
            /// the workspace.
            ///
            /// Modes:
            /// - `text`
            /// - `binary`
            struct S;
        });
        assert_eq!(
            description(&attrs).as_deref(),
            Some("Read a file from the workspace.\n\nModes:\n- `text`\n- `binary`")
        );
    }

    #[test]
    fn block_comments_and_blank_docs() {
        let block = attrs(parse_quote! {
            #[doc = "\n Line one.\n Line two.\n"]
            struct S;
        });
        assert_eq!(description(&block).as_deref(), Some("Line one. Line two."));
        let blank = attrs(parse_quote! {
            ///
            #[doc = "   "]
            struct S;
        });
        assert_eq!(description(&blank), None);
    }

    #[test]
    fn strips_only_docs() {
        let mut attrs = attrs(parse_quote! {
            /// Gone.
            #[allow(dead_code)]
            struct S;
        });
        strip(&mut attrs);
        assert_eq!(attrs.len(), 1);
        assert!(attrs[0].path().is_ident("allow"));
    }
}
