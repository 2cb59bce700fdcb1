//! The approval seam: how a pre-execute `ask` reaches the user (REFERENCE §6.1 rule 5).

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ScopeId;
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
    /// The caller's cancellation (the host should stop asking when it fires).
    pub cancel: CancellationToken,
}

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ApprovalScope {
    /// This call only.
    #[default]
    Once,
    /// Every call of the same tool for the rest of the Code Mode run the call belongs to.
    Run,
    /// Every call of the same tool for the rest of the session (the registry's lifetime).
    Session,
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
