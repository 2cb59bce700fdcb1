//! Approval scopes: once, for the run, for the session — narrowed by the tool's annotations —
//! through the approval service and through a resumption's decision.

use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
use dsh_tools::{ToolAnnotations, ToolDefinition};
use dsh_tools_runtime::approval::{
    ApprovalOutcome, ApprovalRequest, ApprovalScope, ApprovalService,
};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::durable::Decision;
use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
use dsh_tools_runtime::hooks::pre_execute_fn;
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::json;

use super::support::*;

/// Answers every request with one outcome and records (tool, widest scope, hints).
struct Answering(
    ApprovalOutcome,
    Mutex<Vec<(String, ApprovalScope, ToolAnnotations)>>,
);

impl ApprovalService for Answering {
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> {
        self.1.lock().unwrap_or_else(PoisonError::into_inner).push((
            request.tool_name,
            request.widest_scope,
            request.annotations,
        ));
        Box::pin(std::future::ready(self.0))
    }
}

impl Answering {
    fn asked(&self, tool: &str) -> usize {
        let requests = self.1.lock().unwrap_or_else(PoisonError::into_inner);
        requests.iter().filter(|(name, ..)| name == tool).count()
    }
}

fn hinted(name: &str, runs: &Runs, annotations: ToolAnnotations) -> ToolDefinition {
    let runs = Arc::clone(runs);
    let tool = name.to_owned();
    ToolDefinition::builder(name)
        .description("A hinted tool.")
        .annotations(annotations)
        .execute(move |_, _| {
            let (runs, tool) = (Arc::clone(&runs), tool.clone());
            async move {
                runs.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((tool.clone(), json!({})));
                Ok(json!(tool))
            }
        })
        .build()
        .unwrap()
}

const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only_hint: Some(true),
    destructive_hint: None,
    idempotent_hint: None,
    open_world_hint: None,
};
const DESTRUCTIVE: ToolAnnotations = ToolAnnotations {
    read_only_hint: None,
    destructive_hint: Some(true),
    idempotent_hint: None,
    open_world_hint: None,
};
const PLAIN: ToolAnnotations = ToolAnnotations {
    read_only_hint: None,
    destructive_hint: None,
    idempotent_hint: None,
    open_world_hint: None,
};

/// A registry whose policy asks about every call of `look` (read-only), `wipe` (destructive)
/// and `edit` (no hints), answered by `outcome`.
fn asking(
    mode: PresentationMode,
    outcome: ApprovalOutcome,
) -> (ToolRegistry, Arc<Answering>, Runs) {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode,
        ..RegistryConfig::default()
    });
    CodeMode::new(Arc::new(QuickJsRuntime::default()))
        .install(&registry)
        .unwrap();
    let runs: Runs = Arc::default();
    for (name, hints) in [("look", READ_ONLY), ("wipe", DESTRUCTIVE), ("edit", PLAIN)] {
        registry
            .register(hinted(name, &runs, hints))
            .unwrap()
            .keep();
    }
    registry
        .on_pre_execute(pre_execute_fn(|exec, next| async move {
            if &*exec.name == "run_code" {
                next.run().await
            } else {
                PreToolDecision::Ask { reason: None }
            }
        }))
        .keep();
    let service = Arc::new(Answering(outcome, Mutex::default()));
    registry.set_approval(service.clone());
    (registry, service, runs)
}

#[tokio::test]
async fn a_session_approval_covers_read_only_tools_only() {
    let (registry, service, runs) =
        asking(PresentationMode::Native, ApprovalOutcome::AllowedForSession);
    let agent = registry.new_scope();
    for round in 0..2 {
        for tool in ["look", "wipe", "edit"] {
            let mut input = ToolExecutionInput::new(format!("{tool}-{round}"), tool, json!({}));
            input.agent = Some(agent.id());
            assert!(!registry.execute(input).await.is_error());
        }
    }
    assert_eq!(runs.lock().unwrap().len(), 6, "every call ran");
    assert_eq!(
        service.asked("look"),
        1,
        "read-only: approved for the session"
    );
    assert_eq!(service.asked("wipe"), 2, "destructive: asked every time");
    assert_eq!(service.asked("edit"), 2, "no hints, outside a run: once");
    let requests = service.1.lock().unwrap().clone();
    assert_eq!(
        requests[0],
        ("look".into(), ApprovalScope::Session, READ_ONLY)
    );
    assert_eq!(
        requests[1],
        ("wipe".into(), ApprovalScope::Once, DESTRUCTIVE)
    );
    assert_eq!(requests[2], ("edit".into(), ApprovalScope::Once, PLAIN));

    registry.clear_session_approvals();
    let mut input = ToolExecutionInput::new("look-again", "look", json!({}));
    input.agent = Some(agent.id());
    assert!(!registry.execute(input).await.is_error());
    assert_eq!(
        service.asked("look"),
        2,
        "asked again after the session ended"
    );
}

#[tokio::test]
async fn a_run_approval_covers_the_rest_of_the_run_and_not_the_next() {
    let (registry, service, runs) = asking(PresentationMode::Code, ApprovalOutcome::AllowedForRun);
    let agent = registry.new_scope();
    let program = "for (let i = 0; i < 3; i++) { await tools.edit({}); await tools.wipe({}); }";
    for run in 0..2 {
        let mut input = ToolExecutionInput::new(
            format!("run-{run}"),
            "run_code",
            json!({"code": program, "description": "Edit and wipe"}),
        );
        input.agent = Some(agent.id());
        let result = registry.execute(input).await;
        assert!(!result.is_error(), "{result:?}");
    }
    assert_eq!(runs.lock().unwrap().len(), 12);
    assert_eq!(service.asked("edit"), 2, "once per run");
    assert_eq!(service.asked("wipe"), 6, "destructive: every call");
    let requests = service.1.lock().unwrap().clone();
    assert_eq!(requests[0].1, ApprovalScope::Run);
}

#[tokio::test]
async fn a_run_approval_travels_with_the_continuation() {
    let host = Host::new();
    host.registry
        .register(counted("write_other", &host.runs, false, |_| {
            json!("other")
        }))
        .unwrap()
        .keep();
    let program = "await tools.write({ path: 'a' });\n\
                   await tools.write_other({});\n\
                   await tools.write({ path: 'b' });\n\
                   return 'done';";
    let (continuation, pending) = suspended(host.start(program).await);
    assert_eq!(pending[0].widest_scope, ApprovalScope::Run);
    let run_wide = Decision::Approve(ApprovalScope::Run);
    let (continuation, pending) =
        suspended(host.resume(&continuation, run_wide, true).await.unwrap());
    assert_eq!(pending[0].tool, "write_other");
    // Another process resumes: the approval of `write` for the run came with the continuation.
    let other = Host::with(host.durability.clone());
    other
        .registry
        .register(counted("write_other", &other.runs, false, |_| {
            json!("other")
        }))
        .unwrap()
        .keep();
    let outcome = other
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    assert_eq!(value(outcome)["result"], json!("done"));
    assert_eq!(host.runs_of("write") + other.runs_of("write"), 2);
    assert_eq!(other.runs_of("write_other"), 1);
}

#[tokio::test]
async fn a_destructive_tool_is_asked_about_every_time() {
    let host = Host::new();
    host.registry
        .register(hinted("write_wipe", &host.runs, DESTRUCTIVE))
        .unwrap()
        .keep();
    let program = "await tools.write_wipe({}); await tools.write_wipe({}); return 'wiped';";
    let (continuation, pending) = suspended(host.start(program).await);
    assert_eq!(pending[0].widest_scope, ApprovalScope::Once);
    // A decision reaching further is narrowed to this call.
    let session_wide = Decision::Approve(ApprovalScope::Session);
    let (continuation, pending) = suspended(
        host.resume(&continuation, session_wide, true)
            .await
            .unwrap(),
    );
    assert_eq!(pending[0].id, "run-1:code:2");
    let outcome = host
        .resume(&continuation, Decision::APPROVE, true)
        .await
        .unwrap();
    assert_eq!(value(outcome)["result"], json!("wiped"));
    assert_eq!(host.runs_of("write_wipe"), 2);
}
