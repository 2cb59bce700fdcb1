//! Reading `#[serde(...)]` attributes the way serde_derive does for deserialisation.
//!
//! Attributes that do not change what is read (`bound`, `crate`, `expecting`, ...) are
//! accepted; attributes whose effect a schema cannot describe are errors, one per attribute,
//! all reported at once; attributes serde itself does not know are left to serde to report.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Token};

use crate::case::RenameRule;
use crate::errors::Errors;

/// Where an attribute sits, for the "not supported" reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Container,
    Variant,
    Field,
}

/// Why an attribute cannot be described, or `None` when it is harmless or handled.
fn unsupported(level: Level, key: &str) -> Option<&'static str> {
    Some(match (level, key) {
        (_, "with" | "deserialize_with") => {
            "the schema could not describe what the custom deserializer accepts"
        }
        (_, "serialize_with") => "the schema could not describe what the custom serializer writes",
        (_, "borrow") => "tool arguments are read into owned values",
        (Level::Container, "from" | "try_from") => {
            "the schema would describe this type, not the type serde actually reads"
        }
        (Level::Container, "into") => {
            "the schema would describe this type, not the type serde actually writes"
        }
        (Level::Container, "remote") => {
            "the schema would describe the local mirror, not the remote type"
        }
        (Level::Container, "rename_all_fields") => {
            "set `#[serde(rename_all = \"...\")]` on each struct variant instead"
        }
        (Level::Container, "variant_identifier" | "field_identifier") => {
            "identifier enums read strings and indices the schema could not describe"
        }
        (Level::Variant, "other") => "a catch-all variant accepts any tag, which no schema lists",
        (Level::Variant, "untagged") => {
            "mixing tagged and untagged variants cannot be described by one schema"
        }
        (Level::Field, "getter") => "`getter` belongs to remote derives",
        _ => return None,
    })
}

/// A `rename` attribute: what serde writes and what it reads (first = main name, rest = aliases).
#[derive(Debug, Default, Clone)]
pub(crate) struct Rename {
    pub(crate) ser: Option<String>,
    pub(crate) de: Vec<String>,
    /// The attribute tokens, for errors.
    pub(crate) tokens: Option<TokenStream>,
}

/// Everything read from the `#[serde(...)]` attributes of one item.
#[derive(Debug, Default, Clone)]
pub(crate) struct SerdeAttrs {
    pub(crate) rename: Rename,
    pub(crate) aliases: Vec<String>,
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) deny_unknown_fields: bool,
    pub(crate) default: bool,
    pub(crate) transparent: bool,
    pub(crate) tag: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) untagged: bool,
    pub(crate) flatten: bool,
    pub(crate) skip_deserializing: bool,
    /// `skip`, `skip_serializing` or `skip_serializing_if` on a field: the attribute's path,
    /// for errors.
    pub(crate) skip_serializing: Option<TokenStream>,
}

/// Reads the serde attributes of one item, reporting unsupported ones into `errors`.
pub(crate) fn parse(attrs: &[Attribute], level: Level, errors: &mut Errors) -> SerdeAttrs {
    let mut out = SerdeAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        if let syn::Meta::List(list) = &attr.meta
            && list.tokens.is_empty()
        {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.to_token_stream().to_string().replace(' ', "");
            if let Some(reason) = unsupported(level, &key) {
                errors.spanned(
                    &meta.path,
                    format!(
                        "`#[serde({key})]` is not supported by `#[derive(ToolSchema)]`: {reason}"
                    ),
                );
                return skip_value(&meta);
            }
            read_key(&mut out, level, &key, &meta, errors)
        });
        // Malformed attributes are serde's to report; ours would only repeat them.
        drop(result);
    }
    out
}

fn read_key(
    out: &mut SerdeAttrs,
    level: Level,
    key: &str,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    match key {
        "rename" => {
            out.rename = rename(meta)?;
        }
        "alias" => out.aliases.push(string(meta)?),
        "rename_all" => {
            let (ser, de) = ser_de(meta)?;
            // An unknown rule is serde's error to report; the schema then keeps names as written.
            let rule = |lit: Option<LitStr>| {
                lit.and_then(|lit| RenameRule::parse(&lit.value()).ok())
                    .unwrap_or(RenameRule::None)
            };
            let (ser, de) = (rule(ser), rule(de));
            if ser != de {
                errors.spanned(
                    &meta.path,
                    "`#[serde(rename_all(serialize = .., deserialize = ..))]` with different rules is not supported by `#[derive(ToolSchema)]`: one schema describes both directions",
                );
            }
            out.rename_all = Some(de);
        }
        "deny_unknown_fields" => out.deny_unknown_fields = true,
        "default" => {
            skip_value(meta)?;
            out.default = true;
        }
        "transparent" => out.transparent = true,
        "tag" => out.tag = Some(string(meta)?),
        "content" => out.content = Some(string(meta)?),
        "untagged" => out.untagged = true,
        "flatten" => out.flatten = true,
        "skip" => {
            out.skip_deserializing = true;
            out.skip_serializing
                .get_or_insert_with(|| meta.path.to_token_stream());
        }
        "skip_deserializing" => out.skip_deserializing = true,
        "skip_serializing" | "skip_serializing_if" => {
            skip_value(meta)?;
            if level == Level::Field {
                out.skip_serializing
                    .get_or_insert_with(|| meta.path.to_token_stream());
            }
        }
        // Harmless: they change bounds, paths or messages, not what is read.
        _ => skip_value(meta)?,
    }
    Ok(())
}

/// `key = "value"`.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

/// `key = "x"` (both directions) or `key(serialize = "a", deserialize = "b")`.
fn ser_de(meta: &ParseNestedMeta<'_>) -> syn::Result<(Option<LitStr>, Option<LitStr>)> {
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok((Some(lit.clone()), Some(lit)));
    }
    let (mut ser, mut de) = (None, None);
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            ser = Some(inner.value()?.parse()?);
        } else if inner.path.is_ident("deserialize") {
            de = Some(inner.value()?.parse()?);
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok((ser, de))
}

/// `rename`: like [`ser_de`], but a field or variant may list several `deserialize` names.
fn rename(meta: &ParseNestedMeta<'_>) -> syn::Result<Rename> {
    let tokens = Some(meta.path.to_token_stream());
    if meta.input.peek(Token![=]) {
        let name = string(meta)?;
        return Ok(Rename {
            ser: Some(name.clone()),
            de: vec![name],
            tokens,
        });
    }
    let mut rename = Rename {
        tokens,
        ..Rename::default()
    };
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            rename.ser = Some(string(&inner)?);
        } else if inner.path.is_ident("deserialize") {
            rename.de.push(string(&inner)?);
        } else {
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(rename)
}

/// Consumes whatever follows a key: `= expr`, `(...)` or nothing.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}
