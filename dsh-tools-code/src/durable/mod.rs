//! Durable Code Mode: a program whose tool call needs a person's approval **suspends**, and
//! **resumes** later — in this process or another — with every tool call executed exactly once.
//!
//! [`CodeModeExt::run_code_suspendable`](crate::CodeModeExt::run_code_suspendable) runs a `run_code` call with suspension enabled: when
//! a sub-call's pre-execute decision is `ask`, the calls already in flight finish (and are
//! journaled), calls not yet started are not started, the program stops, and the outcome is
//! [`RunOutcome::Suspended`] — a sealed continuation and the [`PendingCall`]s awaiting a
//! decision. [`CodeModeExt::resume_code`](crate::CodeModeExt::resume_code) opens the continuation (refusing a tampered,
//! truncated, foreign-key or already resumed one before anything runs) and resumes the run
//! with the [`Decision`].
//!
//! ```
//! use std::sync::Arc;
//! use dsh_tools::ToolDefinition;
//! use dsh_tools::exec::{PreToolDecision, ToolExecutionInput};
//! use dsh_tools_runtime::code::durable::{
//!     ContinuationKey, Decision, Durability, MemorySpentStore, Resume, RunOutcome,
//! };
//! use dsh_tools_runtime::code::quickjs::QuickJsRuntime;
//! use dsh_tools_runtime::code::{CodeMode, CodeModeExt};
//! use dsh_tools_runtime::hooks::pre_execute_fn;
//! use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::with_config(RegistryConfig {
//!     mode: PresentationMode::Code,
//!     ..RegistryConfig::default()
//! });
//! CodeMode::new(Arc::new(QuickJsRuntime::default())).install(&registry).unwrap();
//! registry.register(ToolDefinition::builder("deploy").description("Deploy the site.")
//!     .execute(|_, _| async { Ok(json!("deployed")) }).build().unwrap()).unwrap().keep();
//! registry.on_pre_execute(pre_execute_fn(|exec, next| async move {
//!     if &*exec.name == "deploy" {
//!         PreToolDecision::Ask { reason: Some("deploys need a person".into()) }
//!     } else {
//!         next.run().await
//!     }
//! })).keep();
//! // The host's key and spent-id store (a FileSpentStore across processes).
//! let durability = Durability::new(ContinuationKey::generate(), Arc::new(MemorySpentStore::default()));
//!
//! let program = "const stamp = Date.now();\nreturn [await tools.deploy({}), stamp > 0];";
//! let call = ToolExecutionInput::new("run-1", "run_code", json!({"code": program, "description": "Deploy"}));
//! let RunOutcome::Suspended { continuation, pending } =
//!     registry.run_code_suspendable(call, &durability).await
//! else { unreachable!("deploy asks") };
//! assert_eq!((pending[0].id.as_str(), pending[0].tool.as_str()), ("run-1:code:1", "deploy"));
//!
//! // Later, perhaps in another process with the same key and store:
//! let resumed = registry.resume_code(&continuation, Resume::new(Decision::APPROVE), &durability).await;
//! let Ok(RunOutcome::Completed(result)) = resumed else { unreachable!() };
//! assert_eq!(result.value(), Some(&json!({"logs": [], "result": ["deployed", true]})));
//! // A continuation resumes once.
//! let again = registry.resume_code(&continuation, Resume::new(Decision::APPROVE), &durability).await;
//! assert_eq!(again.unwrap_err().code(), "CONTINUATION_SPENT");
//! # });
//! ```
//!
//! # Replay
//!
//! QuickJS cannot snapshot its heap, so resuming is **deterministic replay**: the program runs
//! again from its start with the same run id. Every sub-call the journal holds is answered from
//! it — no pipeline, no side effect, a `tool/code-dispatch-replayed` event instead — `Date` and
//! `Math.random` return what they returned the first time, and results reach the program in the
//! same delivery rounds, so the program takes the same path up to the pending call. That call
//! gets the decision (approved: it runs through the whole pipeline; denied: the program sees a
//! `ToolCallError`, `the user rejected tool "<name>"`), and the run continues live; with
//! suspension enabled again, a later `ask` suspends it again.
//!
//! A replayed call whose tool or arguments differ from the journal's (or from the pending
//! call's) is a **divergence**: the run fails with `code run failed (divergence): …` naming the
//! call, and nothing is dispatched. So does a replay that ends before reaching the pending call.
//!
//! # Guarantees and limits
//!
//! - Each tool call runs at most once across a run's suspensions and resumptions, and each
//!   continuation resumes at most once (the host's [`SpentStore`]): its id is spent before
//!   anything runs, so a crash during a resumption loses that resumption rather than repeating
//!   its calls.
//! - What a program does outside its tools is not journaled: `console.log` output is produced
//!   again by the replay (the final result carries the whole run's logs, once), and a program
//!   that depends on something the sandbox does not record — `WeakRef`/`FinalizationRegistry`
//!   timing, the local time zone of another machine — may diverge; a divergence that changes a
//!   tool call is caught, one that changes only the output is not.
//! - The continuation carries the program and every journaled result: it is as confidential as
//!   they are. It is authenticated, not encrypted.
//! - Each resumption runs the program from its start under the runtime's full budgets.
//! - Sub-calls' deferred context messages (images, additional contexts) are journaled and
//!   deferred again by the replay; the suspended execution's own result is discarded.
//! - Suspension needs a runtime that [replays](crate::CodeRuntime::replays) (QuickJS
//!   does) or [snapshots](crate::CodeRuntime::snapshots) (Monty does).
//!
//! # Snapshot
//!
//! A runtime that snapshots (Python on Monty) is not replayed: at the suspension its program is
//! **paused** at its next suspension point and its state sealed into the continuation, which
//! also names its language (`python`; a registry whose runtime runs another language refuses it
//! with `CONTINUATION_LANGUAGE` before spending it). Resuming restores that state — only ever
//! from an authenticated continuation — and the runtime first calls again the tools the program
//! still awaits, under their original sub-call ids: calls that completed before the suspension
//! are answered from the journal, the pending call gets the decision, later ones run live.
//! Nothing before the pause runs again (no divergence is possible); the output captured before
//! it comes first in the final logs, once. A program that does not reach a suspension point
//! soon after the `ask` (it keeps computing) cannot be paused: the run fails, naming why.

mod continuation;
mod served;
mod spent;
#[cfg(feature = "store")]
mod stored;

use std::sync::{Arc, PoisonError};

use dsh_tools::exec::{ScopeId, ToolExecutionInput, ToolExecutionResult};
use dsh_tools::{ErrorInfo, ToolError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[cfg(feature = "store")]
pub use crate::durable_run::link::OUTCOME_UNKNOWN;
pub use continuation::{CONTINUATION_VERSION, ContinuationError, ContinuationKey, MIN_KEY_BYTES};
pub use served::DurableRunCode;
pub use spent::{FileSpentStore, MemorySpentStore, SpentStore};
#[cfg(feature = "store")]
pub use stored::{OutcomeUnknownPolicy, UNNAMED_APPROVER, resume_run};

pub(crate) use crate::durable_run::journal::JournalEntry;
pub(crate) use crate::durable_run::{
    Check, DurableRun, DurableStart, Ending, RunGrants, Suspension,
};
pub use crate::durable_run::{Decision, PendingCall};

use crate::state::code_runtime;
use crate::texts::RUN_CODE_NAME;
use continuation::Payload;
use dsh_tools_core::ToolRegistry;

/// What a host supplies for durable runs: the key that seals and opens its continuations and
/// the store of spent continuation ids.
#[derive(Clone)]
pub struct Durability {
    key: ContinuationKey,
    spent: Arc<dyn SpentStore>,
    /// The store runs are journaled in as they go (feature `store`).
    #[cfg(feature = "store")]
    store: Option<Arc<dyn dsh_tools_store::DurableStore>>,
}

impl std::fmt::Debug for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durability").finish_non_exhaustive()
    }
}

impl Durability {
    /// Continuations sealed with `key`, spent ids kept in `spent`.
    pub fn new(key: ContinuationKey, spent: Arc<dyn SpentStore>) -> Self {
        Self {
            key,
            spent,
            #[cfg(feature = "store")]
            store: None,
        }
    }

    /// The same, journaling every run in `store` as it goes (feature `store`): a run begins
    /// in the store under its call id (an id the store already has is refused), each
    /// side-effecting sub-call records a write-ahead intent before it is dispatched, each
    /// completed sub-call is journaled before its result reaches the program, and a run whose
    /// process died is resumed by id with [`resume_run`] (see `docs/CONTRACTS.md`, "Durable
    /// runs").
    #[cfg(feature = "store")]
    pub fn with_store(mut self, store: Arc<dyn dsh_tools_store::DurableStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The store runs are journaled in, if any.
    #[cfg(feature = "store")]
    pub fn store(&self) -> Option<&Arc<dyn dsh_tools_store::DurableStore>> {
        self.store.as_ref()
    }

    /// The language of the program `continuation` suspended (`typescript`, `python`): what
    /// code runtime resumes it. The continuation is authenticated first (nothing is spent).
    pub fn language_of(&self, continuation: &str) -> Result<String, ContinuationError> {
        Ok(continuation::open(continuation, &self.key)?.language)
    }
}

/// How a suspendable run ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// The `run_code` call finished: its result (success or failure), as `execute` returns it.
    Completed(ToolExecutionResult),
    /// The run suspended: resume it with `continuation` once the pending calls are decided.
    Suspended {
        /// The sealed continuation (a compact ASCII string).
        continuation: String,
        /// The calls awaiting a decision.
        pending: Vec<PendingCall>,
    },
}

/// How to resume a continuation.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Resume {
    /// The decision about every pending call.
    pub decision: Decision,
    /// The agent the resumed run calls its tools as (scope ids do not survive a process: the
    /// host names the agent again).
    pub agent: Option<ScopeId>,
    /// Whether a later `ask` suspends the resumed run again (otherwise the approval service
    /// answers it).
    pub suspend: bool,
    /// Cancels the resumed run.
    pub cancel: CancellationToken,
    /// What a run resumed by id ([`resume_run`]) does with a call whose outcome is unknown.
    #[cfg(feature = "store")]
    pub outcome_unknown: OutcomeUnknownPolicy,
    /// Who made the decision (as the host authenticated them): recorded with it in the store
    /// ([`UNNAMED_APPROVER`] when `None`).
    #[cfg(feature = "store")]
    pub approver: Option<String>,
    /// How long the recorded decision applies (a call reached again after a crash, with the
    /// same arguments, is not asked again until then). An hour unless set.
    #[cfg(feature = "store")]
    pub approval_ttl: std::time::Duration,
}

impl Resume {
    /// Resume with `decision`, no agent, no further suspension.
    pub fn new(decision: Decision) -> Self {
        Self {
            decision,
            agent: None,
            suspend: false,
            cancel: CancellationToken::new(),
            #[cfg(feature = "store")]
            outcome_unknown: OutcomeUnknownPolicy::default(),
            #[cfg(feature = "store")]
            approver: None,
            #[cfg(feature = "store")]
            approval_ttl: std::time::Duration::from_secs(3600),
        }
    }

    /// The same, the decision made by `approver` and applying for `ttl` (recorded in the
    /// durability's store, bound to the digest of the pending calls' arguments).
    #[cfg(feature = "store")]
    pub fn approved_by(mut self, approver: impl Into<String>, ttl: std::time::Duration) -> Self {
        self.approver = Some(approver.into());
        self.approval_ttl = ttl;
        self
    }

    /// The same, handling a call whose outcome is unknown by `policy` ([`resume_run`]).
    #[cfg(feature = "store")]
    pub fn on_outcome_unknown(mut self, policy: OutcomeUnknownPolicy) -> Self {
        self.outcome_unknown = policy;
        self
    }

    /// The same, calling tools as `agent`.
    pub fn for_agent(mut self, agent: ScopeId) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The same, suspending again at the next `ask`.
    pub fn suspendable(mut self) -> Self {
        self.suspend = true;
        self
    }

    /// The same, cancelled by `cancel`.
    pub fn with_cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

/// The durable runs (suspendable or resumed `run_code` executions) alive in this process right
/// now: 0 whenever none is in progress (a leak check).
pub fn live_durable_runs() -> usize {
    crate::durable_run::LIVE.load(std::sync::atomic::Ordering::SeqCst)
}

/// The `run_code` error of a suspended execution (the caller gets the continuation instead).
pub(crate) fn suspended_message(suspension: &Suspension) -> String {
    let calls: Vec<String> = suspension
        .pending
        .iter()
        .map(|p| format!("tools.{} ({})", p.tool, p.id))
        .collect();
    format!("code run suspended: {} awaits a decision", calls.join(", "))
}

/// Runs a `run_code` call (`input.name` must be `run_code`) with suspension enabled: a
/// sub-call whose pre-execute decision is `ask` suspends the run instead of asking the
/// approval service (see [the module docs](crate::durable)).
pub(crate) async fn run_code_suspendable(
    registry: &ToolRegistry,
    input: ToolExecutionInput,
    durability: &Durability,
) -> RunOutcome {
    start_run(registry, input, durability, true).await
}

/// Runs a `run_code` call journaled as it goes in the durability's store (feature `store`),
/// without suspension: a call that asks goes to the approval service. A run whose process
/// dies is resumed by id with [`resume_run`]. Without a store nothing is journaled: the run is
/// an ordinary one.
#[cfg(feature = "store")]
pub async fn run_code_journaled(
    registry: &ToolRegistry,
    input: ToolExecutionInput,
    durability: &Durability,
) -> RunOutcome {
    start_run(registry, input, durability, false).await
}

async fn start_run(
    registry: &ToolRegistry,
    input: ToolExecutionInput,
    durability: &Durability,
    suspend: bool,
) -> RunOutcome {
    #[cfg(feature = "store")]
    let link = match durability.store.as_ref() {
        Some(store) if input.name == RUN_CODE_NAME => {
            let root = input
                .root_call_id
                .as_deref()
                .filter(|root| *root != input.call_id);
            match stored::begin(store, registry, &input.call_id, &input.arguments, root).await {
                Ok(link) => Some(link),
                Err(message) => {
                    let error = ToolError::with_info(
                        message,
                        ErrorInfo::new("DurableStoreError", "STORE_REFUSED"),
                    );
                    return RunOutcome::Completed(ToolExecutionResult::failure(error));
                }
            }
        }
        _ => None,
    };
    let start = DurableStart {
        suspend,
        #[cfg(feature = "store")]
        link: link.clone(),
        ..DurableStart::default()
    };
    let outcome = run_durable(registry, input, start, durability).await;
    #[cfg(feature = "store")]
    let outcome = stored::finish(link.as_ref(), outcome).await;
    outcome
}

/// Resumes a suspended run: opens `continuation` with the durability's key, spends its id,
/// and runs the program again by replay with `resume.decision` for its pending calls.
///
/// A continuation that is not one, was altered or truncated, was sealed with another key,
/// or was already resumed is refused before anything runs.
pub(crate) async fn resume_code(
    registry: &ToolRegistry,
    continuation: &str,
    resume: Resume,
    durability: &Durability,
) -> Result<RunOutcome, ContinuationError> {
    let payload = continuation::open(continuation, &durability.key)?;
    if let Some(runtime) = code_runtime(registry)
        && runtime.language() != payload.language
    {
        return Err(ContinuationError::Language {
            found: payload.language,
            expected: runtime.language().to_owned(),
        });
    }
    match durability.spent.spend(&payload.id) {
        Ok(true) => {}
        Ok(false) => return Err(ContinuationError::Spent { id: payload.id }),
        Err(error) => return Err(ContinuationError::Store(error.to_string())),
    }
    #[cfg(feature = "store")]
    let decided: Vec<(PendingCall, Decision)> = payload
        .pending
        .iter()
        .map(|pending| (pending.clone(), resume.decision))
        .collect();
    #[cfg(feature = "store")]
    let link = stored::link(
        registry,
        durability,
        &payload.run,
        &decided,
        &resume,
        &payload.record,
    )
    .await?;
    let input = resumed_input(
        payload.run,
        &payload.program,
        &payload.description,
        payload.root,
        &resume,
    );
    let start = DurableStart {
        suspend: resume.suspend,
        journal: crate::durable_run::journal::Journal::from_entries(payload.journal),
        record: Some(payload.record),
        decided: payload
            .pending
            .into_iter()
            .map(|pending| (pending, resume.decision))
            .collect(),
        grants: payload.grants,
        snapshot: payload.snapshot,
        #[cfg(feature = "store")]
        link: link.clone(),
        ..DurableStart::default()
    };
    let outcome = run_durable(registry, input, start, durability).await;
    #[cfg(feature = "store")]
    let outcome = stored::finish(link.as_ref(), outcome).await;
    Ok(outcome)
}

/// The `run_code` call that resumes run `run` of `program`.
pub(crate) fn resumed_input(
    run: String,
    program: &str,
    description: &str,
    root: Option<String>,
    resume: &Resume,
) -> ToolExecutionInput {
    let mut input = ToolExecutionInput::new(
        run,
        RUN_CODE_NAME,
        json!({"code": program, "description": description}),
    );
    input.root_call_id = root;
    input.agent = resume.agent;
    input.cancel = resume.cancel.clone();
    input
}

pub(crate) async fn run_durable(
    registry: &ToolRegistry,
    input: ToolExecutionInput,
    start: DurableStart,
    durability: &Durability,
) -> RunOutcome {
    if input.name != RUN_CODE_NAME {
        return RunOutcome::Completed(ToolExecutionResult::failure(ToolError::msg(format!(
            "only {RUN_CODE_NAME} calls suspend; got a call of \"{}\"",
            input.name
        ))));
    }
    let text = |key: &str| input.arguments[key].as_str().unwrap_or_default().to_owned();
    let (program, description) = (text("code"), text("description"));
    let run = input.call_id.clone();
    let root = input.root_call_id.clone().filter(|root| *root != run);
    let slot = Arc::clone(&start.suspension);
    let Some(registered) = crate::state::CodeModeState::register_durable(registry, &run, start)
    else {
        return RunOutcome::Completed(ToolExecutionResult::failure(ToolError::msg(format!(
            "a durable run_code call with id \"{run}\" is already running"
        ))));
    };
    let result = registry.execute(input).await;
    drop(registered);
    let suspension = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    let Some(suspension) = suspension else {
        return RunOutcome::Completed(result);
    };
    let language =
        code_runtime(registry).map_or_else(String::new, |runtime| runtime.language().to_owned());
    let payload = Payload {
        v: CONTINUATION_VERSION,
        id: continuation::fresh_id(),
        run,
        root,
        language,
        program,
        description,
        journal: suspension.journal,
        record: suspension.record,
        pending: suspension.pending.clone(),
        grants: suspension.grants,
        snapshot: suspension.snapshot,
    };
    match continuation::seal(&payload, &durability.key) {
        Ok(continuation) => RunOutcome::Suspended {
            continuation,
            pending: suspension.pending,
        },
        Err(error) => RunOutcome::Completed(ToolExecutionResult::failure(ToolError::with_info(
            format!("code run failed: the suspended run could not be sealed: {error}"),
            ErrorInfo::new("CodeRunFailedError", "CODE_RUN_FAILED"),
        ))),
    }
}
