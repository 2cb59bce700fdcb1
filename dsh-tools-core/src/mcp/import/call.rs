//! One `tools/call` to the server, bounded by the per-call timeout and the execution's
//! cancellation (`docs/CONTRACTS.md`, "MCP").

use std::sync::Arc;
use std::time::Duration;

use dsh_tools::exec::ToolRunContext;
use dsh_tools::{ErrorInfo, ToolError};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    InputRequiredResult, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Map, Value};

use super::http::Reauthorize;
use super::rounds::{self, MAX_ROUNDS, Retry};
use crate::mcp::progress::ProgressRoutes;

/// What a call needs to reach its server.
#[derive(Debug, Clone)]
pub(crate) struct CallLink {
    pub(crate) server: String,
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) timeout: Duration,
    /// Where the server's progress notifications for a call go.
    pub(crate) progress: ProgressRoutes,
    /// OAuth connections: how to authorize again when the server refuses a call.
    pub(crate) reauthorize: Option<Arc<Reauthorize>>,
}

/// What one `tools/call` request got back.
enum Reply {
    /// The call's result object.
    Complete(Value),
    /// Questions to answer (or a state to echo) before the call is sent again (SEP-2322).
    InputRequired(InputRequiredResult),
}

/// Why one attempt of a call failed.
enum Attempt {
    /// The server refused it with this `WWW-Authenticate` challenge (401, or 403
    /// `insufficient_scope`).
    Refused(String, ToolError),
    /// Anything else.
    Failed(ToolError),
}

impl From<ToolError> for Attempt {
    fn from(error: ToolError) -> Self {
        Self::Failed(error)
    }
}

impl CallLink {
    /// Sends `tools/call {name: raw, arguments}` and returns the raw result object.
    ///
    /// When `cancel` fires first the request is abandoned with a `notifications/cancelled` and
    /// the call fails as `ABORTED`; when the timeout passes first, likewise with a timeout
    /// message. The server's `notifications/progress` for the request reach the calling
    /// context's progress observer. A call the server refuses for authorization on an OAuth
    /// connection is authorized again (step-up) and retried, up to the OAuth limit. An
    /// input-required result is answered through `ctx`'s input channel and the call sent again
    /// with the answers and the state, up to [`MAX_ROUNDS`] rounds.
    pub(crate) async fn call(
        &self,
        raw: &str,
        arguments: Map<String, Value>,
        ctx: &ToolRunContext,
    ) -> Result<Value, ToolError> {
        let mut retry = Retry::default();
        let mut state_only = 0;
        for round in 1..=MAX_ROUNDS {
            match self.authorized(raw, &arguments, &retry, ctx).await? {
                Reply::Complete(value) => return Ok(value),
                Reply::InputRequired(result) => {
                    let call = (self.server.as_str(), raw);
                    retry = rounds::answer(ctx, call, round, result, &mut state_only).await?;
                }
            }
        }
        Err(ToolError::msg(format!(
            "mcp-client({}): tools/call \"{raw}\" still asked for input after {MAX_ROUNDS} rounds",
            self.server
        )))
    }

    /// One request of the call, authorized again and resent when the server refuses it.
    async fn authorized(
        &self,
        raw: &str,
        arguments: &Map<String, Value>,
        retry: &Retry,
        ctx: &ToolRunContext,
    ) -> Result<Reply, ToolError> {
        let mut authorizations = 0;
        loop {
            match self.attempt(raw, arguments.clone(), retry, ctx).await {
                Ok(reply) => return Ok(reply),
                Err(Attempt::Failed(error)) => return Err(error),
                Err(Attempt::Refused(challenge, error)) => {
                    if !self.reauthorize(&challenge, &mut authorizations).await? {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// After the server refused a request with `challenge`: authorizes again and returns
    /// `true` (retry) on an OAuth connection that has authorizations left, `false` when the
    /// refusal stands; fails when the authorization fails.
    pub(crate) async fn reauthorize(
        &self,
        challenge: &str,
        authorizations: &mut u32,
    ) -> Result<bool, ToolError> {
        let Some(auth) = self
            .reauthorize
            .as_ref()
            .filter(|a| *authorizations < a.limit())
        else {
            return Ok(false);
        };
        *authorizations += 1;
        auth.run(challenge).await.map_err(|error| {
            ToolError::msg(format!(
                "mcp-client({}): authorization failed: {error}",
                self.server
            ))
        })?;
        Ok(true)
    }

    async fn attempt(
        &self,
        raw: &str,
        arguments: Map<String, Value>,
        retry: &Retry,
        ctx: &ToolRunContext,
    ) -> Result<Reply, Attempt> {
        let cancel = ctx.cancellation();
        let mut params = CallToolRequestParams::new(raw.to_owned()).with_arguments(arguments);
        params.input_responses.clone_from(&retry.input_responses);
        params.request_state.clone_from(&retry.request_state);
        // The calling span's trace context travels in `_meta` (SEP-414).
        #[cfg(feature = "otel")]
        {
            let mut meta = rmcp::model::RequestMetaObject::new();
            crate::mcp::trace::inject_current(&mut meta);
            if !meta.is_empty() {
                params.meta = Some(meta);
            }
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let send = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options());
        let handle = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(aborted().into()),
            handle = send => handle.map_err(|e| self.refusal(raw, &e))?,
        };
        let id = handle.id.clone();
        // rmcp gives the request a `progressToken`; route its notifications to the caller. (A
        // report the server sends before this line runs is not seen.)
        let _route = self.progress.open(&handle.progress_token, ctx);
        let response = handle.await_response();
        let (reason, error) = tokio::select! {
            biased;
            response = response => {
                let response = response.map_err(|e| self.refusal(raw, &e))?;
                return Ok(self.result(raw, response)?);
            }
            () = cancel.cancelled() => ("tool call aborted".to_owned(), aborted()),
            () = tokio::time::sleep(self.timeout) => {
                let ms = self.timeout.as_millis();
                let message = format!(
                    "mcp-client({}): tools/call \"{raw}\" timed out after {ms}ms",
                    self.server
                );
                (format!("request timed out after {ms}ms"), ToolError::msg(message))
            }
        };
        // Tell the server to stop; this also forgets the pending request on our side.
        let notice = CancelledNotificationParam::new(Some(id), Some(reason));
        let _ = self.peer.notify_cancelled(notice).await;
        Err(error.into())
    }

    fn refusal(&self, raw: &str, error: &ServiceError) -> Attempt {
        let failure = self.failure(raw, error);
        match error.auth_challenge() {
            Some(challenge) => Attempt::Refused(challenge.to_owned(), failure),
            None => Attempt::Failed(failure),
        }
    }

    fn result(&self, raw: &str, response: ServerResult) -> Result<Reply, ToolError> {
        let value = match response {
            ServerResult::InputRequiredResult(result) => return Ok(Reply::InputRequired(result)),
            ServerResult::CallToolResult(result) => serde_json::to_value(result),
            ServerResult::CustomResult(custom) => Ok(custom.0),
            ServerResult::EmptyResult(_) => Ok(Value::Object(Map::new())),
            _ => {
                return Err(ToolError::msg(format!(
                    "Tool \"{raw}\" returned an invalid MCP result: not a tools/call result"
                )));
            }
        };
        value.map(Reply::Complete).map_err(|e| {
            ToolError::msg(format!(
                "Tool \"{raw}\" returned an invalid MCP result: {e}"
            ))
        })
    }

    fn failure(&self, raw: &str, error: &ServiceError) -> ToolError {
        match error {
            ServiceError::McpError(data) => {
                ToolError::msg(format!("MCP error {}: {}", data.code.0, data.message))
            }
            other => ToolError::msg(format!(
                "mcp-client({}): tools/call \"{raw}\" failed: {other}",
                self.server
            )),
        }
    }
}

/// The registry's `ABORTED` failure: the caller cancelled while the server was working.
pub(super) fn aborted() -> ToolError {
    ToolError::with_info("tool call aborted", ErrorInfo::new("AbortError", "ABORTED"))
}
