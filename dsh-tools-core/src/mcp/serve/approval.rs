//! Approval asked of the MCP client's user (`docs/CONTRACTS.md`, "MCP", "Approval over MCP").
//!
//! A served call whose pre-execute decision is `ask` asks the client's user when the client can
//! elicit: a `2026-07-28` client gets an input-required result (an elicitation and a sealed
//! `requestState`) and retries the call with the answer; an older session gets an
//! `elicitation/create` request while the call waits. A client that cannot elicit leaves the
//! answer to the registry's approval service, as before.
//!
//! A `run_code` program's calls that ask reach the run's client the same way in an older
//! session (`elicitation/create` while the run waits); at 2026-07-28 they are left to the
//! registry's approval service.
//!
//! The approval is one question of the call's round ([`CallRound`], key `approval`): its
//! answer counts only when the round vouches for it (a sealed state asked it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{CallerInput, InputKind, InputRequest, ScopeId};
use dsh_tools::json::js_stringify;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Value, json};

use super::rounds::CallRound;
use crate::approval::ApprovalOutcome;
use crate::extension::SuspendedCall;
use crate::hooks::{ApprovalGate, Ask};
use crate::registry::{Registration, ToolRegistry};

/// How much of a call's arguments (bytes of compact JSON) the question quotes.
const QUESTION_ARGUMENTS: usize = 300;

/// The key of the approval in `inputRequests` / `inputResponses`.
const INPUT_KEY: &str = "approval";

/// What separates a Code Mode run's id from its sub-call's number in the sub-call's id.
const SUB_CALL: &str = ":code:";

/// How one call in progress gets its approval.
enum Slot {
    /// From the verified answer its retry carried.
    Decided(ApprovalOutcome),
    /// By `elicitation/create` to this session's client.
    Elicit(Peer<RoleServer>),
    /// By a question in the call's input-required result.
    InputRequired(Arc<CallRound>),
    /// By a question its caller answers while the call waits (a task's, through
    /// `tasks/update`).
    Caller(Arc<dyn CallerInput>),
}

/// The approvals of one served view: the calls in progress that ask the client.
pub(crate) struct ClientApprovals {
    agent: ScopeId,
    slots: Mutex<HashMap<String, Slot>>,
    /// The approval gate through which the pipeline reaches the slots (removed on drop).
    _gate: Registration,
}

impl std::fmt::Debug for ClientApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientApprovals")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

/// A served call in progress: its approval slot, removed when it is dropped.
pub(crate) struct PendingCall {
    approvals: Arc<ClientApprovals>,
    call_id: String,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.approvals.lock().remove(&self.call_id);
    }
}

/// A retry's approval answer that is not an elicitation result (a JSON-RPC invalid-params
/// error).
#[derive(Debug, thiserror::Error)]
#[error("inputResponses.{INPUT_KEY} is not an elicitation result: {0}")]
pub(crate) struct AnswerError(String);

impl ClientApprovals {
    /// The approvals of the view served as `agent`.
    pub(crate) fn install(registry: &ToolRegistry, agent: ScopeId) -> Arc<Self> {
        Arc::new_cyclic(|weak: &std::sync::Weak<Self>| {
            let weak = weak.clone();
            let gate = registry
                .add_hook::<ApprovalGate>(Arc::new(move |ask: &Ask<'_>| weak.upgrade()?.gate(ask)));
            Self {
                agent,
                slots: Mutex::default(),
                _gate: gate,
            }
        })
    }

    /// Decides how call `call_id` gets its approval, before it runs: from the answer its
    /// round vouches for, or by asking the client when it can elicit. The slot lives until the
    /// returned call is dropped.
    pub(crate) fn prepare(
        self: &Arc<Self>,
        call_id: &str,
        round: &Arc<CallRound>,
        context: &RequestContext<RoleServer>,
    ) -> Result<PendingCall, AnswerError> {
        let slot = match round.verified(INPUT_KEY) {
            (Some(answer), _) => {
                let result: ElicitResult =
                    serde_json::from_value(answer).map_err(|e| AnswerError(e.to_string()))?;
                Some(Slot::Decided(outcome_of(&result)))
            }
            // Asked and not answered: the user was not asked; the call is refused.
            (None, true) => Some(Slot::Decided(ApprovalOutcome::Unavailable)),
            (None, false) if !can_elicit(context) => None,
            (None, false) => Some(match round.peer() {
                Some(peer) => Slot::Elicit(peer.clone()),
                None => Slot::InputRequired(Arc::clone(round)),
            }),
        };
        if let Some(slot) = slot {
            self.lock().insert(call_id.to_owned(), slot);
        }
        Ok(PendingCall {
            approvals: Arc::clone(self),
            call_id: call_id.to_owned(),
        })
    }

    /// Call `call_id` gets its approval by asking `caller` (when the client can elicit). The
    /// slot lives until the returned call is dropped.
    pub(crate) fn prepare_caller(
        self: &Arc<Self>,
        call_id: &str,
        caller: Arc<dyn CallerInput>,
    ) -> Option<PendingCall> {
        if !caller.can_answer(InputKind::Elicitation) {
            return None;
        }
        self.lock().insert(call_id.to_owned(), Slot::Caller(caller));
        Some(PendingCall {
            approvals: Arc::clone(self),
            call_id: call_id.to_owned(),
        })
    }

    /// The pipeline asks for approval of a call: the answer of its slot, if it has one.
    fn gate(&self, ask: &Ask<'_>) -> Option<BoxFuture<'static, ApprovalOutcome>> {
        if ask.exec.agent != Some(self.agent) {
            return None;
        }
        let slots = self.lock();
        let call_id = &*ask.exec.call_id;
        let slot = match ask.exec.parent {
            None => slots.get(call_id)?,
            // A `run_code` program's call (`<run id>:code:<n>`) in an older session: the
            // run's client is asked while the run waits. Its other slots are the run's own.
            Some(_) => match slots.get(call_id.split_once(SUB_CALL)?.0)? {
                slot @ Slot::Elicit(_) => slot,
                _ => return None,
            },
        };
        match slot {
            Slot::Decided(outcome) => Some(Box::pin(std::future::ready(*outcome))),
            Slot::Elicit(peer) => {
                let params = elicitation(&question(ask));
                let peer = peer.clone();
                Some(Box::pin(async move {
                    let Ok(params) = serde_json::from_value::<ElicitRequestParams>(params) else {
                        return ApprovalOutcome::Unavailable;
                    };
                    match peer.create_elicitation(params).await {
                        Ok(result) => outcome_of(&result),
                        Err(_) => ApprovalOutcome::Unavailable,
                    }
                }))
            }
            Slot::InputRequired(round) => {
                round.ask_later(
                    INPUT_KEY,
                    InputRequest {
                        kind: InputKind::Elicitation,
                        params: elicitation(&question(ask)),
                    },
                );
                // The call ends here; its retry carries the answer.
                Some(Box::pin(std::future::ready(ApprovalOutcome::Cancelled)))
            }
            Slot::Caller(caller) => {
                let asked = caller.ask(
                    INPUT_KEY,
                    InputRequest {
                        kind: InputKind::Elicitation,
                        params: elicitation(&question(ask)),
                    },
                );
                Some(Box::pin(async move {
                    match asked.await.map(serde_json::from_value::<ElicitResult>) {
                        Ok(Ok(result)) => outcome_of(&result),
                        _ => ApprovalOutcome::Unavailable,
                    }
                }))
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the request's client declared form elicitation.
pub(crate) fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// The question put to the user: the tool, what the call does (its card's title, or its
/// arguments), and why it asks.
fn question(ask: &Ask<'_>) -> String {
    question_of(
        &ask.exec.name,
        ask.view.title(),
        ask.exec.arguments.as_deref(),
        ask.reason,
    )
}

/// [`question`] of a call by its parts.
fn question_of(name: &str, title: &str, arguments: Option<&Value>, reason: Option<&str>) -> String {
    let mut text = if title.is_empty() || title == name {
        let arguments = arguments.map(js_stringify);
        let mut arguments = arguments.unwrap_or_else(|| "{}".to_owned());
        if arguments.len() > QUESTION_ARGUMENTS {
            let end = arguments.floor_char_boundary(QUESTION_ARGUMENTS);
            arguments.truncate(end);
            arguments.push('…');
        }
        format!("Allow the tool \"{name}\" to run with {arguments}?")
    } else {
        format!("Allow the tool \"{name}\" to run ({title})?")
    };
    if let Some(reason) = reason.filter(|r| !r.is_empty()) {
        text.push_str(&format!(" It asks because {reason}."));
    }
    text
}

/// The approval a suspended call awaits, as the question of its input-required result (one
/// line per call it awaits; one decision answers them all), under the approval's key.
pub(crate) fn suspended_question(calls: &[SuspendedCall]) -> (&'static str, InputRequest) {
    let lines: Vec<String> = calls
        .iter()
        .map(|call| {
            question_of(
                &call.tool,
                &call.title,
                Some(&call.arguments),
                call.reason.as_deref(),
            )
        })
        .collect();
    let request = InputRequest {
        kind: InputKind::Elicitation,
        params: elicitation(&lines.join("\n")),
    };
    (INPUT_KEY, request)
}

/// Whether the retry of a suspended call approves: the answer its state asked for, accepted
/// with `approve: true` (no answer refuses).
pub(crate) fn approves(round: &CallRound) -> Result<bool, AnswerError> {
    match round.verified(INPUT_KEY).0 {
        Some(answer) => {
            let result: ElicitResult =
                serde_json::from_value(answer).map_err(|e| AnswerError(e.to_string()))?;
            Ok(outcome_of(&result) == ApprovalOutcome::AllowedOnce)
        }
        None => Ok(false),
    }
}

/// The elicitation's parameters: the question and one boolean, `approve`.
fn elicitation(question: &str) -> Value {
    json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Run this call.",
                    "default": false,
                },
            },
            "required": ["approve"],
        },
    })
}

/// An elicitation result as an approval: accepted with `approve: true` runs the call.
fn outcome_of(result: &ElicitResult) -> ApprovalOutcome {
    let approved = result
        .content
        .as_ref()
        .and_then(|content| content.get("approve"))
        .and_then(Value::as_bool);
    match (&result.action, approved) {
        (ElicitationAction::Accept, Some(true)) => ApprovalOutcome::AllowedOnce,
        (ElicitationAction::Cancel, _) => ApprovalOutcome::Cancelled,
        _ => ApprovalOutcome::Rejected,
    }
}
