//! The front end of `#[derive(ToolSchema)]`: a `DeriveInput` and its serde attributes, checked,
//! turned into wire names and flags the code generators only read.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt as _;
use syn::{Data as SynData, DeriveInput, Fields, Ident, Type};

use super::attr::{self, Level, SerdeAttrs};
use crate::case::RenameRule;
use crate::constraints::Constraints;
use crate::errors::Errors;
use crate::{docs, types};

/// The shape of a struct or a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `{ a: A }`.
    Named,
    /// `(A)`.
    Newtype,
    /// `()`-less unit.
    Unit,
}

/// One field, as serde reads it.
pub(crate) struct Field<'a> {
    /// The field's type.
    pub(crate) ty: &'a Type,
    /// The key serde reads (and writes).
    pub(crate) wire: String,
    /// The `///` docs.
    pub(crate) description: Option<String>,
    /// `#[serde(default)]` (on the field or its container): may be absent.
    pub(crate) default: bool,
    /// `#[serde(flatten)]`.
    pub(crate) flatten: bool,
    /// Whether serde also reads the field under another name.
    pub(crate) alias: bool,
    /// `#[schema]` / `#[schemars]` / `#[validate]` constraints.
    pub(crate) constraints: Constraints,
}

/// One enum variant, as serde reads it.
pub(crate) struct Variant<'a> {
    /// The name serde reads (and writes).
    pub(crate) wire: String,
    /// The `///` docs.
    pub(crate) description: Option<String>,
    /// Its shape.
    pub(crate) style: Style,
    /// Its fields (named, or the single newtype field).
    pub(crate) fields: Vec<Field<'a>>,
}

/// The body of the type.
pub(crate) enum Data<'a> {
    /// A struct; for `Named`, the fields that serde reads (skipped ones are gone).
    Struct(Style, Vec<Field<'a>>),
    /// An enum's variants that serde reads.
    Enum(Vec<Variant<'a>>),
}

/// The checked type.
pub(crate) struct Container<'a> {
    /// The input.
    pub(crate) input: &'a DeriveInput,
    /// The `///` docs.
    pub(crate) description: Option<String>,
    /// The container's serde attributes.
    pub(crate) attrs: SerdeAttrs,
    /// The name serde writes for the type (the value of a struct's `tag`).
    pub(crate) ser_name: String,
    /// The body.
    pub(crate) data: Data<'a>,
}

impl<'a> Container<'a> {
    /// Reads and checks the input, reporting every problem into `errors`.
    pub(crate) fn from_ast(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        let attrs = attr::parse(&input.attrs, Level::Container, errors);
        let rule = attrs.rename_all.unwrap_or(RenameRule::None);
        let data = match &input.data {
            SynData::Struct(data) => {
                let style = style(&data.fields, errors)?;
                let fields = fields(&data.fields, rule, attrs.default, errors);
                check_struct(input, &attrs, style, &fields, errors);
                Data::Struct(style, fields)
            }
            SynData::Enum(data) => {
                let variants: Vec<Variant<'a>> = data
                    .variants
                    .iter()
                    .filter_map(|v| variant(v, rule, &attrs, errors))
                    .collect();
                if variants.is_empty() {
                    errors.spanned(
                        &input.ident,
                        "`#[derive(ToolSchema)]` needs at least one variant that serde can read",
                    );
                }
                Data::Enum(variants)
            }
            SynData::Union(data) => {
                errors.spanned(
                    data.union_token,
                    "`#[derive(ToolSchema)]` does not support unions",
                );
                return None;
            }
        };
        let ser_name = attrs
            .rename
            .ser
            .clone()
            .unwrap_or_else(|| input.ident.unraw().to_string());
        Some(Container {
            input,
            description: docs::description(&input.attrs),
            attrs,
            ser_name,
            data,
        })
    }

    /// The type's identifier.
    pub(crate) fn ident(&self) -> &Ident {
        &self.input.ident
    }
}

fn style(fields: &Fields, errors: &mut Errors) -> Option<Style> {
    match fields {
        Fields::Named(_) => Some(Style::Named),
        Fields::Unit => Some(Style::Unit),
        Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => Some(Style::Newtype),
        Fields::Unnamed(unnamed) => {
            errors.spanned(
                unnamed,
                "`#[derive(ToolSchema)]` does not support tuples of several fields (JSON arrays of mixed types are outside the schema subset): use named fields",
            );
            None
        }
    }
}

fn check_struct(
    input: &DeriveInput,
    attrs: &SerdeAttrs,
    style: Style,
    fields: &[Field<'_>],
    errors: &mut Errors,
) {
    if attrs.tag.is_some() && attrs.deny_unknown_fields {
        errors.spanned(
            &input.ident,
            "`#[serde(tag = \"...\")]` on a struct with `deny_unknown_fields` cannot be described: serde writes the tag but rejects it when reading",
        );
    }
    if attrs.transparent && style == Style::Named && fields.len() != 1 {
        errors.spanned(
            &input.ident,
            "`#[serde(transparent)]` needs exactly one field that is not skipped",
        );
    }
}

/// The fields serde reads, named by `rule`.
fn fields<'a>(
    fields: &'a Fields,
    rule: RenameRule,
    container_default: bool,
    errors: &mut Errors,
) -> Vec<Field<'a>> {
    let mut out = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        let attrs = attr::parse(&field.attrs, Level::Field, errors);
        if attrs.skip_deserializing {
            continue;
        }
        let default = attrs.default || container_default;
        if let Some(tokens) = &attrs.skip_serializing
            && !default
            && !types::is_option(&field.ty)
        {
            let key = tokens.to_string();
            errors.spanned(
                tokens,
                format!(
                    "`#[serde({key})]` leaves the field out of the output, so the schema cannot require it: add `#[serde(default)]` (or make the field an `Option`)"
                ),
            );
        }
        let ident = field.ident.as_ref().map(|i| i.unraw().to_string());
        let ident = ident.unwrap_or_else(|| index.to_string());
        let span = match &field.ident {
            Some(ident) => ident.to_token_stream(),
            None => field.ty.to_token_stream(),
        };
        let constraints = Constraints::parse(&field.attrs, errors);
        let (wire, alias) = names(&ident, NameOf::Field, &attrs, rule, span, errors);
        if let Some(rename) = &constraints.rename
            && rename.value() != wire
        {
            errors.spanned(rename, "a schema name that differs from the name serde reads cannot be described: use `#[serde(rename = \"...\")]`, which both read");
        }
        if attrs.flatten && !constraints.is_empty() {
            errors.spanned(&field.ty, "constraint attributes do not apply to a flattened field (put them on its own fields)");
        }
        out.push(Field {
            ty: &field.ty,
            wire,
            description: constraints
                .description
                .clone()
                .or_else(|| docs::description(&field.attrs)),
            default,
            flatten: attrs.flatten,
            alias,
            constraints,
        });
    }
    out
}

/// Whether a name belongs to a field or a variant (serde applies `rename_all` differently).
#[derive(Debug, Clone, Copy)]
enum NameOf {
    Field,
    Variant,
}

/// The wire name of a field or variant, and whether it has aliases. A name serde reads
/// differently from how it writes it is an error (one schema describes both directions).
fn names(
    ident: &str,
    of: NameOf,
    attrs: &SerdeAttrs,
    rule: RenameRule,
    span: TokenStream,
    errors: &mut Errors,
) -> (String, bool) {
    let renamed = |explicit: Option<&String>| match (explicit, of) {
        (Some(name), _) => name.clone(),
        (None, NameOf::Field) => rule.apply_to_field(ident),
        (None, NameOf::Variant) => rule.apply_to_variant(ident),
    };
    let ser = renamed(attrs.rename.ser.as_ref());
    let de = renamed(attrs.rename.de.first());
    if ser != de {
        let tokens = attrs.rename.tokens.clone().unwrap_or(span);
        errors.spanned(
            tokens,
            format!(
                "serde reads this as {de:?} but writes it as {ser:?}: `#[derive(ToolSchema)]` describes both with one schema, so use one name"
            ),
        );
    }
    let alias = attrs
        .rename
        .de
        .iter()
        .skip(1)
        .chain(&attrs.aliases)
        .any(|a| *a != de);
    (de, alias)
}

fn variant<'a>(
    variant: &'a syn::Variant,
    rule: RenameRule,
    container: &SerdeAttrs,
    errors: &mut Errors,
) -> Option<Variant<'a>> {
    let attrs = attr::parse(&variant.attrs, Level::Variant, errors);
    if attrs.skip_deserializing {
        return None;
    }
    let ident = variant.ident.unraw().to_string();
    // A variant's own aliases need no schema support: every representation names the
    // variant in a key or a `const` tag, which rejects the alias (narrower is sound).
    let (wire, _alias) = names(
        &ident,
        NameOf::Variant,
        &attrs,
        rule,
        variant.ident.to_token_stream(),
        errors,
    );
    let style = style(&variant.fields, errors)?;
    let field_rule = attrs.rename_all.unwrap_or(RenameRule::None);
    let fields = fields(&variant.fields, field_rule, false, errors);
    if style == Style::Newtype
        && container.tag.is_some()
        && container.content.is_none()
        && !container.untagged
        && fields.first().is_some_and(|f| types::is_option(f.ty))
    {
        errors.spanned(
            &variant.fields,
            "an internally tagged newtype variant of an `Option` cannot be described: serde reads the variant's other keys into it",
        );
    }
    Some(Variant {
        wire,
        description: docs::description(&variant.attrs),
        style,
        fields,
    })
}
