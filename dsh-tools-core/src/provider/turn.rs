//! One model turn: parse, execute as a batch, render.

use std::sync::Arc;

use dsh_tools::ToolArgsError;
use dsh_tools::ToolError;
use dsh_tools::exec::{ScopeId, ToolExecutionInput, ToolExecutionResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::content::ImageSource;
use super::{CallArguments, Provider, ProviderCall, ProviderError, parse_calls, render_results};
use crate::ToolRegistry;
use crate::dialect::{Dialect, DialectOptions, render_tool, restore_omitted};

/// Runs the tool calls of provider turns against a registry (see the
/// [module docs](crate::provider)).
#[derive(Clone)]
pub struct ProviderTurn {
    registry: ToolRegistry,
    provider: Provider,
    agent: Option<ScopeId>,
    strict: Option<DialectOptions>,
    images: Option<Arc<dyn ImageSource>>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for ProviderTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderTurn")
            .field("provider", &self.provider)
            .field("agent", &self.agent)
            .field("strict", &self.strict)
            .field("images", &self.images.is_some())
            .finish_non_exhaustive()
    }
}

/// What one turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The provider the turn was read from and rendered for.
    pub provider: Provider,
    /// The calls, in the response's order.
    pub calls: Vec<ProviderCall>,
    /// One result per call, in call order.
    pub results: Vec<ToolExecutionResult>,
    /// What to send back: the rendered results, then the context messages
    /// ([`render_results`]).
    pub messages: Vec<Value>,
}

impl TurnOutcome {
    /// The messages as one JSON document: an array for the OpenAI forms (one message or item
    /// per call); for Anthropic and Gemini the one message, or an array when context messages
    /// follow it. A turn without calls is an empty array.
    ///
    /// ```
    /// use dsh_tools_runtime::provider::{Provider, TurnOutcome};
    /// use serde_json::json;
    /// let outcome = TurnOutcome { provider: Provider::Gemini, calls: vec![], results: vec![],
    ///     messages: vec![json!({"role": "user", "parts": []})] };
    /// assert_eq!(outcome.to_wire(), json!({"role": "user", "parts": []}));
    /// ```
    pub fn to_wire(&self) -> Value {
        match self.messages.as_slice() {
            [one] if !self.provider.sends_list() => one.clone(),
            all => Value::Array(all.to_vec()),
        }
    }

    /// Whether a call asked to conclude the turn (the loop should stop after sending the
    /// results).
    pub fn concludes_turn(&self) -> bool {
        self.results.iter().any(|r| match r {
            ToolExecutionResult::Success(s) => s.concludes_turn,
            ToolExecutionResult::Failure(_) => false,
        })
    }
}

impl ProviderTurn {
    /// Turns of `provider`'s shape, run against `registry`'s global view. For the OpenAI forms,
    /// arguments of tools that render strict with the default [`DialectOptions`] get their
    /// strict-mode `null`s removed ([`ProviderTurn::strict_tools`] changes that).
    pub fn new(registry: &ToolRegistry, provider: Provider) -> Self {
        Self {
            registry: registry.clone(),
            provider,
            agent: None,
            strict: provider.sends_list().then(DialectOptions::default),
            images: None,
            cancel: CancellationToken::new(),
        }
    }

    /// Runs the calls as `scope`'s agent (its view, its policies), named by its id as in every
    /// other API ([`Scope::id`](crate::Scope::id)).
    pub fn agent(mut self, scope: ScopeId) -> Self {
        self.agent = Some(scope);
        self
    }

    /// How the tools were sent: `Some(options)` when they were rendered with
    /// [`Dialect::OpenAiStrict`] and these options (the tools that came out `strict: true` get
    /// [`restore_omitted`] on their arguments), `None` when they were not sent strict.
    pub fn strict_tools(mut self, options: Option<DialectOptions>) -> Self {
        self.strict = options;
        self
    }

    /// Where image attachments' bytes come from.
    pub fn images(mut self, source: Arc<dyn ImageSource>) -> Self {
        self.images = Some(source);
        self
    }

    /// Cancelling `token` cancels every call of the turns run from now on.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Parses `response`, runs its calls, and renders the results.
    pub async fn run_response(&self, response: &Value) -> Result<TurnOutcome, ProviderError> {
        let calls = parse_calls(self.provider, response)?;
        Ok(self.run(calls).await)
    }

    /// Runs calls (from [`parse_calls`] or a stream accumulator) as one batch and renders the
    /// results. A call with malformed arguments gets its `INVALID_ARGS` result without running;
    /// a Gemini call without an id runs as `gemini-<position>`.
    pub async fn run(&self, calls: Vec<ProviderCall>) -> TurnOutcome {
        let mut inputs = Vec::new();
        let mut slots: Vec<Option<ToolExecutionResult>> = Vec::with_capacity(calls.len());
        for (position, call) in calls.iter().enumerate() {
            match &call.arguments {
                CallArguments::Malformed(error) => {
                    let error =
                        ToolArgsError::new(vec![format!("arguments are not valid JSON: {error}")]);
                    slots.push(Some(ToolExecutionResult::failure(ToolError::from(error))));
                }
                CallArguments::Json(arguments) => {
                    let id = call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("gemini-{position}"));
                    let arguments = self.restore(&call.name, arguments);
                    let mut input = ToolExecutionInput::new(id, call.name.clone(), arguments);
                    input.agent = self.agent;
                    input.cancel = self.cancel.child_token();
                    inputs.push(input);
                    slots.push(None);
                }
            }
        }
        let mut executed = self.registry.execute_batch(inputs).await.into_iter();
        let results: Vec<ToolExecutionResult> = slots
            .into_iter()
            .map(|slot| {
                slot.or_else(|| executed.next()).unwrap_or_else(|| {
                    ToolExecutionResult::failure(ToolError::msg("the batch returned no result"))
                })
            })
            .collect();
        let messages = render_results(self.provider, &calls, &results, self.images.as_deref());
        TurnOutcome {
            provider: self.provider,
            calls,
            results,
            messages,
        }
    }

    /// Removes strict-mode `null`s when `name` was sent strict.
    fn restore(&self, name: &str, arguments: &Value) -> Value {
        let Some(options) = &self.strict else {
            return arguments.clone();
        };
        let Some(def) = self.registry.get(name, self.agent) else {
            return arguments.clone();
        };
        match render_tool(&def, Dialect::OpenAiStrict, options) {
            Ok(rendered) if rendered.strict => restore_omitted(def.parameters(), arguments),
            _ => arguments.clone(),
        }
    }
}
