//! The static check: a program naming a tool that does not exist, or passing constant
//! arguments the schema refuses, fails before any tool runs or any sandbox starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_tools::ToolDefinition;
use dsh_tools::definition::BoxFuture;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
use dsh_tools_runtime::code::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeError};
use serde_json::json;

use super::support::*;

/// QuickJS, counting the runs it starts.
struct Counting(QuickJsRuntime, Arc<AtomicUsize>);

impl CodeRuntime for Counting {
    fn language(&self) -> &str {
        self.0.language()
    }
    fn isolation(&self) -> &str {
        self.0.isolation()
    }
    fn run(
        &self,
        request: CodeRunRequest,
    ) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.run(request)
    }
    fn polls_host_work(&self) -> bool {
        self.0.polls_host_work()
    }
    fn replays(&self) -> bool {
        self.0.replays()
    }
}

#[tokio::test]
async fn every_finding_fails_the_run_before_anything_runs() {
    let host = Host::new();
    let sandboxes = Arc::new(AtomicUsize::new(0));
    // The host's Code Mode, on a runtime that counts its sandboxes.
    host.registry.set_code_runtime(Arc::new(Counting(
        QuickJsRuntime::default(),
        Arc::clone(&sandboxes),
    )));
    host.registry
        .register(
            ToolDefinition::builder("write_file")
                .description("Write a file.")
                .parameters_json(json!({
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                    "required": ["path", "text"],
                    "additionalProperties": false
                }))
                .execute(|_, _| async { Ok(json!("written")) })
                .build()
                .unwrap(),
        )
        .unwrap()
        .keep();
    let program = "const a = await tools.read({ n: 1 });\n\
                   await tools.raed({ n: 2 });\n\
                   await tools.write_file({ path: 7, txt: String(a) });";
    let message = failure(host.start(program).await);
    assert_eq!(
        message,
        "Error: code run failed (static-check): the program was not run: 4 problems found before it started:\n\
         2:7 tools.raed is not a tool of this run; did you mean tools.read?\n\
         3:24 tools.write_file: missing required property \"text\"\n\
         3:32 tools.write_file: \"path\" must be a string\n\
         3:35 tools.write_file: \"txt\" is not a parameter of write_file; did you mean \"text\"?"
    );
    assert_eq!(host.runs_of("read"), 0, "no tool ran");
    assert_eq!(sandboxes.load(Ordering::SeqCst), 0, "no sandbox started");

    // Dynamic access is left to run time.
    let outcome = host
        .start("const name = 'ra' + 'ed'; try { await (tools as any)[name]({}); } catch (e) { return String(e); }")
        .await;
    assert_eq!(sandboxes.load(Ordering::SeqCst), 1);
    assert!(
        value(outcome)["result"]
            .as_str()
            .unwrap()
            .contains("TypeError")
    );
}
