//! The `ServerHandler`: `tools/list` from a scope's view, `tools/call` through the pipeline.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_tools::exec::{InputChannel, ScopeId, ToolExecutionInput};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::mcp::progress::ClientProgress;

use super::approval::ClientApprovals;
use super::rounds::{Rounds, required};
use super::tasks::{McpTasks, Tasks};
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
    /// The tools whose calls suspend at an approval (Code Mode's durable `run_code`).
    pub(crate) suspendable: Option<Arc<dyn crate::extension::SuspendableCalls>>,
    /// The tasks extension, when served: which tools answer a task handle, and their tasks.
    pub(crate) tasks: Option<(Arc<McpTasks>, Arc<Tasks>)>,
}

impl RegistryHandler {
    /// Whether the served tool `name` declares `readOnlyHint: true` (what scope it needs).
    pub(crate) fn is_read_only(&self, name: &str) -> bool {
        self.registry
            .get(name, Some(self.agent))
            .is_some_and(|def| def.annotations().read_only_hint == Some(true))
    }
}

impl RegistryHandler {
    /// What `tools/list` lists (`docs/CONTRACTS.md`, "MCP", "Presentation over MCP"): in a
    /// native view its visible tools a model calls; in a code or both view the wire tools of
    /// its prompt ([`ToolRegistry::prompt`]), the tool the presentation adds (Code Mode's
    /// transport: no stored tool and not `tool_search`) described with the prompt's sections
    /// (the SDK of every tool a program can call, and how to search the deferred ones).
    fn listed(&self) -> Result<Vec<rmcp::model::Tool>, crate::PromptError> {
        if self.registry.effective_mode(self.view) == crate::PresentationMode::Native {
            return Ok(self
                .registry
                .visible(self.view)
                .iter()
                // A code-only tool is not a tool a client calls (`docs/CONTRACTS.md`, "MCP").
                .filter(|def| def.callers().model())
                .map(mcp_tool)
                .collect());
        }
        let mut surface = self.registry.prompt(self.view)?;
        surface.sections.sort_by_key(|section| section.order);
        let guide: Vec<&str> = surface.sections.iter().map(|s| s.text.as_str()).collect();
        let guide = guide.join("\n\n");
        let stored = self.registry.known_names(self.view);
        let added =
            |name: &str| name != crate::TOOL_SEARCH_NAME && !stored.iter().any(|n| n == name);
        Ok(surface
            .tools
            .iter()
            .filter_map(|wire| self.registry.get(&wire.name, self.view))
            .map(|def| {
                let mut tool = mcp_tool(&def);
                if added(def.name()) {
                    tool.description = Some(format!("{}\n\n{guide}", def.description()).into());
                }
                tool
            })
            .collect())
    }

    /// Whether a client may call `name`: the view lists it (a tool it does not list is the
    /// spec's protocol error). Natively a deferred tool not found yet counts: it is listed.
    fn serves(&self, name: &str) -> bool {
        if self.registry.effective_mode(self.view) == crate::PresentationMode::Native {
            let served = self.registry.get(name, Some(self.agent));
            return served.is_some_and(|def| def.callers().model());
        }
        self.registry
            .prompt(self.view)
            .is_ok_and(|surface| surface.tools.iter().any(|tool| tool.name == name))
    }
}

impl ServerHandler for RegistryHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.tasks.is_some() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities).with_server_info((*self.info).clone())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, rmcp::ErrorData> {
        self.served_tasks()?.get(&request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        self.served_tasks()?
            .update(&request.task_id, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        self.served_tasks()?.cancel(&request.task_id).await
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
            .listed()
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        // A name this view does not have is the spec's protocol error (`docs/CONTRACTS.md`,
        // "MCP"), not a tool result.
        if !self.serves(&request.name) {
            return Err(rmcp::ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                Some(serde_json::json!({"name": request.name})),
            ));
        }
        let as_task = self.as_task(&request, &context)?;
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
        let arguments = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        let mut input =
            ToolExecutionInput::new(call_id.clone(), request.name.to_string(), arguments);
        input.agent = Some(self.agent);
        // `notifications/cancelled` for this request cancels `context.ct`.
        input.cancel = context.ct.child_token();
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
        // A task answers its approvals through the task; a suspendable call in its result.
        let suspends = || self.suspends(&request.name, &round, &context);
        if let Some(runs) = as_task.is_none().then(suspends).flatten() {
            let response = self.call_suspendable(runs, &round, &request, input).await;
            if let Some(progress) = progress {
                progress.flush().await;
            }
            return response;
        }
        let _pending = self
            .approvals
            .as_ref()
            .filter(|_| as_task.is_none())
            .map(|approvals| approvals.prepare(&call_id, &round, &context))
            .transpose()
            .map_err(|e| invalid(&e))?;
        // The tool's questions go to this client.
        input.caller = Some(InputChannel(Arc::clone(&round) as _));
        let structured = self
            .registry
            .get(&input.name, Some(self.agent))
            .is_some_and(|def| declares_object_output(&def));
        if let Some(tasks) = as_task {
            return self.start_task(tasks, input, &context, structured).await;
        }
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
