//! Approval asked of the MCP client's user (`docs/CONTRACTS.md`, "MCP", "Approval over MCP").
//!
//! A served call whose pre-execute decision is `ask` asks the client's user when the client can
//! elicit: a `2026-07-28` client gets an input-required result (an elicitation and a sealed
//! `requestState`) and retries the call with the answer; an older session gets an
//! `elicitation/create` request while the call waits. A client that cannot elicit leaves the
//! answer to the registry's approval service, as before.
//!
//! The state a retry carries is sealed (HMAC-SHA256, rmcp's `RequestStateCodec`) and bound to
//! the served agent, the tool and the canonical JSON of its arguments, expires after
//! [`STATE_TTL`], and opens once: a replayed, altered, expired or foreign state is refused
//! before anything runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::ScopeId;
use dsh_tools::json::{canonical_json, js_stringify};
use rmcp::model::{
    CallToolRequestParams, ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest,
    InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approval::ApprovalOutcome;
use crate::hooks::{ApprovalGate, Ask};
use crate::registry::{Registration, ToolRegistry};

/// How long a sealed approval state can be answered.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// How much of a call's arguments (bytes of compact JSON) the question quotes.
const QUESTION_ARGUMENTS: usize = 300;

/// The key of the approval in `inputRequests` / `inputResponses`.
const INPUT_KEY: &str = "approval";

/// How one call in progress gets its approval.
enum Slot {
    /// From the verified answer its retry carried.
    Decided(ApprovalOutcome),
    /// By `elicitation/create` to this session's client.
    Elicit(Peer<RoleServer>),
    /// By an input-required result: the question, once the pipeline asked it.
    InputRequired(Option<String>),
}

/// The approvals of one served view: the calls in progress that ask the client, and the
/// sealing of their states.
pub(crate) struct ClientApprovals {
    agent: ScopeId,
    codec: RequestStateCodec,
    slots: Mutex<HashMap<String, Slot>>,
    /// The nonces of states already opened, until they expire.
    spent: Mutex<HashMap<String, Instant>>,
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

/// A served call in progress: its approval slot, removed when it is finished or dropped.
pub(crate) struct PendingCall {
    approvals: Arc<ClientApprovals>,
    call_id: String,
}

impl PendingCall {
    /// Ends the call: the input-required result to answer with when the pipeline asked the
    /// client's user for approval that way (the call did not run).
    pub(crate) fn finish(self, request: &CallToolRequestParams) -> Option<InputRequiredResult> {
        let approvals = &self.approvals;
        let Some(Slot::InputRequired(Some(question))) = approvals.lock().remove(&self.call_id)
        else {
            return None;
        };
        let state = approvals
            .codec
            .seal_json_with(
                &Sealed { nonce: nonce() },
                &SealOptions::new()
                    .associated_data(&approvals.bound_to(request))
                    .ttl(STATE_TTL),
            )
            .ok()?;
        let elicitation: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": elicitation(&question),
        }))
        .ok()?;
        Some(InputRequiredResult::new(
            Some([(INPUT_KEY.to_owned(), elicitation)].into()),
            Some(state),
        ))
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.approvals.lock().remove(&self.call_id);
    }
}

/// What a sealed state holds (the rest is bound as associated data, not stored).
#[derive(Serialize, Deserialize)]
struct Sealed {
    nonce: String,
}

/// Why a retry's state or answer is refused (a JSON-RPC invalid-params error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    /// The state does not open for this call (altered, expired, or another call's).
    #[error("requestState does not verify for this call: {0}")]
    Unverified(String),
    /// The state was answered before.
    #[error("requestState was already used: ask again by calling without it")]
    Spent,
    /// The answer is not an elicitation result.
    #[error("inputResponses.{INPUT_KEY} is not an elicitation result: {0}")]
    Answer(String),
}

impl ClientApprovals {
    /// The approvals of the view served as `agent`, with a fresh sealing key.
    pub(crate) fn install(registry: &ToolRegistry, agent: ScopeId) -> Arc<Self> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random source");
        Arc::new_cyclic(|weak: &std::sync::Weak<Self>| {
            let weak = weak.clone();
            let gate = registry
                .add_hook::<ApprovalGate>(Arc::new(move |ask: &Ask<'_>| weak.upgrade()?.gate(ask)));
            Self {
                agent,
                codec: RequestStateCodec::try_new(key.to_vec())
                    .expect("a 32-byte key is long enough"),
                slots: Mutex::default(),
                spent: Mutex::default(),
                _gate: gate,
            }
        })
    }

    /// Decides how call `call_id` gets its approval, before it runs: from the answer a retry
    /// carries (verified), or by asking the client when it can elicit. The slot lives until the
    /// returned call is finished or dropped.
    pub(crate) fn prepare(
        self: &Arc<Self>,
        call_id: &str,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<PendingCall, StateError> {
        let slot = if let Some(state) = &request.request_state {
            Some(Slot::Decided(self.answer(state, request)?))
        } else if !can_elicit(context) {
            None
        } else if context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize())
        {
            Some(Slot::InputRequired(None))
        } else {
            Some(Slot::Elicit(context.peer.clone()))
        };
        if let Some(slot) = slot {
            self.lock().insert(call_id.to_owned(), slot);
        }
        Ok(PendingCall {
            approvals: Arc::clone(self),
            call_id: call_id.to_owned(),
        })
    }

    /// The pipeline asks for approval of a call: the answer of its slot, if it has one.
    fn gate(&self, ask: &Ask<'_>) -> Option<BoxFuture<'static, ApprovalOutcome>> {
        if ask.exec.agent != Some(self.agent) || ask.exec.parent.is_some() {
            return None;
        }
        let mut slots = self.lock();
        match slots.get_mut(&*ask.exec.call_id)? {
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
            Slot::InputRequired(asked) => {
                *asked = Some(question(ask));
                // The call ends here; its retry carries the answer.
                Some(Box::pin(std::future::ready(ApprovalOutcome::Cancelled)))
            }
        }
    }

    /// The outcome a retry's state and answer give, once verified.
    fn answer(
        &self,
        state: &str,
        request: &CallToolRequestParams,
    ) -> Result<ApprovalOutcome, StateError> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, &self.bound_to(request))
            .map_err(|e| StateError::Unverified(e.to_string()))?;
        let now = Instant::now();
        {
            let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
            spent.retain(|_, expires| *expires > now);
            if spent.insert(sealed.nonce, now + STATE_TTL).is_some() {
                return Err(StateError::Spent);
            }
        }
        let Some(answer) = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(INPUT_KEY))
        else {
            // No answer: the user was not asked; the call is refused.
            return Ok(ApprovalOutcome::Unavailable);
        };
        let result: ElicitResult = serde_json::from_value(answer.clone())
            .map_err(|e| StateError::Answer(e.to_string()))?;
        Ok(outcome_of(&result))
    }

    /// What a state is bound to: the served agent, the tool and its arguments.
    fn bound_to(&self, request: &CallToolRequestParams) -> Vec<u8> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        canonical_json(&json!({
            "agent": self.agent.0,
            "tool": request.name,
            "arguments": arguments,
        }))
        .into_bytes()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the request's client declared form elicitation.
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

/// The question put to the user: the tool, what the call does (its card's title, or its
/// arguments), and why it asks.
fn question(ask: &Ask<'_>) -> String {
    let name = &*ask.exec.name;
    let title = ask.view.title();
    let mut text = if title.is_empty() || title == name {
        let arguments = ask.exec.arguments.as_deref().map(js_stringify);
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
    if let Some(reason) = ask.reason.filter(|r| !r.is_empty()) {
        text.push_str(&format!(" It asks because {reason}."));
    }
    text
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

/// A random nonce (128 bits, hex).
fn nonce() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
