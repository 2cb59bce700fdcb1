//! The rounds of a served call that asks its client (`docs/CONTRACTS.md`, "Tools that ask their
//! caller"): the questions of one round, the answers of the earlier ones, and the sealed
//! `requestState` that carries them from a round to the next (MCP 2026-07-28); or, in an older
//! session, server-to-client requests while the call waits.
//!
//! A state is sealed (HMAC-SHA256, rmcp's `RequestStateCodec`) and bound to the served agent,
//! the tool and the canonical JSON of its arguments, expires after the server's state TTL
//! ([`STATE_TTL`] unless `McpServer::with_state_ttl` sets another), and opens
//! once: a replayed, altered, expired or foreign state is refused before anything runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{AskError, CallerInput, InputKind, InputRequest, ScopeId};
use dsh_tools::json::canonical_json;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// How long a sealed state can be answered, by default.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// What a sealed state holds (what it is bound to is associated data, not stored).
#[derive(Serialize, Deserialize)]
struct Sealed {
    nonce: String,
    /// The answers the call used so far.
    answers: Map<String, Value>,
    /// The keys asked in the round that issued the state.
    asked: Vec<String>,
    /// The sealed continuation of a call that suspended at an approval (Code Mode's durable
    /// `run_code`): its retry resumes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    continuation: Option<String>,
}

/// Why a retry's state is refused (a JSON-RPC invalid-params error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    /// The state does not open for this call (altered, expired, or another call's).
    #[error("requestState does not verify for this call: {0}")]
    Unverified(String),
    /// The state was answered before.
    #[error("requestState was already used: ask again by calling without it")]
    Spent,
    /// An answer is not a result object.
    #[error("inputResponses.{0} is not an object (the result of the method asked)")]
    Answer(String),
}

/// The sealing of the states of one served view.
pub(crate) struct Rounds {
    agent: ScopeId,
    codec: RequestStateCodec,
    /// How long a state can be answered.
    ttl: Duration,
    /// The nonces of states already opened, until they expire.
    spent: Mutex<HashMap<String, Instant>>,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl Rounds {
    /// The rounds of the view served as `agent`, with a fresh sealing key; states expire after
    /// `ttl`.
    pub(crate) fn new(agent: ScopeId, ttl: Duration) -> Arc<Self> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system's random source");
        Arc::new(Self {
            agent,
            codec: RequestStateCodec::try_new(key.to_vec()).expect("a 32-byte key is long enough"),
            ttl,
            spent: Mutex::default(),
        })
    }

    /// The round of call `request`: its state opened (once) and its answers sorted into those
    /// the server vouches for and those the client offers without a state.
    pub(crate) fn begin(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Arc<CallRound>, StateError> {
        let responses = request.input_responses.clone().unwrap_or_default();
        if let Some((key, _)) = responses.iter().find(|(_, answer)| !answer.is_object()) {
            return Err(StateError::Answer(key.clone()));
        }
        let (verified, asked, offered, continuation) = match &request.request_state {
            Some(state) => {
                let sealed = self.open(state, request)?;
                let mut verified = sealed.answers;
                for key in &sealed.asked {
                    if let Some(answer) = responses.get(key) {
                        verified.insert(key.clone(), answer.clone());
                    }
                }
                (verified, sealed.asked, Map::new(), sealed.continuation)
            }
            None => (
                Map::new(),
                Vec::new(),
                responses.into_iter().collect(),
                None,
            ),
        };
        let mode = if context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize())
        {
            Mode::Rounds
        } else {
            Mode::Session(context.peer.clone())
        };
        Ok(Arc::new(CallRound {
            mode,
            capabilities: context.client_capabilities().unwrap_or_default(),
            verified,
            asked,
            offered,
            continuation,
            used: Mutex::default(),
            pending: Mutex::default(),
            missing: Mutex::default(),
        }))
    }

    fn open(&self, state: &str, request: &CallToolRequestParams) -> Result<Sealed, StateError> {
        let sealed: Sealed = self
            .codec
            .open_json_with(state, &self.bound_to(request))
            .map_err(|e| StateError::Unverified(e.to_string()))?;
        let now = Instant::now();
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        spent.retain(|_, expires| *expires > now);
        if spent.insert(sealed.nonce.clone(), now + self.ttl).is_some() {
            return Err(StateError::Spent);
        }
        Ok(sealed)
    }

    /// The input-required result that ends `round`, when it asked anything.
    pub(crate) fn finish(
        &self,
        round: &CallRound,
        request: &CallToolRequestParams,
    ) -> Option<InputRequiredResult> {
        let pending = std::mem::take(&mut *lock(&round.pending));
        if pending.is_empty() {
            return None;
        }
        let sealed = Sealed {
            nonce: nonce(),
            answers: lock(&round.used).clone(),
            asked: pending.keys().cloned().collect(),
            continuation: None,
        };
        self.input_required(&sealed, pending, request)
    }

    /// The input-required result of a call that suspended at an approval: `question` asked
    /// under `key`, the state carrying `continuation` (its retry resumes it).
    pub(crate) fn suspended(
        &self,
        request: &CallToolRequestParams,
        continuation: String,
        key: &str,
        question: InputRequest,
    ) -> Option<InputRequiredResult> {
        let sealed = Sealed {
            nonce: nonce(),
            answers: Map::new(),
            asked: vec![key.to_owned()],
            continuation: Some(continuation),
        };
        self.input_required(&sealed, [(key.to_owned(), question)].into(), request)
    }

    fn input_required(
        &self,
        sealed: &Sealed,
        pending: std::collections::BTreeMap<String, InputRequest>,
        request: &CallToolRequestParams,
    ) -> Option<InputRequiredResult> {
        let bound = self.bound_to(request);
        let options = SealOptions::new().associated_data(&bound).ttl(self.ttl);
        let state = self.codec.seal_json_with(sealed, &options).ok()?;
        let requests = pending
            .into_iter()
            .map(|(key, request)| Some((key, serde_json::from_value(request.to_mcp()).ok()?)))
            .collect::<Option<_>>()?;
        Some(InputRequiredResult::new(Some(requests), Some(state)))
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
}

/// How a call's questions reach the client.
enum Mode {
    /// In the call's result; the retry carries the answers (2026-07-28).
    Rounds,
    /// By a request to the session's client while the call waits.
    Session(Peer<RoleServer>),
}

/// One round of a served call: what the client answered, and what the call asks now.
pub(crate) struct CallRound {
    mode: Mode,
    capabilities: ClientCapabilities,
    /// Answers the server vouches for: recorded in the state, or to the keys it asked.
    verified: Map<String, Value>,
    /// The keys the state's round asked.
    asked: Vec<String>,
    /// Answers the client offered without a state (tool questions only, never an approval).
    offered: Map<String, Value>,
    /// The continuation the state carried (a suspended call's retry).
    continuation: Option<String>,
    /// The answers this run of the call used (recorded in the next state).
    used: Mutex<Map<String, Value>>,
    /// The questions of this round, by key.
    pending: Mutex<std::collections::BTreeMap<String, InputRequest>>,
    /// A question the client could not be asked (it did not declare the capability).
    missing: Mutex<Option<InputKind>>,
}

impl CallRound {
    /// Whether the call's questions go back in its result (2026-07-28).
    pub(crate) fn in_rounds(&self) -> bool {
        matches!(self.mode, Mode::Rounds)
    }

    /// The continuation of the suspended call this retry resumes, if any.
    pub(crate) fn continuation(&self) -> Option<&str> {
        self.continuation.as_deref()
    }

    /// The session's client, for an older session.
    pub(crate) fn peer(&self) -> Option<&Peer<RoleServer>> {
        match &self.mode {
            Mode::Session(peer) => Some(peer),
            Mode::Rounds => None,
        }
    }

    /// The vouched-for answer to `key` (recorded as used), and whether the state asked it.
    pub(crate) fn verified(&self, key: &str) -> (Option<Value>, bool) {
        let answer = self.verified.get(key).cloned();
        if let Some(answer) = &answer {
            lock(&self.used).insert(key.to_owned(), answer.clone());
        }
        (answer, self.asked.iter().any(|asked| asked == key))
    }

    /// Asks `request` under `key` in this round's result.
    pub(crate) fn ask_later(&self, key: &str, request: InputRequest) {
        lock(&self.pending).insert(key.to_owned(), request);
    }

    /// The capability the client lacked for a question the call needed, if any.
    pub(crate) fn missing(&self) -> Option<InputKind> {
        *lock(&self.missing)
    }

    /// Whether the client declared `kind`.
    fn declares(&self, kind: InputKind) -> bool {
        declares(&self.capabilities, kind)
    }
}

/// Whether a client with `capabilities` can be asked `kind`.
pub(crate) fn declares(capabilities: &ClientCapabilities, kind: InputKind) -> bool {
    match kind {
        InputKind::Elicitation => capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        InputKind::Sampling => capabilities.sampling.is_some(),
        InputKind::Roots => capabilities.roots.is_some(),
    }
}

impl CallerInput for CallRound {
    fn can_answer(&self, kind: InputKind) -> bool {
        self.declares(kind)
    }

    fn ask(&self, key: &str, request: InputRequest) -> BoxFuture<'static, Result<Value, AskError>> {
        let kind = request.kind;
        if !self.declares(kind) {
            *lock(&self.missing) = Some(kind);
            return Box::pin(std::future::ready(Err(AskError::NotDeclared(kind))));
        }
        let Some(peer) = self.peer().cloned() else {
            let answer = self
                .verified(key)
                .0
                .or_else(|| self.offered.get(key).cloned());
            let outcome = match answer {
                Some(answer) => {
                    lock(&self.used).insert(key.to_owned(), answer.clone());
                    Ok(answer)
                }
                None => {
                    self.ask_later(key, request);
                    Err(AskError::InputRequired(key.to_owned()))
                }
            };
            return Box::pin(std::future::ready(outcome));
        };
        Box::pin(super::requests::send(peer, request))
    }
}

/// The capability `kind` as a `ClientCapabilities` (the data of a -32021 error).
pub(crate) fn required(kind: InputKind) -> ClientCapabilities {
    serde_json::from_value(json!({ kind.capability(): {} })).unwrap_or_default()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A random nonce (128 bits, hex).
pub(crate) fn nonce() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
