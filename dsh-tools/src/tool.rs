//! The trait route: a typed [`Tool`] a struct implements by hand, beside the `#[tool]` macro.
//!
//! Both routes end in the same [`ToolDefinition`] (parameter schema from `Args`, output schema
//! from `Output`, validation before the body, the error's text to the model), registered the
//! same way. The macro is sugar for the trait: `#[tool] async fn read_file(..)` generates
//! `read_file::Tool`, a unit struct that implements [`Tool`] (`Args = read_file::Args`, `call`
//! runs the function, `into_definition` is `read_file::definition()`, which also carries the
//! presenters the trait has no words for), so code generic over `T: Tool` takes both.
//! `#[tool_set]` methods share an instance and are a [`ToolSet`](crate::ToolSet) instead.
//! Which one to use:
//!
//! - **`#[tool]` on an `async fn`** for most tools: the arguments struct, its schema and the
//!   definition are generated from the signature and `///` docs; presenters and renderers are
//!   options of the attribute.
//! - **`impl Tool`** when the tool is a value: it holds configuration or clients
//!   (`struct Search { client: Client }`), its name or description is computed, one type is
//!   instantiated several times, or it is written in a library that does not want the macro.
//!   `Args` is any type with `ToolSchema + DeserializeOwned` (usually a
//!   `#[derive(Deserialize, ToolSchema)]` struct, where constraint attributes go).

use std::borrow::Cow;
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::definition::{Callers, Loading, ToolAnnotations, ToolDefinition};
use crate::error::{DefinitionError, ToolError};
use crate::exec::ToolRunContext;
use crate::schema::ToolSchema;

/// How a [`Tool`] is scheduled and described beyond its schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolOptions {
    /// The deadline in milliseconds (`None`: no deadline of its own).
    pub timeout_ms: Option<u64>,
    /// Every call may run beside other parallel-safe calls.
    pub concurrency_safe: bool,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Who may call the tool (default: both the model and Code Mode programs).
    pub callers: Callers,
    /// Whether the tool is loaded up front or found on demand (default: as the registry's
    /// threshold decides).
    pub loading: Loading,
    /// The budget of each result's model-facing content, in tokens (`None`: the scope's or the
    /// registry's).
    pub max_result_tokens: Option<usize>,
    /// Every call asks for approval first (see
    /// [`ToolDefinition::requires_approval`]).
    pub requires_approval: bool,
}

impl ToolOptions {
    /// Sets [`ToolOptions::timeout_ms`].
    #[must_use]
    pub fn timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// Sets [`ToolOptions::concurrency_safe`].
    #[must_use]
    pub fn concurrency_safe(mut self, safe: bool) -> Self {
        self.concurrency_safe = safe;
        self
    }

    /// Sets [`ToolOptions::callers`].
    #[must_use]
    pub fn callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// Sets [`ToolOptions::loading`].
    #[must_use]
    pub fn loading(mut self, loading: Loading) -> Self {
        self.loading = loading;
        self
    }

    /// Sets [`ToolOptions::max_result_tokens`].
    #[must_use]
    pub fn max_result_tokens(mut self, max_tokens: usize) -> Self {
        self.max_result_tokens = Some(max_tokens);
        self
    }

    /// Sets [`ToolOptions::requires_approval`].
    #[must_use]
    pub fn requires_approval(mut self) -> Self {
        self.requires_approval = true;
        self
    }

    /// Sets [`ToolOptions::annotations`].
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }
}

/// A tool implemented by hand (see the [module documentation](self) for when to prefer it over
/// `#[tool]`).
///
/// ```
/// use dsh_tools::ToolSchema;
/// use dsh_tools::tool::{Tool, ToolOptions};
/// use dsh_tools::ToolRunContext;
/// use serde::Deserialize;
/// use serde_json::json;
///
/// #[derive(Deserialize, ToolSchema)]
/// struct GreetArgs {
///     /// Who to greet.
///     #[schema(length(min = 1, max = 40))]
///     name: String,
/// }
///
/// struct Greeter {
///     greeting: String,
/// }
///
/// impl Tool for Greeter {
///     type Args = GreetArgs;
///     type Output = String;
///     type Error = std::convert::Infallible;
///     const NAME: &'static str = "greet";
///
///     fn description(&self) -> std::borrow::Cow<'static, str> {
///         "Greet someone.".into()
///     }
///
///     fn options(&self) -> ToolOptions {
///         ToolOptions::default().concurrency_safe(true)
///     }
///
///     async fn call(&self, args: GreetArgs, _ctx: ToolRunContext) -> Result<String, Self::Error> {
///         Ok(format!("{}, {}!", self.greeting, args.name))
///     }
/// }
///
/// let def = Greeter { greeting: "Hello".into() }.into_definition().unwrap();
/// assert_eq!(def.name(), "greet");
/// assert_eq!(def.parameters()["properties"]["name"]["maxLength"], json!(40));
/// let err = def.validate_args(&json!({"name": ""})).unwrap_err();
/// assert_eq!(err.to_string(), "invalid arguments: \"name\" must be at least 1 character long");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    note = "implement `dsh_tools::tool::Tool` for it, or write the tool as an `async fn` with `#[tool]`"
)]
pub trait Tool: Send + Sync + Sized + 'static {
    /// The arguments the model writes (their schema is the tool's parameters).
    type Args: ToolSchema + DeserializeOwned + Send;
    /// What the tool returns (its schema is the output schema).
    type Output: ToolSchema + Serialize;
    /// A failure; its text is what the model reads.
    type Error: Display;
    /// The tool's name, as the model calls it.
    const NAME: &'static str;

    /// What the tool does, for the model.
    fn description(&self) -> Cow<'static, str>;

    /// Scheduling and hints (default: exclusive, no deadline, no hints).
    fn options(&self) -> ToolOptions {
        ToolOptions::default()
    }

    /// The body: runs with arguments that passed validation.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolRunContext,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;

    /// The tool's definition, checked as `#[tool]`'s is (name, description, schemas).
    fn into_definition(self) -> Result<ToolDefinition, DefinitionError> {
        let description = self.description();
        let options = self.options();
        let tool = Arc::new(self);
        let mut builder = ToolDefinition::builder(Self::NAME)
            .description(description)
            .parameters_spec(&<Self::Args as ToolSchema>::SCHEMA)
            .output_spec(&<Self::Output as ToolSchema>::SCHEMA)
            .concurrency_safe(options.concurrency_safe)
            .annotations(options.annotations)
            .callers(options.callers)
            .loading(options.loading);
        if let Some(timeout_ms) = options.timeout_ms {
            builder = builder.timeout_ms(timeout_ms);
        }
        if let Some(max_tokens) = options.max_result_tokens {
            builder = builder.max_result_tokens(max_tokens);
        }
        if options.requires_approval {
            builder = builder.requires_approval();
        }
        builder
            .execute(move |args, ctx| {
                let tool = Arc::clone(&tool);
                async move {
                    let args = crate::__private::deserialize_args::<Self::Args>(&args)?;
                    match tool.call(args, ctx).await {
                        Ok(output) => crate::__private::output_value(&output),
                        Err(error) => Err(ToolError::msg(error)),
                    }
                }
            })
            .build()
    }
}
