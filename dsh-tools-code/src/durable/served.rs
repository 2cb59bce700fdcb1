//! Durable `run_code` for a served registry ([`DurableRunCode`]): the MCP server's
//! [`SuspendableCalls`], so that a program that reaches an approval suspends and its client's
//! retry resumes it (`docs/CONTRACTS.md`, "Approval over MCP").

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{ScopeId, ToolExecutionInput};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::extension::{Suspendable, SuspendableCalls, SuspendedCall};
use tokio_util::sync::CancellationToken;

use super::{Decision, Durability, Resume, RunOutcome};
use crate::host::CodeModeExt as _;
use crate::texts::RUN_CODE_NAME;

/// `run_code` calls run with suspension enabled ([`CodeModeExt::run_code_suspendable`]) and
/// resumed from their continuations ([`CodeModeExt::resume_code`]), sealed with the
/// durability's key; give it to `McpServer::with_suspendable`.
///
/// [`CodeModeExt::run_code_suspendable`]: crate::CodeModeExt::run_code_suspendable
/// [`CodeModeExt::resume_code`]: crate::CodeModeExt::resume_code
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::code::durable::{ContinuationKey, DurableRunCode, Durability, MemorySpentStore};
/// use dsh_tools_runtime::extension::SuspendableCalls;
///
/// let registry = ToolRegistry::new();
/// let durability = Durability::new(ContinuationKey::generate(), Arc::new(MemorySpentStore::default()));
/// let runs = DurableRunCode::new(&registry, durability);
/// assert!(runs.handles("run_code") && !runs.handles("bash"));
/// ```
#[derive(Debug)]
pub struct DurableRunCode {
    registry: ToolRegistry,
    durability: Durability,
}

impl DurableRunCode {
    /// Durable `run_code` calls of `registry`, their continuations sealed by `durability`.
    pub fn new(registry: &ToolRegistry, durability: Durability) -> Self {
        Self {
            registry: registry.clone(),
            durability,
        }
    }
}

/// A run's outcome as the server sees it.
fn suspendable(outcome: RunOutcome) -> Suspendable {
    match outcome {
        RunOutcome::Completed(result) => Suspendable::Completed(result),
        RunOutcome::Suspended {
            continuation,
            pending,
        } => Suspendable::Suspended {
            continuation,
            calls: pending
                .into_iter()
                .map(|call| SuspendedCall {
                    title: call.card.title().to_owned(),
                    tool: call.tool,
                    arguments: call.arguments,
                    reason: call.reason,
                })
                .collect(),
        },
    }
}

impl SuspendableCalls for DurableRunCode {
    fn handles(&self, name: &str) -> bool {
        name == RUN_CODE_NAME
    }

    fn start(&self, input: ToolExecutionInput) -> BoxFuture<'static, Suspendable> {
        let registry = self.registry.clone();
        let durability = self.durability.clone();
        Box::pin(
            async move { suspendable(registry.run_code_suspendable(input, &durability).await) },
        )
    }

    fn resume(
        &self,
        continuation: String,
        approve: bool,
        agent: ScopeId,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Suspendable, String>> {
        let registry = self.registry.clone();
        let durability = self.durability.clone();
        let decision = if approve {
            Decision::APPROVE
        } else {
            Decision::Deny
        };
        let resume = Resume::new(decision)
            .for_agent(agent)
            .suspendable()
            .with_cancellation(cancel);
        Box::pin(async move {
            registry
                .resume_code(&continuation, resume, &durability)
                .await
                .map(suspendable)
                .map_err(|e| e.to_string())
        })
    }
}
