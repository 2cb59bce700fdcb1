//! Building a [`ToolDefinition`] from closures and JSON schemas.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::callbacks::{
    Concurrency, ExecuteFn, FinalizeFn, MetaFn, PresentCallFn, PresentResultFn, RenderFn,
    ResultHintFn,
};
use super::{Callers, Inner, Loading, ToolAnnotations, ToolDefinition};
use crate::content::{ContentBlock, ToolResult};
use crate::error::{DefinitionError, JsonSchemaError, ToolError};
use crate::exec::{ToolExecution, ToolExecutionResult, ToolRunContext};
use crate::present::{ToolCallView, ToolResultView};
use crate::schema::SchemaSpec;
use crate::subset::{CompiledSchema, Vocabulary};

/// Whether `name` is a valid tool name: `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`.
///
/// ```
/// assert!(dsh_tools::definition::is_valid_tool_name("read_file"));
/// assert!(!dsh_tools::definition::is_valid_tool_name("9lives"));
/// ```
pub fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || *first == b'_')
        && rest.len() <= 63
        && rest
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

enum Parameters {
    /// Compiled from a spec or checked JSON: validated before the body runs.
    Validated(Result<Value, JsonSchemaError>),
    /// Compiled from a spec: the schema shown to the model, and the one validated against
    /// (with the bounds of the Rust types' widths).
    Spec(Result<(Value, Value), JsonSchemaError>),
    /// Passed through verbatim; the body validates its own input.
    Raw(Value),
}

/// Builds a [`ToolDefinition`]; see [`ToolDefinition::builder`].
///
/// The definition-time checks are those of `#[tool]`: a valid name, a description, a positive
/// timeout, parameter and output schemas inside the supported subsets.
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolBuilder {
    name: String,
    description: Option<String>,
    parameters: Parameters,
    output: Result<Value, JsonSchemaError>,
    render: Option<RenderFn>,
    presentation_meta: Option<MetaFn>,
    execute: Option<ExecuteFn>,
    timeout_ms: Option<u64>,
    concurrency: Concurrency,
    finalize_content: Option<FinalizeFn>,
    present_call: Option<PresentCallFn>,
    present_result: Option<PresentResultFn>,
    annotations: ToolAnnotations,
    callers: Callers,
    loading: Loading,
    max_result_tokens: Option<usize>,
    result_hint: Option<ResultHintFn>,
    requires_approval: bool,
    states: Vec<crate::exec::StateNeed>,
}

impl ToolBuilder {
    pub(super) fn new(name: String) -> Self {
        Self {
            name,
            description: None,
            parameters: Parameters::Validated(Ok(empty_parameters())),
            output: Ok(Value::Object(serde_json::Map::new())),
            render: None,
            presentation_meta: None,
            execute: None,
            timeout_ms: None,
            concurrency: Concurrency::Exclusive,
            finalize_content: None,
            present_call: None,
            present_result: None,
            annotations: ToolAnnotations::default(),
            callers: Callers::Both,
            loading: Loading::Auto,
            max_result_tokens: None,
            result_hint: None,
            requires_approval: false,
            states: Vec::new(),
        }
    }

    /// The description shown to the model (required).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Parameters from a compile-time spec (an object spec, e.g. a derived struct's).
    pub fn parameters_spec(mut self, spec: &SchemaSpec) -> Self {
        self.parameters = Parameters::Spec(
            spec.to_shown_parameters_schema()
                .and_then(|shown| Ok((shown, spec.to_parameters_schema()?))),
        );
        self
    }

    /// Parameters from a JSON Schema in the parameter vocabulary (`docs/CONTRACTS.md`, "Schema
    /// vocabulary"); arguments are validated against it. A schema outside it (an invalid
    /// `pattern`, an unknown `format`, a `$ref` cycle without a base case …) fails `build` with
    /// `UNSUPPORTED_SCHEMA`, naming the path.
    pub fn parameters_json(mut self, schema: Value) -> Self {
        self.parameters = Parameters::Validated(
            crate::subset::assert_supported_in(&schema, Vocabulary::Parameters).map(|()| schema),
        );
        self
    }

    /// Parameters passed through verbatim and never validated by the harness (MCP-imported
    /// tools validate their own input). A raw tool may have an empty description (its source
    /// may not give one), though it must still set one.
    pub fn raw_parameters(mut self, schema: Value) -> Self {
        self.parameters = Parameters::Raw(schema);
        self
    }

    /// The output schema from a compile-time spec.
    pub fn output_spec(mut self, spec: &SchemaSpec) -> Self {
        self.output = spec.to_value_schema();
        self
    }

    /// The output schema as JSON, inside the output vocabulary (the reference subset plus
    /// tuples and local `$ref`s; `docs/CONTRACTS.md`, "Schema vocabulary").
    pub fn output_json(mut self, schema: Value) -> Self {
        self.output =
            crate::subset::assert_supported_in(&schema, Vocabulary::Output).map(|()| schema);
        self
    }

    /// Renders content from `(args, value)`. Without it, strings render raw and other values as
    /// JSON in the registry's layout ([`ResultJson`](crate::json::ResultJson): compact by
    /// default).
    pub fn render(
        mut self,
        render: impl Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync + 'static,
    ) -> Self {
        self.render = Some(Arc::new(render));
        self
    }

    /// Computes a presentation payload for top-level successes.
    pub fn presentation_meta(
        mut self,
        meta: impl Fn(&Value, &Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The body.
    pub fn execute<F, Fut>(mut self, body: F) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.execute = Some(Arc::new(move |args, ctx| Box::pin(body(args, ctx))));
        self
    }

    /// The body, already boxed (used by generated code).
    pub fn execute_boxed(mut self, body: ExecuteFn) -> Self {
        self.execute = Some(body);
        self
    }

    /// The deadline in milliseconds (must be positive).
    pub fn timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// Declares every call parallel-safe (`true`) or exclusive (`false`).
    pub fn concurrency_safe(mut self, safe: bool) -> Self {
        self.concurrency = if safe {
            Concurrency::Parallel
        } else {
            Concurrency::Exclusive
        };
        self
    }

    /// Classifies each call from its arguments.
    pub fn concurrency_classifier(
        mut self,
        classify: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency = Concurrency::Classify(Arc::new(classify));
        self
    }

    /// Rewrites the final content of each execution.
    pub fn finalize_content(
        mut self,
        finalize: impl Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.finalize_content = Some(Arc::new(finalize));
        self
    }

    /// The pending-call card.
    pub fn present_call(
        mut self,
        present: impl Fn(&Value) -> Option<ToolCallView> + Send + Sync + 'static,
    ) -> Self {
        self.present_call = Some(Arc::new(present));
        self
    }

    /// The completed-call card.
    pub fn present_result(
        mut self,
        present: impl Fn(&Value, &ToolResult) -> Option<ToolResultView> + Send + Sync + 'static,
    ) -> Self {
        self.present_result = Some(Arc::new(present));
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Who may call the tool (default [`Callers::Both`]; see [`Callers`]).
    pub fn callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// Whether the tool is loaded up front or found on demand (default [`Loading::Auto`]; see
    /// [`Loading`]).
    pub fn loading(mut self, loading: Loading) -> Self {
        self.loading = loading;
        self
    }

    /// The budget of each result's model-facing content, in tokens (must be positive); it wins
    /// over the scope's and the registry's (`docs/CONTRACTS.md`, "Result budgets").
    pub fn max_result_tokens(mut self, max_tokens: usize) -> Self {
        self.max_result_tokens = Some(max_tokens);
        self
    }

    /// How to get the rest of a result cut to its budget, computed from the call's arguments
    /// when (and only when) a result is cut; it goes into the cut marker.
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let read = ToolDefinition::builder("read_lines")
    ///     .description("Read lines of a file.")
    ///     .max_result_tokens(2_000)
    ///     .result_hint(|args| format!("read again with offset {}", args["offset"].as_u64().unwrap_or(1) + 1000))
    ///     .execute(|_, _| async { Ok(json!("…")) })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(read.max_result_tokens(), Some(2_000));
    /// assert_eq!(read.result_hint(&json!({"offset": 1})).as_deref(), Some("read again with offset 1001"));
    /// ```
    pub fn result_hint(mut self, hint: impl Fn(&Value) -> String + Send + Sync + 'static) -> Self {
        self.result_hint = Some(Arc::new(hint));
        self
    }

    /// Every call of this tool asks for approval first, through the pipeline's approval stage
    /// (`docs/CONTRACTS.md`, "Stages", stage 5): a pre-execute policy may still deny the call,
    /// but none can waive the approval. See [`ToolDefinition::requires_approval`].
    pub fn requires_approval(mut self) -> Self {
        self.requires_approval = true;
        self
    }

    /// The body reads host state of type `T` (`ToolRunContext::state::<T>()`; a `#[tool]`'s
    /// `State<T>` parameter says so itself): a registry that does not provide it refuses to
    /// build a prompt with this tool, naming the type, before a model can call it.
    pub fn needs_state<T: Send + Sync + 'static>(mut self) -> Self {
        let need = crate::exec::StateNeed::of::<T>();
        if !self.states.contains(&need) {
            self.states.push(need);
        }
        self
    }

    /// Checks everything and builds the definition.
    pub fn build(self) -> Result<ToolDefinition, DefinitionError> {
        let name = self.name;
        if self.timeout_ms == Some(0) {
            return Err(DefinitionError::NonPositiveTimeout { tool: name });
        }
        if self.max_result_tokens == Some(0) {
            return Err(DefinitionError::NonPositiveResultBudget { tool: name });
        }
        if !is_valid_tool_name(&name) {
            return Err(DefinitionError::InvalidName { name });
        }
        // A raw (imported) tool keeps its source's description, even an empty one.
        let raw = matches!(self.parameters, Parameters::Raw(_));
        let description = match self.description {
            Some(d) if raw || !d.trim().is_empty() => d,
            _ => {
                return Err(DefinitionError::Missing {
                    tool: name,
                    part: "description",
                });
            }
        };
        let (parameters, validator) = match self.parameters {
            Parameters::Validated(schema) => {
                let schema = schema?;
                if schema.get("type").and_then(Value::as_str) != Some("object") {
                    return Err(DefinitionError::ParametersNotObject { tool: name });
                }
                let validator =
                    CompiledSchema::compile(&schema, Vocabulary::Parameters)?.for_tool(&name);
                (schema, Some(validator))
            }
            Parameters::Spec(schemas) => {
                let (shown, full) = schemas?;
                let validator =
                    CompiledSchema::compile(&full, Vocabulary::Parameters)?.for_tool(&name);
                (shown, Some(validator))
            }
            Parameters::Raw(schema) => (schema, None),
        };
        let output_schema = self.output?;
        let output_validator = CompiledSchema::compile(&output_schema, Vocabulary::Output)?;
        let Some(execute) = self.execute else {
            return Err(DefinitionError::Missing {
                tool: name,
                part: "execute body",
            });
        };
        Ok(ToolDefinition {
            inner: Arc::new(Inner {
                name: name.into(),
                description,
                open_declared: super::undeclared::declared_if_open(&parameters),
                parameters,
                validator,
                output_schema,
                output_validator,
                render: self.render,
                presentation_meta: self.presentation_meta,
                execute,
                timeout_ms: self.timeout_ms,
                concurrency: self.concurrency,
                finalize_content: self.finalize_content,
                present_call: self.present_call,
                present_result: self.present_result,
                annotations: self.annotations,
                callers: self.callers,
                loading: self.loading,
                max_result_tokens: self.max_result_tokens,
                result_hint: self.result_hint,
                requires_approval: self.requires_approval,
                states: self.states,
            }),
        })
    }
}

fn empty_parameters() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// The default renderer: a string value as its raw text, anything else as pretty JSON, in one
/// text block.
pub fn default_render(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    vec![ContentBlock::text(crate::json::render_value_text(value))]
}
