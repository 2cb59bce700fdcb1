//! The front end of `#[tool]`: a function signature and its options, checked, turned into a
//! [`ToolSig`] that the code generators only read.

use syn::ext::IdentExt as _;
use syn::{Attribute, FnArg, Ident, Pat, ReceiverKind, ReturnType, Signature, Type};

use super::check;
use crate::attr::ToolOptions;
use crate::constraints::Constraints;
use crate::errors::Errors;
use crate::{docs, types};

/// Where the function lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// A free `async fn`.
    Free,
    /// A `&self` method of a `#[tool_set]` impl block.
    Method,
}

/// What a parameter receives.
#[derive(Debug, Clone)]
pub(crate) enum ParamKind {
    /// A model-written argument: a property of the arguments object.
    Model {
        /// The wire name (the identifier without `r#`, or `#[schema(rename)]`).
        wire: String,
        /// The `///` docs of the parameter (or `#[schema(description)]`).
        description: Option<String>,
        /// `#[schema]` / `#[schemars]` / `#[validate]` constraints.
        constraints: Box<Constraints>,
    },
    /// The run context (`ToolRunContext`, by value or by reference).
    Context {
        /// Whether the parameter is `&ToolRunContext`.
        by_ref: bool,
    },
    /// Host state (`State<T>`).
    State,
}

/// One parameter.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// The identifier as written (the field name of the arguments struct).
    pub(crate) ident: Ident,
    /// The type as written.
    pub(crate) ty: Type,
    /// What it receives.
    pub(crate) kind: ParamKind,
}

/// The shape of what the body returns.
#[derive(Debug, Clone)]
pub(crate) enum Output {
    /// No return type, or `()`: the output is `null`.
    Unit,
    /// A serialisable value.
    Value(Type),
    /// `Result<T, E>`: `T` is the output, `E: Display` a tool error.
    Result(Type),
    /// `Vec<ContentBlock>` (possibly inside a `Result`): the tool returns content itself.
    Content {
        /// Whether it is wrapped in `Result`.
        fallible: bool,
    },
}

impl Output {
    /// The output value's type (for schemas and assertions), if it has a schema.
    pub(crate) fn value_type(&self) -> Option<&Type> {
        match self {
            Output::Value(ty) | Output::Result(ty) => Some(ty),
            Output::Unit | Output::Content { .. } => None,
        }
    }
}

/// A checked `#[tool]` signature.
pub(crate) struct ToolSig {
    /// The function's identifier.
    pub(crate) ident: Ident,
    /// The tool's name.
    pub(crate) name: String,
    /// The description for the model.
    pub(crate) description: String,
    /// The parameters, in order.
    pub(crate) params: Vec<Param>,
    /// The output.
    pub(crate) output: Output,
    /// The options.
    pub(crate) options: ToolOptions,
}

impl ToolSig {
    /// The model-written parameters.
    pub(crate) fn model_params(&self) -> impl Iterator<Item = (&Param, &str, Option<&str>)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Model {
                wire, description, ..
            } => Some((p, wire.as_str(), description.as_deref())),
            _ => None,
        })
    }
}

impl Param {
    /// Whether the parameter's schema comes from `#[schema(with = "path")]` (its type then
    /// needs no `ToolSchema` of its own).
    pub(crate) fn has_schema_override(&self) -> bool {
        matches!(&self.kind, ParamKind::Model { constraints, .. } if constraints.with.is_some())
    }
}

/// Checks a signature, pushing every problem into `errors`; the returned signature holds what
/// could be read, so the caller can still emit the function and stubs next to the errors.
pub(crate) fn analyse(
    sig: &Signature,
    attrs: &[Attribute],
    options: ToolOptions,
    site: Site,
    errors: &mut Errors,
) -> ToolSig {
    check_header(sig, site, errors);
    let params = params(sig, site, errors);
    let output = output(&sig.output, errors);
    if let (Some(render), Output::Content { .. }) = (&options.render, &output) {
        errors.spanned(render, "`render` does not apply to a tool that returns `Vec<ContentBlock>`: its content is the return value");
    }
    let description = match &options.description {
        Some(text) if !text.value().trim().is_empty() => Some(text.value().trim().to_owned()),
        Some(text) => {
            errors.spanned(text, "`description` must not be empty");
            Some(String::new())
        }
        None => docs::description(attrs),
    };
    let description = description.unwrap_or_else(|| {
        errors.spanned(&sig.ident, "`#[tool]` functions need a description for the model: add a `///` doc comment or `#[tool(description = \"...\")]`");
        String::new()
    });
    let name = check::name(&options, &sig.ident, errors);
    check::timeout(&options, errors);
    check::max_result_tokens(&options, errors);
    check::callers(&options, errors);
    check::loading(&options, errors);
    ToolSig {
        ident: sig.ident.clone(),
        name,
        description,
        params,
        output,
        options,
    }
}

fn check_header(sig: &Signature, site: Site, errors: &mut Errors) {
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            "`#[tool]` functions must be `async`: write `async fn`",
        );
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(constness, "`#[tool]` functions cannot be `const`");
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.spanned(token, "`#[tool]` functions cannot be `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "`#[tool]` functions cannot declare an ABI");
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "`#[tool]` functions cannot be variadic");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "`#[tool]` functions cannot be generic: the parameter and output types must be concrete to describe them to the model",
        );
    }
    if site == Site::Method && sig.receiver().is_none() {
        errors.spanned(
            &sig.ident,
            "`#[tool]` methods of a `#[tool_set]` must take `&self`",
        );
    }
}

fn params(sig: &Signature, site: Site, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    let mut has_context = false;
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                check_receiver(receiver, site, errors);
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let Some(ident) = param_ident(&typed.pat, errors) else {
            continue;
        };
        let ty = (*typed.ty).clone();
        let mentions = types::mentions(&ty);
        if let Some(span) = mentions.impl_trait {
            errors.spanned(span, "`#[tool]` parameters cannot be `impl Trait`: name a concrete type the arguments can be read into");
            continue;
        }
        let constraints = Constraints::parse(&typed.attrs, errors);
        if classify(&ty).is_some() && !constraints.is_empty() {
            errors.spanned(
                &ty,
                "constraint attributes do not apply to a `ToolRunContext` or `State` parameter: the model never writes it",
            );
        }
        let kind = match classify(&ty) {
            Some(kind @ ParamKind::Context { .. }) => {
                if has_context {
                    errors.spanned(
                        &ty,
                        "a `#[tool]` function takes at most one `ToolRunContext` parameter",
                    );
                    continue;
                }
                has_context = true;
                kind
            }
            Some(kind) => kind,
            None => {
                if let Some(span) = mentions.reference {
                    errors.spanned(span, "`#[tool]` parameters must be owned types (arguments are read from JSON): use `String` for `&str`, `Vec<T>` for `&[T]`");
                    continue;
                }
                if site == Site::Method
                    && let Some(span) = mentions.self_type
                {
                    errors.spanned(span, "`#[tool_set]` parameter types cannot name `Self` (the arguments struct lives outside the impl block): write the type's name");
                    continue;
                }
                ParamKind::Model {
                    wire: constraints
                        .rename
                        .as_ref()
                        .map_or_else(|| ident.unraw().to_string(), syn::LitStr::value),
                    description: constraints
                        .description
                        .clone()
                        .or_else(|| docs::description(&typed.attrs)),
                    constraints: Box::new(constraints),
                }
            }
        };
        params.push(Param { ident, ty, kind });
    }
    params
}

fn check_receiver(receiver: &syn::Receiver, site: Site, errors: &mut Errors) {
    let shared_ref = matches!(&receiver.kind, ReceiverKind::Reference(_, _, None));
    match site {
        Site::Free => errors.spanned(receiver, "a free `#[tool]` function cannot take `self`: put `#[tool_set]` on the impl block to turn its `#[tool]` methods into tools of an instance"),
        Site::Method if !shared_ref => errors.spanned(receiver, "`#[tool_set]` tools take `&self`: the instance is shared by every call through an `Arc`"),
        Site::Method => {}
    }
}

fn param_ident(pat: &Pat, errors: &mut Errors) -> Option<Ident> {
    match pat {
        Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
            Some(ident.ident.clone())
        }
        _ => {
            errors.spanned(pat, "`#[tool]` parameters must be plain names (`path: String`): the name is the argument the model writes");
            None
        }
    }
}

/// Recognises the parameters the model never sees, by the last segment of their type.
fn classify(ty: &Type) -> Option<ParamKind> {
    if types::is_named(ty, "ToolRunContext") {
        return Some(ParamKind::Context { by_ref: false });
    }
    if let Type::Reference(reference) = types::peel(ty)
        && reference.mutability.is_none()
        && types::is_named(&reference.elem, "ToolRunContext")
    {
        return Some(ParamKind::Context { by_ref: true });
    }
    if types::is_named(ty, "State") && types::type_args(ty).len() == 1 {
        return Some(ParamKind::State);
    }
    None
}

fn output(ret: &ReturnType, errors: &mut Errors) -> Output {
    let ReturnType::Type(_, ty) = ret else {
        return Output::Unit;
    };
    if let Some(span) = types::mentions(ty).impl_trait {
        errors.spanned(
            span,
            "`#[tool]` functions cannot return `impl Trait`: name the output type",
        );
        return Output::Unit;
    }
    if types::is_unit(ty) {
        return Output::Unit;
    }
    if types::is_content(ty) {
        return Output::Content { fallible: false };
    }
    if types::is_named(ty, "Result")
        && let Some(ok) = types::type_args(ty).first()
    {
        if types::is_content(ok) {
            return Output::Content { fallible: true };
        }
        return Output::Result((*ok).clone());
    }
    Output::Value((**ty).clone())
}
