//! The approval seam: how a pre-execute `ask` reaches the user (REFERENCE §6.1 rule 5).

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ScopeId;
use dsh_tools::present::ToolCallView;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the host is asked to approve.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The calling agent.
    pub agent: ScopeId,
    /// The tool to run.
    pub tool_name: String,
    /// The model's call id.
    pub call_id: String,
    /// Why the policy asked.
    pub reason: Option<String>,
    /// The call's arguments (the snapshot the body will receive).
    pub arguments: Option<Arc<Value>>,
    /// The pending-call card to show the user: the tool's `present_call`, or
    /// [`fallback_call_view`](dsh_tools::present::fallback_call_view) when it declares none (or
    /// the arguments do not validate).
    pub view: ToolCallView,
    /// The caller's cancellation (the host should stop asking when it fires).
    pub cancel: CancellationToken,
}

/// The host's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalOutcome {
    /// Run this call.
    AllowedOnce,
    /// The user said no.
    Rejected,
    /// The request was cancelled (e.g. the turn was interrupted).
    Cancelled,
    /// No channel to a user exists.
    Unavailable,
}

/// The host's approval service (a terminal prompt, an IDE dialog, a policy engine).
///
/// ```
/// use dsh_tools_runtime::approval::{ApprovalOutcome, ApprovalRequest, ApprovalService};
/// struct AlwaysNo;
/// impl ApprovalService for AlwaysNo {
///     fn request(&self, _req: ApprovalRequest) -> dsh_tools::definition::BoxFuture<'static, ApprovalOutcome> {
///         Box::pin(async { ApprovalOutcome::Rejected })
///     }
/// }
/// ```
pub trait ApprovalService: Send + Sync {
    /// Asks for approval of one call.
    fn request(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome>;
}
