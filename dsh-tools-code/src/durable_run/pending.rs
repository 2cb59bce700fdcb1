//! What a suspended run awaits, and the decision about it.

use dsh_tools::present::ToolCallView;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use dsh_tools_core::approval::{ApprovalOutcome, ApprovalScope};

/// A sub-call a suspended run awaits a decision about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// Its id, `<run id>:code:<n>`.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The arguments the program passed.
    pub arguments: Value,
    /// Why the policy asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The card to show the person deciding: the tool's `present_call`, or the generic one.
    pub card: ToolCallView,
    /// The widest scope an approval may have (what the tool's annotations allow, see
    /// [`ApprovalScope::widest_for`]); a wider decision is narrowed to it.
    pub widest_scope: ApprovalScope,
}

/// The decision about a suspended run's pending calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run them; the scope says how far the approval reaches: [`ApprovalScope::Run`] approves
    /// later calls of the same tool in this run too (the continuations carry it),
    /// [`ApprovalScope::Session`] those of the resuming registry — each narrowed to the call's
    /// [`widest_scope`](PendingCall::widest_scope).
    Approve(ApprovalScope),
    /// Refuse them: the program sees a `ToolCallError` (`the user rejected tool "<name>"`).
    Deny,
}

impl Decision {
    /// Approve these calls only.
    pub const APPROVE: Self = Self::Approve(ApprovalScope::Once);

    /// Whether the decision approves.
    pub fn approves(self) -> bool {
        matches!(self, Self::Approve(_))
    }

    /// The approval outcome the pipeline sees.
    pub(crate) fn outcome(self) -> ApprovalOutcome {
        match self {
            Self::Approve(ApprovalScope::Once) => ApprovalOutcome::AllowedOnce,
            Self::Approve(ApprovalScope::Run) => ApprovalOutcome::AllowedForRun,
            Self::Approve(ApprovalScope::Session) => ApprovalOutcome::AllowedForSession,
            Self::Deny => ApprovalOutcome::Rejected,
        }
    }
}
