//! Tool definitions (`docs/CONTRACTS.md`, "Tools and results"): the model-facing schema plus the
//! canonical output declaration, the body, and the presentation hooks.

mod builder;
mod callbacks;
mod callers;
mod loading;
mod undeclared;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{ContentBlock, ToolResult};
use crate::error::{ToolArgsError, ToolError};
use crate::exec::{ToolExecution, ToolExecutionResult, ToolRunContext};
use crate::present::{ToolCallView, ToolResultView};
use crate::subset::CompiledSchema;

pub use builder::{ToolBuilder, default_render, is_valid_tool_name};
pub use callbacks::{
    BoxFuture, Concurrency, ExecuteFn, FinalizeFn, MetaFn, PresentCallFn, PresentResultFn,
    RenderFn, ResultHintFn,
};
pub use callers::{Callers, UnknownCallers};
pub use loading::Loading;
pub use undeclared::undeclared_keys_note;

/// The model-facing projection of a tool: exactly `{name, description, parameters}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchemaWire {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Behaviour hints a host may forward (e.g. MCP tool annotations). All default to "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no additional effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world (the network, other agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

#[derive(Clone)]
pub(crate) struct Inner {
    /// Shared: each execution's record of the name it runs under is this very string.
    pub(crate) name: Arc<str>,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) validator: Option<CompiledSchema>,
    pub(crate) output_schema: Value,
    pub(crate) output_validator: CompiledSchema,
    /// `None`: the default renderer (a string raw, anything else as JSON in the caller's layout).
    pub(crate) render: Option<RenderFn>,
    pub(crate) presentation_meta: Option<MetaFn>,
    pub(crate) execute: ExecuteFn,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) concurrency: Concurrency,
    pub(crate) finalize_content: Option<FinalizeFn>,
    pub(crate) present_call: Option<PresentCallFn>,
    pub(crate) present_result: Option<PresentResultFn>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) callers: Callers,
    pub(crate) loading: Loading,
    pub(crate) max_result_tokens: Option<usize>,
    pub(crate) result_hint: Option<ResultHintFn>,
    pub(crate) requires_approval: bool,
    /// The host state the body reads.
    pub(crate) states: Vec<crate::exec::StateNeed>,
    /// The declared parameter names when the object is open by default
    /// ([`undeclared::declared_if_open`]): calls are checked for undeclared keys. Decided once,
    /// so a closed tool pays one branch per call.
    pub(crate) open_declared: Option<Arc<[String]>>,
}

/// A complete tool: schema, output contract, body and presentation hooks.
///
/// Cheap to clone (one `Arc`). Built by `#[tool]`, by `#[tool_set]`, or by [`ToolDefinition::builder`]
/// for closures and raw JSON schemas.
///
/// ```
/// use dsh_tools::ToolDefinition;
/// use serde_json::json;
///
/// let echo = ToolDefinition::builder("echo")
///     .description("Echo the text back.")
///     .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .output_json(json!({"type": "string"}))
///     .execute(|args, _ctx| async move { Ok(args["text"].clone()) })
///     .build()
///     .unwrap();
/// assert_eq!(echo.name(), "echo");
/// let err = echo.validate_args(&json!({"text": 1})).unwrap_err();
/// assert_eq!(err.to_string(), "invalid arguments: \"text\" must be a string");
/// ```
#[derive(Clone)]
pub struct ToolDefinition {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.inner.name)
            .field("parameters", &self.inner.parameters)
            .field("output_schema", &self.inner.output_schema)
            .field("timeout_ms", &self.inner.timeout_ms)
            .field("callers", &self.inner.callers)
            .field("loading", &self.inner.loading)
            .field("max_result_tokens", &self.inner.max_result_tokens)
            .finish_non_exhaustive()
    }
}

impl ToolDefinition {
    /// Starts building a definition from closures and JSON schemas.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(name.into())
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The tool's name, shared (a pipeline's record of an execution keeps it without a copy).
    pub fn name_shared(&self) -> Arc<str> {
        Arc::clone(&self.inner.name)
    }

    /// The tool's description.
    pub fn description(&self) -> &str {
        &self.inner.description
    }

    /// The JSON Schema of the arguments object.
    pub fn parameters(&self) -> &Value {
        &self.inner.parameters
    }

    /// The model-facing projection `{name, description, parameters}`.
    pub fn schema(&self) -> ToolSchemaWire {
        ToolSchemaWire {
            name: self.inner.name.to_string(),
            description: self.inner.description.clone(),
            parameters: self.inner.parameters.clone(),
        }
    }

    /// The output schema (inside the reference subset).
    pub fn output_schema(&self) -> &Value {
        &self.inner.output_schema
    }

    /// The compiled output validator.
    pub fn output_validator(&self) -> &CompiledSchema {
        &self.inner.output_validator
    }

    /// Whether arguments are validated against the parameter schema before the body runs.
    /// Raw tools (e.g. imported from MCP) validate their own input.
    pub fn validates_args(&self) -> bool {
        self.inner.validator.is_some()
    }

    /// Validates model-written arguments (always `Ok` for raw tools).
    pub fn validate_args(&self, args: &Value) -> Result<(), ToolArgsError> {
        match &self.inner.validator {
            Some(validator) => crate::args::validate_args(validator, args),
            None => Ok(()),
        }
    }

    /// Runs the tool: validates the arguments (→ `INVALID_ARGS`), then calls the body.
    pub fn execute(
        &self,
        args: Arc<Value>,
        ctx: ToolRunContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        if let Err(error) = self.validate_args(&args) {
            return Box::pin(std::future::ready(Err(error.into())));
        }
        self.note_undeclared_keys(&args, &ctx);
        (self.inner.execute)(args, ctx)
    }

    /// Defers the note naming the keys an open parameter object does not declare
    /// ([`undeclared_keys_note`]), if any.
    fn note_undeclared_keys(&self, args: &Value, ctx: &ToolRunContext) {
        let Some(declared) = &self.inner.open_declared else {
            return;
        };
        let Some(keys) = args.as_object() else {
            return;
        };
        if keys
            .keys()
            .all(|key| declared.iter().any(|name| name == key))
        {
            return;
        }
        if let Some(note) = undeclared_keys_note(self.name(), self.parameters(), args) {
            ctx.defer_context(note);
        }
    }

    /// Runs the tool on arguments the caller has already validated against this definition
    /// ([`validate_args`](Self::validate_args) returned `Ok` for exactly this value, or
    /// [`is_concurrency_safe`](Self::is_concurrency_safe) returned `true`): the body is called
    /// without validating them a second time. A runtime seam (a batch classifies each call,
    /// which validates it, before running it); use [`execute`](Self::execute) otherwise.
    pub fn execute_prevalidated(
        &self,
        args: Arc<Value>,
        ctx: ToolRunContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        self.note_undeclared_keys(&args, &ctx);
        (self.inner.execute)(args, ctx)
    }

    /// Renders the model-facing content of a canonical value: the tool's renderer, or without
    /// one [`default_render`] (pretty JSON, the reference's form).
    pub fn render(&self, args: &Value, value: &Value) -> Vec<ContentBlock> {
        self.render_with(args, value, crate::json::ResultJson::Pretty)
    }

    /// The same, a tool without a renderer of its own laying its value out as `json` (the
    /// registry's [`ResultJson`](crate::json::ResultJson) setting).
    pub fn render_with(
        &self,
        args: &Value,
        value: &Value,
        json: crate::json::ResultJson,
    ) -> Vec<ContentBlock> {
        match &self.inner.render {
            Some(render) => render(args, value),
            None => vec![ContentBlock::text(json.render(value))],
        }
    }

    /// Computes the presentation payload of a top-level success, if the tool declares one.
    pub fn presentation_meta(&self, args: &Value, value: &Value) -> Option<Value> {
        self.inner
            .presentation_meta
            .as_ref()
            .map(|meta| meta(args, value))
    }

    /// Whether the tool declares a presentation payload.
    pub fn has_presentation_meta(&self) -> bool {
        self.inner.presentation_meta.is_some()
    }

    /// The tool's declared deadline in milliseconds (enforced by the runtime's timeout policy).
    pub fn timeout_ms(&self) -> Option<u64> {
        self.inner.timeout_ms
    }

    /// Whether a call with these (raw) arguments may overlap other parallel calls. Invalid
    /// arguments are never concurrency-safe.
    pub fn is_concurrency_safe(&self, args: &Value) -> bool {
        match &self.inner.concurrency {
            Concurrency::Exclusive => false,
            Concurrency::Parallel => self.validate_args(args).is_ok(),
            Concurrency::Classify(classify) => self.validate_args(args).is_ok() && classify(args),
        }
    }

    /// Whether the tool declares a concurrency classification at all.
    pub fn has_concurrency_classifier(&self) -> bool {
        !matches!(self.inner.concurrency, Concurrency::Exclusive)
    }

    /// Calls the tool's content finaliser, if any: `Some(blocks)` replaces the final content.
    pub fn finalize_content(
        &self,
        exec: &ToolExecution,
        result: &ToolExecutionResult,
    ) -> Option<Vec<ContentBlock>> {
        self.inner
            .finalize_content
            .as_ref()
            .and_then(|f| f(exec, result))
    }

    /// The finaliser itself (the pipeline captures it when an execution starts).
    pub fn finalizer(&self) -> Option<FinalizeFn> {
        self.inner.finalize_content.clone()
    }

    /// The pending-call card. Soft: `None` when the tool declares none or the arguments do not
    /// validate (a replayed old log must never crash a UI).
    pub fn present_call(&self, args: &Value) -> Option<ToolCallView> {
        let present = self.inner.present_call.as_ref()?;
        self.validate_args(args).ok()?;
        present(args)
    }

    /// The completed-call card. Soft, like [`ToolDefinition::present_call`].
    pub fn present_result(&self, args: &Value, result: &ToolResult) -> Option<ToolResultView> {
        let present = self.inner.present_result.as_ref()?;
        self.validate_args(args).ok()?;
        present(args, result)
    }

    /// Whether the tool declares a call presenter / a result presenter.
    pub fn has_presenters(&self) -> (bool, bool) {
        (
            self.inner.present_call.is_some(),
            self.inner.present_result.is_some(),
        )
    }

    /// Behaviour hints.
    pub fn annotations(&self) -> ToolAnnotations {
        self.inner.annotations
    }

    /// Who may call the tool: the model directly, a Code Mode program, or both (the default).
    pub fn callers(&self) -> Callers {
        self.inner.callers
    }

    /// Whether the tool is loaded up front or found on demand (see [`Loading`]).
    pub fn loading(&self) -> Loading {
        self.inner.loading
    }

    /// This definition marked `loading` (a new definition sharing everything else; the
    /// original is unchanged). See [`Loading`].
    #[must_use]
    pub fn with_loading(&self, loading: Loading) -> ToolDefinition {
        ToolDefinition {
            inner: Arc::new(Inner {
                loading,
                ..self.inner.as_ref().clone()
            }),
        }
    }

    /// The tool's own budget for the model-facing content of its results, in tokens
    /// (`docs/CONTRACTS.md`, "Result budgets"); `None` leaves it to the scope and the registry.
    pub fn max_result_tokens(&self) -> Option<usize> {
        self.inner.max_result_tokens
    }

    /// How to get the rest of a result cut to its budget, from the call's arguments (e.g.
    /// `continue with offset 2001`); `None` when the tool gives no hint (a generic one is used,
    /// as for an empty hint). Called only when a result is cut.
    pub fn result_hint(&self, args: &Value) -> Option<String> {
        self.inner.result_hint.as_ref().map(|hint| hint(args))
    }

    /// Whether every call of the tool asks for approval first (`docs/CONTRACTS.md`, "Stages",
    /// stage 5): set with [`ToolBuilder::requires_approval`] or `#[tool(requires_approval)]`.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use serde_json::json;
    /// let delete = ToolDefinition::builder("delete_branch")
    ///     .description("Delete a git branch.")
    ///     .requires_approval()
    ///     .execute(|_, _| async { Ok(json!("deleted")) })
    ///     .build()
    ///     .unwrap();
    /// assert!(delete.requires_approval());
    /// ```
    pub fn requires_approval(&self) -> bool {
        self.inner.requires_approval
    }

    /// The host state the body reads ([`ToolBuilder::needs_state`], a `#[tool]`'s `State<T>`
    /// parameters).
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use serde_json::json;
    /// let tool = ToolDefinition::builder("query")
    ///     .description("Query the host's database.")
    ///     .needs_state::<String>()
    ///     .execute(|_, _| async { Ok(json!(null)) })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(tool.needed_states()[0].type_name(), "alloc::string::String");
    /// ```
    pub fn needed_states(&self) -> &[crate::exec::StateNeed] {
        &self.inner.states
    }

    /// Whether two handles point at the same definition.
    pub fn ptr_eq(&self, other: &ToolDefinition) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
