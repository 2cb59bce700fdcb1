//! A scripted rmcp server, in process: the test decides its tool pages, makes its listings fail
//! or repeat a name, sends `tools/list_changed`, and sees the calls (and cancellations) it gets.

use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use dsh_tools_runtime::mcp::rmcp::service::{
    RequestContext, RoleServer, SubscriptionContext, SubscriptionSink,
};
use dsh_tools_runtime::mcp::rmcp::{ErrorData, ServerHandler};
use dsh_tools_runtime::mcp::{McpConnection, McpError, McpImport};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// What the server lists and has seen.
#[derive(Default)]
pub(crate) struct ScriptState {
    /// `tools/list` pages (cursor = page index).
    pub(crate) pages: Vec<Vec<Tool>>,
    /// The next `tools/list` fails.
    pub(crate) fail_list: bool,
    /// `tools/list` requests answered (pages, not listings).
    pub(crate) list_requests: usize,
    /// The arguments of every call, by raw name.
    pub(crate) calls: Vec<(String, Value)>,
    /// The client's `tools/list_changed` subscription (the server speaks 2026-07-28, which
    /// sends notifications only on a subscription).
    pub(crate) subscription: Option<SubscriptionSink>,
}

/// The server handle the test keeps.
#[derive(Clone)]
pub(crate) struct Script {
    pub(crate) state: Arc<Mutex<ScriptState>>,
    /// Raw names of calls as they arrive.
    received_tx: mpsc::UnboundedSender<String>,
    /// Raw names of calls whose cancellation the server observed.
    cancelled_tx: mpsc::UnboundedSender<String>,
    /// Woken when the client's subscription reaches the handler.
    subscribed: Arc<Notify>,
}

/// What the server reports as it goes.
pub(crate) struct Feeds {
    /// Raw names of calls as they arrive.
    pub(crate) received: mpsc::UnboundedReceiver<String>,
    /// Raw names of calls whose cancellation the server observed.
    pub(crate) cancelled: mpsc::UnboundedReceiver<String>,
}

/// A tool with an object schema of one optional string property.
pub(crate) fn tool(name: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    Tool::new(
        name.to_owned(),
        format!("The {name} tool."),
        Arc::new(schema.as_object().cloned().unwrap_or_default()),
    )
}

impl Script {
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut ScriptState) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the listing (one page per inner list).
    pub(crate) fn set_pages(&self, pages: Vec<Vec<Tool>>) {
        self.with(|s| s.pages = pages);
    }

    /// Sends `notifications/tools/list_changed` on the client's subscription, once the server
    /// has it (rmcp acknowledges a subscription before handing it to the handler).
    pub(crate) async fn list_changed(&self) {
        let subscription = async {
            loop {
                let subscribed = self.subscribed.notified();
                tokio::pin!(subscribed);
                subscribed.as_mut().enable();
                if let Some(subscription) = self.with(|s| s.subscription.clone()) {
                    return subscription;
                }
                subscribed.await;
            }
        };
        let subscription = tokio::time::timeout(std::time::Duration::from_secs(10), subscription)
            .await
            .expect("the client subscribes to tools/list_changed");
        subscription
            .notify_tool_list_changed()
            .await
            .expect("notification sent");
    }
}

impl ServerHandler for Script {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.with(|s| s.subscription = Some(context.sink().clone()));
        self.subscribed.notify_waiters();
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.with(|s| {
            s.list_requests += 1;
            if std::mem::take(&mut s.fail_list) {
                return Err(ErrorData::internal_error("listing is broken", None));
            }
            let page: usize = request
                .and_then(|r| r.cursor)
                .map(|c| c.parse().unwrap_or(0))
                .unwrap_or(0);
            let mut result =
                ListToolsResult::with_all_items(s.pages.get(page).cloned().unwrap_or_default());
            if page + 1 < s.pages.len() {
                result.next_cursor = Some((page + 1).to_string());
            }
            Ok(result)
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        self.with(|s| s.calls.push((name.clone(), args.clone())));
        let _ = self.received_tx.send(name.clone());
        let result = match name.as_str() {
            "hang" => {
                context.ct.cancelled().await;
                let _ = self.cancelled_tx.send(name);
                CallToolResult::error(vec![ContentBlock::text("cancelled")])
            }
            "fail" => CallToolResult::error(vec![
                ContentBlock::text("it broke"),
                ContentBlock::text("badly"),
            ]),
            "structured" => {
                let mut result = CallToolResult::success(vec![ContentBlock::text("sunny")]);
                result.structured_content = Some(json!({"temperature": 21}));
                result
            }
            "bare" => {
                let mut result = CallToolResult::success(vec![]);
                result.structured_content = Some(json!({"temperature": 21}));
                result
            }
            _ => CallToolResult::success(vec![ContentBlock::text(args.to_string())]),
        };
        Ok(CallToolResponse::Complete(result))
    }
}

/// Starts a scripted server listing `pages` and imports it as `server` with `import`'s
/// options. Returns the connection, the script and its feeds.
pub(crate) async fn connect(
    import: &McpImport,
    server: &str,
    pages: Vec<Vec<Tool>>,
) -> (Result<McpConnection, McpError>, Script, Feeds) {
    let (received_tx, received) = mpsc::unbounded_channel();
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let script = Script {
        state: Arc::new(Mutex::new(ScriptState {
            pages,
            ..ScriptState::default()
        })),
        received_tx,
        cancelled_tx,
        subscribed: Arc::default(),
    };
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let handler = script.clone();
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_io);
        if let Ok(running) =
            dsh_tools_runtime::mcp::rmcp::serve_server(handler, (reader, writer)).await
        {
            let _ = running.waiting().await;
        }
    });
    let (reader, writer) = tokio::io::split(client_io);
    let connection = import.connect_io(server, reader, writer).await;
    (
        connection,
        script,
        Feeds {
            received,
            cancelled,
        },
    )
}

/// Names of `registry`'s global tools.
pub(crate) fn names(registry: &ToolRegistry) -> Vec<String> {
    registry.known_names(None)
}

/// A foreign tool occupying `name` (a squatter in the server's namespace).
pub(crate) fn squatter(name: &str) -> dsh_tools::ToolDefinition {
    dsh_tools::ToolDefinition::builder(name)
        .description("Not from the server.")
        .execute(|_, _| async { Ok(Value::Null) })
        .build()
        .expect("a valid definition")
}
