//! Tools that ask their caller (`docs/CONTRACTS.md`, "Tools that ask their caller"): an
//! elicitation form, a sampling request, the caller's roots.
//!
//! A tool body asks through its [`ToolRunContext`](super::ToolRunContext)
//! ([`elicit`](super::ToolRunContext::elicit), [`sample`](super::ToolRunContext::sample),
//! [`roots`](super::ToolRunContext::roots)). Who answers is the caller's [`CallerInput`]: an MCP
//! client (by an input-required result at 2026-07-28, by a server-to-client request before),
//! or the host's registry-wide service ([`HostInput`]) for a direct call.
//!
//! Over MCP 2026-07-28 a call that asks ends with the questions; the client retries it with the
//! answers and the tool runs again **from the start**, its earlier answers recorded: a tool that
//! asks must be safe to re-enter up to the point where it asks (no side effect before it).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::error::ToolError;

/// The answer a [`CallerInput`] gives, boxed.
pub type AskFuture = Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send + 'static>>;

/// What a tool can ask its caller for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// A form the user fills (`elicitation/create`).
    Elicitation,
    /// A completion by the caller's model (`sampling/createMessage`).
    Sampling,
    /// The caller's roots (`roots/list`).
    Roots,
}

impl InputKind {
    /// The capability's name in MCP (`elicitation`, `sampling`, `roots`).
    ///
    /// ```
    /// assert_eq!(dsh_tools::exec::InputKind::Sampling.capability(), "sampling");
    /// ```
    pub fn capability(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation",
            Self::Sampling => "sampling",
            Self::Roots => "roots",
        }
    }

    /// The MCP method that asks it.
    pub fn method(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }
}

/// One question to the caller: the MCP method's kind and its parameters, as MCP writes them.
///
/// ```
/// use dsh_tools::exec::{InputKind, InputRequest};
/// let ask = InputRequest::form("Your name?", serde_json::json!({
///     "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
/// }));
/// assert_eq!(ask.kind, InputKind::Elicitation);
/// assert_eq!(ask.params["message"], "Your name?");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// What is asked.
    pub kind: InputKind,
    /// The method's parameters (`message` + `requestedSchema`; `messages` + `maxTokens`; `{}`).
    pub params: Value,
}

impl InputRequest {
    /// A form: `message` and the `requestedSchema` of the content the user fills in.
    pub fn form(message: &str, requested_schema: Value) -> Self {
        Self {
            kind: InputKind::Elicitation,
            params: json!({"mode": "form", "message": message, "requestedSchema": requested_schema}),
        }
    }

    /// A sampling request with one user message and a token budget.
    pub fn sample(prompt: &str, max_tokens: u32) -> Self {
        Self::sampling(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        }))
    }

    /// A sampling request with `sampling/createMessage`'s whole parameters.
    pub fn sampling(params: Value) -> Self {
        Self {
            kind: InputKind::Sampling,
            params,
        }
    }

    /// The caller's roots.
    pub fn roots() -> Self {
        Self {
            kind: InputKind::Roots,
            params: json!({}),
        }
    }

    /// The request as MCP's `inputRequests` entry (`{"method", "params"}`).
    pub fn to_mcp(&self) -> Value {
        json!({"method": self.kind.method(), "params": self.params})
    }
}

/// The user's answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    /// Submitted, with the content (an object of the requested schema's shape).
    Accept(Map<String, Value>),
    /// Refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

impl Elicited {
    /// An elicitation result (`{"action", "content"}`) as an answer.
    ///
    /// ```
    /// use dsh_tools::exec::Elicited;
    /// let answer = Elicited::from_mcp(&serde_json::json!({"action": "accept", "content": {"ok": true}}));
    /// assert!(matches!(answer, Ok(Elicited::Accept(c)) if c["ok"] == true));
    /// ```
    pub fn from_mcp(result: &Value) -> Result<Self, AskError> {
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => Ok(Self::Accept(
                result
                    .get("content")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            )),
            Some("decline") => Ok(Self::Decline),
            Some("cancel") => Ok(Self::Cancel),
            _ => Err(AskError::Malformed {
                kind: InputKind::Elicitation,
                reason: "no action accept, decline or cancel".to_owned(),
            }),
        }
    }
}

/// One of the caller's roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The root's URI (`file:///…`).
    pub uri: String,
    /// Its display name, if any.
    pub name: Option<String>,
}

/// Why a question got no answer. [`AskError::code`] is stable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// The caller cannot answer this kind of question (an MCP client that did not declare the
    /// capability).
    #[error("the client did not declare {}", .0.capability())]
    NotDeclared(InputKind),
    /// Nobody answers questions on this call (no MCP client, no host input service).
    #[error("the caller cannot be asked for {}: no input service", .0.capability())]
    NoCaller(InputKind),
    /// The question goes back to the caller with the call's result: the call ends here and is
    /// run again with the answer (MCP 2026-07-28). Return this error as it is.
    #[error("input required: the call is asked again with the answer to \"{0}\"")]
    InputRequired(String),
    /// The caller's answer does not have the method's shape.
    #[error("the answer to a {} request is malformed: {reason}", .kind.method())]
    Malformed {
        /// What was asked.
        kind: InputKind,
        /// What is wrong with it.
        reason: String,
    },
    /// The caller failed to answer (a transport error, a refusal of the request).
    #[error("the caller did not answer the {} request: {reason}", .kind.method())]
    Failed {
        /// What was asked.
        kind: InputKind,
        /// Why.
        reason: String,
    },
}

impl AskError {
    /// A stable code for the error's kind.
    ///
    /// ```
    /// use dsh_tools::exec::{AskError, InputKind};
    /// assert_eq!(AskError::NotDeclared(InputKind::Roots).code(), "ask.not_declared");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotDeclared(_) => "ask.not_declared",
            Self::NoCaller(_) => "ask.no_caller",
            Self::InputRequired(_) => "ask.input_required",
            Self::Malformed { .. } => "ask.malformed",
            Self::Failed { .. } => "ask.failed",
        }
    }
}

impl From<AskError> for ToolError {
    /// A question that got no answer, as the tool's error (its message; `?` in a tool body).
    fn from(error: AskError) -> Self {
        Self::msg(error.to_string())
    }
}

/// Who answers a call's questions. `key` names the question within the call (MCP's
/// `inputRequests` key): a caller that answers by re-running the call finds earlier answers by
/// it. The answer is the method's result as MCP writes it (an elicitation result, a
/// `CreateMessageResult`, a `ListRootsResult`).
pub trait CallerInput: Send + Sync {
    /// Whether this caller can answer questions of `kind`.
    fn can_answer(&self, kind: InputKind) -> bool;

    /// Asks `request` under `key`; a question this caller cannot answer is
    /// [`AskError::NotDeclared`].
    fn ask(&self, key: &str, request: InputRequest) -> AskFuture;
}

/// A call's [`CallerInput`], as a call input carries it.
#[derive(Clone)]
pub struct InputChannel(pub Arc<dyn CallerInput>);

impl std::fmt::Debug for InputChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputChannel(..)")
    }
}

/// The host's registry-wide input service (provided as state: `registry.provide_state`): it
/// answers the questions of calls whose caller brought none (a direct `execute`, the CLI).
#[derive(Clone)]
pub struct HostInput(pub Arc<dyn CallerInput>);

impl std::fmt::Debug for HostInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostInput(..)")
    }
}

/// The roots of a `ListRootsResult`.
pub(crate) fn roots_of(result: &Value) -> Result<Vec<Root>, AskError> {
    let malformed = |reason: &str| AskError::Malformed {
        kind: InputKind::Roots,
        reason: reason.to_owned(),
    };
    let roots = result
        .get("roots")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no roots array"))?;
    roots
        .iter()
        .map(|root| {
            let uri = root.get("uri").and_then(Value::as_str);
            Ok(Root {
                uri: uri
                    .ok_or_else(|| malformed("a root without uri"))?
                    .to_owned(),
                name: root.get("name").and_then(Value::as_str).map(str::to_owned),
            })
        })
        .collect()
}

impl super::ToolRunContext {
    /// Who answers this call's questions: the caller's input channel, else the host's.
    fn asker(&self) -> Option<Arc<dyn CallerInput>> {
        let caller = self.execution().caller.as_ref().map(|c| Arc::clone(&c.0));
        caller.or_else(|| self.state::<HostInput>().map(|host| Arc::clone(&host.0)))
    }

    /// Whether the caller can answer questions of `kind` (a tool can leave out what it cannot
    /// ask).
    ///
    /// ```
    /// use dsh_tools::exec::{InputKind, ToolRunContext};
    /// assert!(!ToolRunContext::detached("c1").can_ask(InputKind::Elicitation));
    /// ```
    pub fn can_ask(&self, kind: InputKind) -> bool {
        self.asker().is_some_and(|asker| asker.can_answer(kind))
    }

    /// Asks the caller `request` under `key` (unique within the call) and waits for the answer:
    /// the method's result as MCP writes it. An [`AskError::InputRequired`] must be returned as
    /// the tool's error: the call is run again with the answer.
    ///
    /// ```
    /// use dsh_tools::exec::{AskError, InputKind, InputRequest, ToolRunContext};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ctx = ToolRunContext::detached("c1");
    /// let asked = ctx.ask("where", InputRequest::roots()).await;
    /// assert_eq!(asked, Err(AskError::NoCaller(InputKind::Roots)));
    /// # });
    /// ```
    pub async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, AskError> {
        let Some(asker) = self.asker() else {
            return Err(AskError::NoCaller(request.kind));
        };
        asker.ask(key, request).await
    }

    /// Asks several questions at once (over MCP 2026-07-28: in one round) and returns the
    /// answers in order; the first error, if any (an input-required one first).
    pub async fn ask_all(
        &self,
        requests: Vec<(&str, InputRequest)>,
    ) -> Result<Vec<Value>, AskError> {
        let asked = requests
            .into_iter()
            .map(|(key, request)| self.ask(key, request));
        let answers = futures_util::future::join_all(asked).await;
        let pending = answers
            .iter()
            .find(|answer| matches!(answer, Err(AskError::InputRequired(_))));
        if let Some(Err(pending)) = pending {
            return Err(pending.clone());
        }
        answers.into_iter().collect()
    }

    /// Asks the user to fill a form: `message`, and the `requested_schema` of its content.
    pub async fn elicit(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Elicited, AskError> {
        let answer = self
            .ask(key, InputRequest::form(message, requested_schema))
            .await?;
        Elicited::from_mcp(&answer)
    }

    /// Asks the caller's model (`sampling/createMessage` with `params`): its
    /// `CreateMessageResult`.
    pub async fn sample(&self, key: &str, params: Value) -> Result<Value, AskError> {
        self.ask(key, InputRequest::sampling(params)).await
    }

    /// Asks for the caller's roots.
    pub async fn roots(&self, key: &str) -> Result<Vec<Root>, AskError> {
        roots_of(&self.ask(key, InputRequest::roots()).await?)
    }
}
