//! Progress from long tools (`docs/CONTRACTS.md`, "Progress"): a body's reports reach the
//! caller's observer, Code Mode sub-calls report where their program does, an MCP client that
//! sent a `progressToken` gets `notifications/progress` (rate-limited, increasing), and an
//! imported tool's progress flows back through the same path.

use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ProgressObserver, ToolExecutionInput};
use dsh_tools_runtime::ToolRegistry;
#[cfg(feature = "mcp")]
use dsh_tools_runtime::mcp::rmcp::ClientHandler;
#[cfg(feature = "mcp")]
use dsh_tools_runtime::mcp::rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
#[cfg(feature = "mcp")]
use dsh_tools_runtime::mcp::rmcp::service::{NotificationContext, RoleClient};
#[cfg(feature = "mcp")]
use dsh_tools_runtime::mcp::{McpImport, McpServer};
use serde_json::json;

type Seen = Arc<Mutex<Vec<(String, f64, Option<f64>, Option<String>)>>>;

/// `count` reports `1..=n` of `n`, then returns; `plain` reports nothing.
fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    for def in registry_tools() {
        registry.register(def).unwrap().keep();
    }
    registry
}

fn registry_tools() -> Vec<ToolDefinition> {
    let count = ToolDefinition::builder("count")
        .description("Count to n, reporting progress.")
        .parameters_json(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        )
        .execute(|args, ctx| async move {
            let n = args["n"].as_u64().unwrap_or(0);
            for i in 1..=n {
                ctx.progress(i as f64, Some(n as f64), Some(&format!("step {i}")));
            }
            Ok(json!(n))
        })
        .build()
        .unwrap();
    vec![count]
}

fn recorder() -> (ProgressObserver, Seen) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let observer = ProgressObserver::new(move |exec, p| {
        log.lock().unwrap_or_else(PoisonError::into_inner).push((
            exec.call_id.to_string(),
            p.done,
            p.total,
            p.message.clone(),
        ));
    });
    (observer, seen)
}

fn seen(seen: &Seen) -> Vec<(String, f64, Option<f64>, Option<String>)> {
    seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

#[tokio::test]
async fn a_body_reports_to_the_callers_observer() {
    let registry = registry();
    let (observer, log) = recorder();
    let input = ToolExecutionInput::new("c1", "count", json!({"n": 3})).with_progress(observer);
    registry.execute(input).await;
    assert_eq!(
        seen(&log),
        [
            ("c1".into(), 1.0, Some(3.0), Some("step 1".into())),
            ("c1".into(), 2.0, Some(3.0), Some("step 2".into())),
            ("c1".into(), 3.0, Some(3.0), Some("step 3".into())),
        ]
    );
    // Without an observer the reports go nowhere (and the call is unaffected).
    let plain = registry
        .execute(ToolExecutionInput::new("c2", "count", json!({"n": 3})))
        .await;
    assert_eq!(plain.value(), Some(&json!(3)));
}

#[cfg(feature = "code-mode")]
#[tokio::test]
async fn code_mode_sub_calls_report_where_their_program_does() {
    use dsh_tools_runtime::code::CodeMode;
    use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
    use dsh_tools_runtime::{PresentationMode, RegistryConfig};
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    for def in registry_tools() {
        registry.register(def).unwrap().keep();
    }
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).unwrap(),
    ))
    .install(&registry)
    .unwrap();
    let (observer, log) = recorder();
    let input = ToolExecutionInput::new(
        "run-1",
        "run_code",
        json!({"code": "await tools.count({n: 2}); return 'ok'", "description": "count"}),
    )
    .with_progress(observer);
    let result = registry.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    let calls: Vec<(String, f64)> = seen(&log)
        .into_iter()
        .map(|(id, done, ..)| (id, done))
        .collect();
    assert_eq!(
        calls,
        [("run-1:code:1".into(), 1.0), ("run-1:code:1".into(), 2.0)]
    );
}

/// An rmcp client recording the progress notifications it receives.
#[cfg(feature = "mcp")]
#[derive(Clone, Default)]
struct ProgressClient {
    received: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    arrived: Arc<tokio::sync::Notify>,
}

#[cfg(feature = "mcp")]
impl ClientHandler for ProgressClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(params);
    }
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn a_client_that_sent_a_progress_token_gets_rate_limited_notifications() {
    let registry = registry();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(&registry);
    tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_io);
        let _ = server.serve_io(reader, writer).await;
    });
    let handler = ProgressClient::default();
    let (reader, writer) = tokio::io::split(client_io);
    let client = dsh_tools_runtime::mcp::rmcp::serve_client(handler.clone(), (reader, writer))
        .await
        .unwrap();
    let arguments = json!({"n": 500}).as_object().cloned().unwrap();
    let params = CallToolRequestParams::new("count").with_arguments(arguments.clone());
    let result = client.peer().call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    // The server sends the final report before the result; the client handles notifications
    // on its own schedule: wait (bounded) until the final one is in.
    let last = || {
        handler
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last()
            .map(|p| p.progress)
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while last() != Some(500.0) {
            handler.arrived.notified().await;
        }
    })
    .await
    .expect("the final progress notification arrived");
    let received = handler
        .received
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let values: Vec<f64> = received.iter().map(|p| p.progress).collect();
    assert!(
        received
            .iter()
            .all(|p| p.progress_token == received[0].progress_token && p.total == Some(500.0))
    );
    assert_eq!(values.first(), Some(&1.0), "{values:?}");
    assert_eq!(values.last(), Some(&500.0), "{values:?}");
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "increasing: {values:?}"
    );
    // 500 reports in a tight loop pass as the first and the last (100 ms apart at most).
    assert!(
        values.len() < 10,
        "rate-limited: {} of 500 forwarded",
        values.len()
    );
    client.cancel().await.unwrap();
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn an_imported_tools_progress_reaches_the_host() {
    let served = registry();
    let server = McpServer::new(&served)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let host = ToolRegistry::new();
    let connection = McpImport::new(&host)
        .connect_http("far", &server.url())
        .await
        .unwrap();
    let (observer, log) = recorder();
    let input =
        ToolExecutionInput::new("c1", "mcp__far__count", json!({"n": 4})).with_progress(observer);
    let result = host.execute(input).await;
    assert!(!result.is_error(), "{result:?}");
    let reports = seen(&log);
    // The served side forwards the first and the final report of the tight loop at least.
    assert!(reports.first().is_some_and(|r| r.1 == 1.0), "{reports:?}");
    assert!(
        reports.iter().all(|r| r.0 == "c1" && r.2 == Some(4.0)),
        "{reports:?}"
    );
    connection.close().await;
    server.shutdown().await;
}
