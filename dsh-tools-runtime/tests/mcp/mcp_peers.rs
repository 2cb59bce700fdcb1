//! Import from the real npm servers (`@modelcontextprotocol/server-filesystem` and
//! `server-everything`) over stdio, calls going through `ToolRegistry::execute`.
//!
//! The servers come from `npm ci --prefix tests/node` (see `mcp_support`); without them these
//! tests fail under `CI` and are skipped otherwise.
#![cfg(feature = "mcp")]

use crate::mcp_support;

use std::time::Duration;

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools_runtime::ToolRegistry;
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::hooks::execute_wrapper_fn;
use dsh_tools_runtime::mcp::{McpConnection, McpImport};
use mcp_support::text_of;
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> ToolExecutionInput {
    ToolExecutionInput::new("c1", name, args)
}

async fn filesystem(registry: &ToolRegistry, root: &std::path::Path) -> Option<McpConnection> {
    let peer = mcp_support::server_filesystem()?;
    let command = peer.command(&[root.to_str().unwrap()]);
    Some(
        McpImport::new(registry)
            .connect_stdio("fs", command)
            .await
            .unwrap(),
    )
}

async fn everything(import: &McpImport) -> Option<McpConnection> {
    let peer = mcp_support::server_everything()?;
    Some(
        import
            .connect_stdio("ev", peer.command(&["stdio"]))
            .await
            .unwrap(),
    )
}

#[tokio::test]
async fn filesystem_tools_read_and_write_through_the_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let registry = ToolRegistry::new();
    let Some(fs) = filesystem(&registry, &root).await else {
        return;
    };
    let names = registry.known_names(None);
    for name in [
        "mcp__fs__read_text_file",
        "mcp__fs__write_file",
        "mcp__fs__list_directory",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert!(fs.tools().iter().any(|t| t.raw_name == "read_text_file"));
    let write = registry.get("mcp__fs__write_file", None).unwrap();
    assert_eq!(write.annotations().destructive_hint, Some(true));

    let path = root.join("notes.txt");
    let read = registry
        .execute(call("mcp__fs__read_text_file", json!({"path": path})))
        .await;
    assert_eq!(text_of(&read), "alpha\nbeta\n");
    assert_eq!(read.value().unwrap()["content"][0]["text"], "alpha\nbeta\n");

    let target = root.join("out.txt");
    let written = registry
        .execute(call(
            "mcp__fs__write_file",
            json!({"path": target, "content": "from rust"}),
        ))
        .await;
    assert!(!written.is_error(), "{}", text_of(&written));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "from rust");
    fs.close().await;
    assert!(registry.get("mcp__fs__read_text_file", None).is_none());
}

#[tokio::test]
async fn filesystem_refuses_a_path_outside_the_root_as_a_tool_failure() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry = ToolRegistry::new();
    let Some(_fs) = filesystem(&registry, &root).await else {
        return;
    };
    let outside = registry
        .execute(call(
            "mcp__fs__read_text_file",
            json!({"path": "/etc/hostname"}),
        ))
        .await;
    let message = outside.error().unwrap().message().to_owned();
    assert!(
        message.contains("Access denied - path outside allowed directories"),
        "{message}"
    );
    assert_eq!(text_of(&outside), format!("Error: {message}"));
}

#[tokio::test]
async fn everything_structured_content_images_and_resources_render_per_reference() {
    let registry = ToolRegistry::new();
    let Some(_ev) = everything(&McpImport::new(&registry)).await else {
        return;
    };
    // `get-structured-content` advertises an output schema with `$schema`: outside the
    // supported subset, so `structuredContent` is kept as any JSON and not required.
    let def = registry
        .get("mcp__ev__get-structured-content", None)
        .unwrap();
    assert_eq!(
        def.output_schema()["properties"]["structuredContent"],
        json!({})
    );
    let weather = registry
        .execute(call(
            "mcp__ev__get-structured-content",
            json!({"location": "Chicago"}),
        ))
        .await;
    let structured = &weather.value().unwrap()["structuredContent"];
    assert!(structured["temperature"].is_number(), "{structured}");

    let image = registry
        .execute(call("mcp__ev__get-tiny-image", json!({})))
        .await;
    let text = text_of(&image);
    assert!(text.contains("[image unavailable: image/png; this result was not admitted to durable model context; raw image data remains available to programmatic callers]"), "{text}");
    // The raw image stays in the value for programmatic callers.
    let blocks = image.value().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "image" && b["data"].is_string())
    );

    let links = registry
        .execute(call("mcp__ev__get-resource-links", json!({"count": 2})))
        .await;
    assert!(
        text_of(&links).contains("Resource link: "),
        "{}",
        text_of(&links)
    );
    let embedded = registry
        .execute(call("mcp__ev__get-resource-reference", json!({})))
        .await;
    assert!(
        text_of(&embedded).contains("[embedded resource unsupported; raw resource data remains available to programmatic callers]"),
        "{}",
        text_of(&embedded)
    );
}

#[tokio::test]
async fn everything_long_running_call_is_cancelled_or_times_out_promptly() {
    let registry = ToolRegistry::new();
    let import = McpImport::new(&registry).call_timeout(Duration::from_millis(300));
    let Some(_ev) = everything(&import).await else {
        return;
    };
    let slow = json!({"duration": 30, "steps": 30});

    // The per-call timeout ends the call and cancels it on the server.
    let timed_out = registry
        .execute(call(
            "mcp__ev__trigger-long-running-operation",
            slow.clone(),
        ))
        .await;
    assert_eq!(
        timed_out.error().unwrap().message(),
        "mcp-client(ev): tools/call \"trigger-long-running-operation\" timed out after 300ms"
    );

    // Cancelling the execution once it is dispatched ends it as ABORTED (the request is
    // abandoned with `notifications/cancelled`), long before the 30 s operation would.
    let registry_long = ToolRegistry::new();
    let Some(_ev2) = everything(&McpImport::new(&registry_long)).await else {
        return;
    };
    let (dispatched_tx, mut dispatched) = tokio::sync::mpsc::unbounded_channel();
    registry_long
        .on_execute(execute_wrapper_fn(move |dispatch, next| {
            let _ = dispatched_tx.send(());
            next.run(dispatch)
        }))
        .keep();
    let input = call("mcp__ev__trigger-long-running-operation", slow);
    let cancel = input.cancel.clone();
    let started = std::time::Instant::now();
    let running = tokio::spawn({
        let registry = registry_long.clone();
        async move { registry.execute(input).await }
    });
    dispatched.recv().await.unwrap();
    cancel.cancel();
    let aborted = running.await.unwrap();
    assert_eq!(aborted.error().unwrap().info().unwrap().code, "ABORTED");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The session still answers after the cancellation.
    let echo = registry_long
        .execute(call("mcp__ev__echo", json!({"message": "still here"})))
        .await;
    assert_eq!(text_of(&echo), "Echo: still here");
}

#[tokio::test]
async fn everything_registers_late_tools_through_list_changed() {
    let registry = ToolRegistry::new();
    let Some(ev) = everything(&McpImport::new(&registry)).await else {
        return;
    };
    // server-everything registers its task tool once the session is initialized and announces
    // it with `notifications/tools/list_changed`; the re-sync brings it in.
    let mut syncs = ev.syncs();
    syncs
        .wait_for(|n| {
            *n >= 2
                && registry
                    .get("mcp__ev__simulate-research-query", None)
                    .is_some()
        })
        .await
        .unwrap();
    // That tool requires task-based execution, which the bridge refuses with the reference text.
    let task = registry
        .execute(call(
            "mcp__ev__simulate-research-query",
            json!({"topic": "rust"}),
        ))
        .await;
    assert_eq!(
        task.error().unwrap().message(),
        "Tool \"simulate-research-query\" requires task-based execution, which this bridge does not support"
    );
}

#[tokio::test]
async fn everything_reports_whether_it_pages_and_the_import_gets_every_tool() {
    let registry = ToolRegistry::new();
    let Some(ev) = everything(&McpImport::new(&registry)).await else {
        return;
    };
    // server-everything answers `tools/list` in one page; paging itself is covered against the
    // scripted server (mcp_import.rs). Every listed tool is imported.
    let tools = ev.resync().await.unwrap();
    assert!(tools.len() >= 12, "{tools:?}");
    assert!(
        tools
            .iter()
            .all(|t| t.public_name == format!("mcp__ev__{}", t.raw_name))
    );
    let sum = registry
        .execute(call("mcp__ev__get-sum", json!({"a": 2, "b": 3})))
        .await;
    assert!(text_of(&sum).contains('5'), "{}", text_of(&sum));
}

/// Imported tools are ordinary tools to Code Mode: the SDK declares them (hyphenated names
/// quoted), and a program's `tools[...]` calls reach the real server through the pipeline, each
/// resolving with the server's `{content, structuredContent?}` — image data included, which the
/// model-facing text leaves out — and a refused call rejects with `ToolCallError`.
#[cfg(feature = "code-mode")]
#[tokio::test]
async fn everything_tools_are_called_from_a_code_mode_program() {
    use std::sync::Arc;

    use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
    use dsh_tools_runtime::{PresentationMode, RegistryConfig};

    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    CodeMode::new(Arc::new(
        QuickJsRuntime::new(QuickJsConfig::default()).unwrap(),
    ))
    .install(&registry)
    .unwrap();
    let Some(_ev) = everything(&McpImport::new(&registry)).await else {
        return;
    };
    let prompt = registry.prompt(None).unwrap();
    let sdk = &prompt
        .sections
        .iter()
        .find(|s| s.name == "tools:sdk")
        .unwrap()
        .text;
    assert!(sdk.contains("\"mcp__ev__get-sum\": {"), "{sdk}");
    assert!(sdk.contains("mcp__ev__echo: {"), "{sdk}");

    let program = r#"
const text = (r: { content: JsonValue[] }) => (r.content[0] as { text: string }).text;
const [echo, sum, image] = await Promise.all([
  tools.mcp__ev__echo({ message: "from QuickJS" }),
  tools["mcp__ev__get-sum"]({ a: 2, b: 40 }),
  tools["mcp__ev__get-tiny-image"]({}),
]);
const png = image.content.find((b) => (b as { type: string }).type === "image") as { mimeType: string; data: string };
let refused = "";
try {
  await tools["mcp__ev__get-sum"]({ a: "two", b: 40 } as never);
} catch (e) {
  refused = (e as ToolCallError).toolName + ": " + (e as ToolCallError).message;
}
return { echo: text(echo), sum: text(sum), mime: png.mimeType, hasData: png.data.length > 100, refused };
"#;
    let result = registry
        .execute(call(
            "run_code",
            json!({"code": program, "description": "Call server-everything"}),
        ))
        .await;
    assert!(!result.is_error(), "{}", text_of(&result));
    let value = &result.value().unwrap()["result"];
    assert_eq!(value["echo"], "Echo: from QuickJS", "{value}");
    assert_eq!(value["sum"], "The sum of 2 and 40 is 42.", "{value}");
    assert_eq!(value["mime"], "image/png", "{value}");
    assert_eq!(value["hasData"], true, "{value}");
    let refused = value["refused"].as_str().unwrap();
    // The server's zod schema (`$schema`: draft-07) is outside the supported subset, so the
    // server validates: its refusal rejects the call with the tool's name and message.
    assert!(
        refused.starts_with("mcp__ev__get-sum: ") && refused.contains("expected number"),
        "{refused}"
    );
}
