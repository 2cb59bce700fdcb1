//! The approval seam: how a pre-execute `ask` reaches the user (`docs/CONTRACTS.md`, "Stages",
//! stage 5).

use std::sync::Arc;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ScopeId;
use dsh_tools::present::ToolCallView;
use dsh_tools::{ToolAnnotations, ToolDefinition};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What the host is asked to approve.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The calling agent; `None` for a call made on the registry itself (a direct call, a
    /// provider turn without an agent).
    pub agent: Option<ScopeId>,
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
    /// The tool's behaviour hints (`destructive_hint`, `read_only_hint`, …): what the
    /// approval may reach depends on them (see [`ApprovalScope::widest_for`]).
    pub annotations: ToolAnnotations,
    /// The widest scope the pipeline honours for this call: an answer reaching further is
    /// narrowed to it.
    pub widest_scope: ApprovalScope,
    /// The caller's cancellation (the host should stop asking when it fires).
    pub cancel: CancellationToken,
}

/// Which tools ask for approval without a pre-execute policy saying so
/// ([`ToolRegistry::set_approval_policy`](crate::ToolRegistry::set_approval_policy)).
///
/// ```
/// use dsh_tools::{ToolAnnotations, ToolDefinition};
/// use dsh_tools_runtime::approval::ApprovalPolicy;
/// use serde_json::json;
/// let rm = ToolDefinition::builder("rm")
///     .description("Remove a file.")
///     .annotations(ToolAnnotations { destructive_hint: Some(true), ..Default::default() })
///     .execute(|_, _| async { Ok(json!(null)) })
///     .build()
///     .unwrap();
/// assert!(!ApprovalPolicy::Declared.asks(&rm));
/// assert!(ApprovalPolicy::DeclaredOrDestructive.asks(&rm));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalPolicy {
    /// The tools declaring it (`#[tool(requires_approval)]`,
    /// [`ToolBuilder::requires_approval`](dsh_tools::ToolBuilder::requires_approval)).
    #[default]
    Declared,
    /// Those, and every tool annotated `destructive_hint: true` (`#[tool(destructive)]`).
    DeclaredOrDestructive,
}

impl ApprovalPolicy {
    /// Whether a call of `tool` asks for approval under this policy.
    pub fn asks(self, tool: &ToolDefinition) -> bool {
        tool.requires_approval()
            || (self == Self::DeclaredOrDestructive
                && tool.annotations().destructive_hint == Some(true))
    }
}

/// How far an approval reaches.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalScope {
    /// This call only.
    #[default]
    Once,
    /// Every call of the same tool for the rest of the Code Mode run the call belongs to.
    Run,
    /// Every call of the same tool for the rest of the session (the registry's lifetime).
    Session,
}

impl ApprovalScope {
    /// The widest scope an approval of a tool with these `annotations` may have, for a call
    /// made inside a Code Mode run (`in_run`) or not:
    ///
    /// | hints | widest |
    /// |---|---|
    /// | `destructive_hint: true` | [`Once`](Self::Once): every destructive call is asked about |
    /// | `read_only_hint: true` (not destructive) | [`Session`](Self::Session) |
    /// | neither | [`Run`](Self::Run) inside a run, [`Once`](Self::Once) outside one |
    ///
    /// ```
    /// use dsh_tools::{ToolAnnotations, ToolDefinition};
    /// use dsh_tools_runtime::approval::ApprovalScope;
    /// let read_only = ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
    /// let destructive = ToolAnnotations { destructive_hint: Some(true), ..Default::default() };
    /// assert_eq!(ApprovalScope::widest_for(&read_only, false), ApprovalScope::Session);
    /// assert_eq!(ApprovalScope::widest_for(&destructive, true), ApprovalScope::Once);
    /// assert_eq!(ApprovalScope::widest_for(&ToolAnnotations::default(), true), ApprovalScope::Run);
    /// assert_eq!(ApprovalScope::widest_for(&ToolAnnotations::default(), false), ApprovalScope::Once);
    /// ```
    pub fn widest_for(annotations: &ToolAnnotations, in_run: bool) -> Self {
        if annotations.destructive_hint == Some(true) {
            Self::Once
        } else if annotations.read_only_hint == Some(true) {
            Self::Session
        } else if in_run {
            Self::Run
        } else {
            Self::Once
        }
    }
}

/// The host's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalOutcome {
    /// Run this call.
    AllowedOnce,
    /// Run this call and, without asking again, every later call of the same tool in the same
    /// Code Mode run (narrowed to [`AllowedOnce`](Self::AllowedOnce) where the request's
    /// `widest_scope` is `Once`).
    AllowedForRun,
    /// Run this call and every later call of the same tool in this registry (the session),
    /// narrowed to the request's `widest_scope`.
    AllowedForSession,
    /// The user said no.
    Rejected,
    /// The request was cancelled (e.g. the turn was interrupted).
    Cancelled,
    /// No channel to a user exists.
    Unavailable,
}

impl ApprovalOutcome {
    /// How far an allowing outcome reaches (`None` for the others).
    pub fn scope(self) -> Option<ApprovalScope> {
        match self {
            Self::AllowedOnce => Some(ApprovalScope::Once),
            Self::AllowedForRun => Some(ApprovalScope::Run),
            Self::AllowedForSession => Some(ApprovalScope::Session),
            Self::Rejected | Self::Cancelled | Self::Unavailable => None,
        }
    }
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
