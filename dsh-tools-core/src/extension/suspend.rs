//! Calls that suspend at an approval and resume from a sealed continuation (Code Mode's
//! durable `run_code`): what a served call needs to ask the client's user for an approval in
//! its result and continue when the retry carries the answer (`docs/CONTRACTS.md`, "Approval
//! over MCP"), instead of waiting inside the call.

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{ScopeId, ToolExecutionInput, ToolExecutionResult};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How a suspendable call ended this time.
#[derive(Debug)]
pub enum Suspendable {
    /// The call finished: its result, as `execute` returns it.
    Completed(ToolExecutionResult),
    /// The call suspended at an approval: resume `continuation` once the calls are decided.
    Suspended {
        /// The sealed continuation (opaque, authenticated by the implementation).
        continuation: String,
        /// The calls awaiting the decision.
        calls: Vec<SuspendedCall>,
    },
}

/// A call a suspended call awaits a decision about.
#[derive(Debug, Clone, PartialEq)]
pub struct SuspendedCall {
    /// The tool.
    pub tool: String,
    /// What the call does, for the person deciding (its card's title; may be empty).
    pub title: String,
    /// Its arguments.
    pub arguments: Value,
    /// Why the policy asked.
    pub reason: Option<String>,
}

/// A tool whose calls suspend at an approval (Code Mode's durable `run_code`).
///
/// An implementation runs every tool call of a suspended call exactly once across its
/// resumptions, and refuses a continuation that is altered, foreign, or already resumed,
/// before anything runs.
pub trait SuspendableCalls: Send + Sync + std::fmt::Debug {
    /// Whether calls of the tool `name` run through this.
    fn handles(&self, name: &str) -> bool;

    /// Runs the call; an approval it reaches suspends it.
    fn start(&self, input: ToolExecutionInput) -> BoxFuture<'static, Suspendable>;

    /// Resumes a suspended call with the decision (`approve`) about the calls it awaits, as
    /// `agent`; a later approval suspends it again. `Err`: the continuation is refused (the
    /// message says why), nothing ran.
    fn resume(
        &self,
        continuation: String,
        approve: bool,
        agent: ScopeId,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Suspendable, String>>;
}
