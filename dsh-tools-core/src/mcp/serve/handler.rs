//! The `ServerHandler`: `tools/list` from a scope's view, `tools/call` through the pipeline.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_tools::exec::{InputChannel, ScopeId, ToolExecutionInput};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::mcp::progress::ClientProgress;

use super::approval::ClientApprovals;
use super::rounds::{Rounds, required};
use super::wire::{declares_object_output, mcp_result, mcp_tool};
use crate::registry::ToolRegistry;

/// One served view of a registry. Cheap to clone (one session each).
#[derive(Debug, Clone)]
pub(crate) struct RegistryHandler {
    pub(crate) registry: ToolRegistry,
    /// Whose view is listed: `None` = the global view.
    pub(crate) view: Option<ScopeId>,
    /// The agent calls run as (so an `ask` can reach the approval service).
    pub(crate) agent: ScopeId,
    pub(crate) info: Arc<Implementation>,
    pub(crate) calls: Arc<AtomicU64>,
    /// Approval asked of the client's user, for the calls whose client can elicit (`None`:
    /// the registry's approval service answers every call).
    pub(crate) approvals: Option<Arc<ClientApprovals>>,
    /// The rounds of the calls that ask the client (the approval among them).
    pub(crate) rounds: Arc<Rounds>,
}

impl RegistryHandler {
    /// Whether the served tool `name` declares `readOnlyHint: true` (what scope it needs).
    pub(crate) fn is_read_only(&self, name: &str) -> bool {
        self.registry
            .get(name, Some(self.agent))
            .is_some_and(|def| def.annotations().read_only_hint == Some(true))
    }
}

impl ServerHandler for RegistryHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info((*self.info).clone())
    }

    /// The called tool's listing, for the transport's `Mcp-Param-*` header check (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        super::headers::declaring_tool(self, name)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let tools = self
            .registry
            .visible(self.view)
            .iter()
            // A code-only tool is not a tool a client calls (`docs/CONTRACTS.md`, "MCP").
            .filter(|def| def.callers().model())
            .map(mcp_tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        // A name this view does not have is the spec's protocol error (`docs/CONTRACTS.md`,
        // "MCP"), not a tool result.
        let served = self.registry.get(&request.name, Some(self.agent));
        if !served.is_some_and(|def| def.callers().model()) {
            return Err(rmcp::ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                Some(serde_json::json!({"name": request.name})),
            ));
        }
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call_id = format!("mcp-{n}");
        // The call's round: a retry's state is verified before anything runs. An `ask` of
        // this call goes to the client's user when it can elicit.
        let invalid =
            |e: &dyn std::fmt::Display| rmcp::ErrorData::invalid_params(e.to_string(), None);
        let round = self
            .rounds
            .begin(&request, &context)
            .map_err(|e| invalid(&e))?;
        let _pending = self
            .approvals
            .as_ref()
            .map(|approvals| approvals.prepare(&call_id, &round, &context))
            .transpose()
            .map_err(|e| invalid(&e))?;
        let arguments = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        let mut input = ToolExecutionInput::new(call_id, request.name.to_string(), arguments);
        input.agent = Some(self.agent);
        // `notifications/cancelled` for this request cancels `context.ct`.
        input.cancel = context.ct.child_token();
        // The tool's questions go to this client.
        input.caller = Some(InputChannel(Arc::clone(&round) as _));
        // A client that sent a `progressToken` gets the call's progress.
        // (rmcp moves the request's `_meta` to the context.)
        let token = crate::mcp::progress::token_of(&context.meta).or_else(|| {
            request
                .meta
                .as_ref()
                .and_then(crate::mcp::progress::token_of)
        });
        let progress = token.map(|token| ClientProgress::new(context.peer.clone(), token));
        input.progress = progress.as_ref().map(ClientProgress::observer);
        let structured = self
            .registry
            .get(&input.name, Some(self.agent))
            .is_some_and(|def| declares_object_output(&def));
        #[cfg(feature = "otel")]
        let result = {
            // The caller's trace continues here (SEP-414): the call's span is its child.
            let parent = crate::mcp::trace::extract(&context.meta)
                .or_else(|| request.meta.as_deref().and_then(crate::mcp::trace::extract));
            match parent {
                Some(parent) => {
                    crate::otel::with_remote_parent(parent, self.registry.execute(input)).await
                }
                None => self.registry.execute(input).await,
            }
        };
        #[cfg(not(feature = "otel"))]
        let result = self.registry.execute(input).await;
        if let Some(progress) = progress {
            progress.flush().await;
        }
        // A question the client cannot be asked is its missing capability (-32021).
        if let Some(kind) = round
            .missing()
            .filter(|_| result.is_error() && round.in_rounds())
        {
            return Err(rmcp::ErrorData::missing_required_client_capability(
                required(kind),
            ));
        }
        if let Some(input_required) = self.rounds.finish(&round, &request) {
            return Ok(CallToolResponse::InputRequired(input_required));
        }
        Ok(CallToolResponse::Complete(mcp_result(&result, structured)))
    }
}
