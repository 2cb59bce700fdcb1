//! The execution pipeline (`docs/CONTRACTS.md`, "The pipeline"; the stage numbers are those of
//! its "Stages"): pre-execute → guards → execute wrappers → post-execute → result. Every outcome
//! is a result value; a call never panics.
//!
//! A [`Pipeline`] value owns what the stages need — the hook store, the approval service, host
//! state, deadline enforcement — and the stages are one file each:
//!
//! | phase | stages | file |
//! |---|---|---|
//! | begin | 1: snapshot the arguments, mint the token, resolve the tool once | `call.rs` |
//! | prepare | 2–9: hidden tools, pre-aborted calls, pre-execute policies, approval, guards | `policy.rs` |
//! | dispatch | 10–14: execute wrappers around core dispatch (the body, under its deadline); a batch's plain calls up to the body's first poll without a future | `dispatch.rs`, `first_poll.rs` |
//! | commit | 15–17: post-execute policies; 18–21: materialise, finalise, cut to the result budget, observe | `post.rs`, `finish.rs`, `budget.rs` |
//!
//! [`execute`] runs the four phases in that order; a batch ([`batch`]) and a Code Mode run's
//! sub-call lane (`scheduler.rs`) run the same phases, overlapping only dispatch. The pipeline
//! runs in a [`Host`] (the registry): the host owns the pipeline and answers what a name resolves
//! to and how scopes nest (which scoped hooks apply).

// The readability budget: no function of the pipeline over ~100 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

pub mod batch;
mod budget;
mod call;
mod dispatch;
mod finish;
mod first_poll;
pub mod hooks;
mod input;
mod intake;
mod outcome;
mod policy;
mod post;
mod scheduler;
pub mod timeout;

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::task::Poll;
use std::time::Instant;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{
    ScopeId, StateMap, ToolExecution, ToolExecutionInput, ToolExecutionMode, ToolExecutionResult,
};
use tracing::Instrument;

pub use self::{
    input::{CallInput, CallerCancel, SharedStr},
    intake::LaneIntake,
    scheduler::{LaneEvent, OnStart},
};
use crate::approval::ApprovalService;
use crate::error::ToolNotFoundError;
pub(crate) use call::Call;
use hooks::{HookKind, HookTables};
pub(crate) use scheduler::Scheduler;

/// What a tool name resolves to for one call.
pub(crate) enum Resolution {
    /// The definition the call runs.
    Runs(ToolDefinition),
    /// A visible tool this call may not run directly (a model-direct call of a tool a Code Mode
    /// scope reaches only from programs); `refusal` is its `UNKNOWN_TOOL` error.
    Hidden {
        def: ToolDefinition,
        refusal: ToolNotFoundError,
    },
    /// Nothing of that name is visible.
    Unknown,
}

impl Resolution {
    /// The definition a call may execute, if any.
    pub(crate) fn runnable(self) -> Option<ToolDefinition> {
        match self {
            Self::Runs(def) => Some(def),
            Self::Hidden { .. } | Self::Unknown => None,
        }
    }
}

/// What the pipeline runs in: the tool store it asks what a name resolves to and how scopes
/// nest, and the pipeline itself. The registry is the one host; a host is cheap to clone (the
/// futures of a batch each hold one).
pub(crate) trait Host: Clone + Send + Sync + Unpin + 'static {
    /// The pipeline (hook store, approval, stage settings).
    fn pipeline(&self) -> &Pipeline;
    /// What `name` resolves to for a call by `agent`; `nested` for a call made from inside
    /// another one (a Code Mode sub-call).
    fn resolve(&self, name: &str, agent: Option<ScopeId>, nested: bool) -> Resolution;
    /// The scope chain of `agent`, farthest ancestor first, `agent` last.
    fn chain(&self, agent: ScopeId) -> Vec<ScopeId>;
    /// A number that changes whenever what a name resolves to may have changed: a resolution
    /// made after reading generation `g` still holds while the generation is `g`.
    fn generation(&self) -> u64;
    /// The result budget of a call by `agent` whose tool sets none (`None`: not cut).
    fn result_budget(&self, agent: Option<ScopeId>) -> Option<usize>;
    /// A number of tokens no budget the host applies is below: content of at most that many
    /// bytes fits any budget, and is not looked at further.
    fn budget_floor(&self) -> usize;
}

/// The pipeline of one registry: its hook store and the stages' settings.
#[derive(Default)]
pub(crate) struct Pipeline {
    hooks: RwLock<Arc<HookTables>>,
    /// The version of `hooks` (read without the lock).
    hooks_version: AtomicU64,
    policy: policy::Policy,
    dispatch: dispatch::Dispatch,
}

/// Where a call goes after a phase.
pub(crate) enum Prepared {
    /// Run the execute waterfall.
    Dispatch,
    /// A result that still goes through post-execute (denials, in-policy aborts).
    PostResult(ToolExecutionResult),
    /// A final result (skips post-execute).
    FinalResult(ToolExecutionResult),
}

impl Pipeline {
    /// A pipeline whose tools without a renderer of their own lay their values out as `json`.
    pub(crate) fn laying_out(json: dsh_tools::json::ResultJson) -> Self {
        Self {
            dispatch: dispatch::Dispatch::laying_out(json),
            ..Self::default()
        }
    }

    /// A snapshot of the hook store (what a call starting now runs with).
    pub(crate) fn hooks(&self) -> Arc<HookTables> {
        Arc::clone(&self.hooks.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The hook store as it is now: `snapshot` itself when nothing changed since it was taken.
    pub(crate) fn hooks_since(&self, snapshot: &Arc<HookTables>) -> Arc<HookTables> {
        if self.hooks_version.load(Ordering::Acquire) == snapshot.version {
            Arc::clone(snapshot)
        } else {
            self.hooks()
        }
    }

    /// Edits the hook store (copy on write: calls in flight keep their snapshot).
    pub(crate) fn edit_hooks(&self, edit: impl FnOnce(&mut HookTables)) {
        let mut guard = self.hooks.write().unwrap_or_else(PoisonError::into_inner);
        let tables = Arc::make_mut(&mut guard);
        edit(tables);
        tables.version += 1;
        self.hooks_version.store(tables.version, Ordering::Release);
    }

    /// Adds a hook of kind `K`.
    pub(crate) fn add_hook<K: HookKind>(&self, id: u64, scope: Option<ScopeId>, hook: K::Hook) {
        self.edit_hooks(|tables| tables.insert::<K>(id, scope, hook));
    }

    pub(crate) fn set_approval(&self, service: Arc<dyn ApprovalService>) {
        self.policy.set_approval(service);
    }

    pub(crate) fn approval(&self) -> Option<Arc<dyn ApprovalService>> {
        self.policy.approval()
    }

    pub(crate) fn set_approval_policy(&self, policy: crate::approval::ApprovalPolicy) {
        self.policy.set_approval_policy(policy);
    }

    pub(crate) fn clear_session_approvals(&self) {
        self.policy.clear_session_approvals();
    }

    pub(crate) fn provide_state(&self, edit: impl FnOnce(&mut StateMap)) {
        self.dispatch.provide_state(edit);
    }

    /// The host state provided so far.
    pub(crate) fn states(&self) -> Arc<StateMap> {
        self.dispatch.states()
    }

    pub(crate) fn enforce_deadlines(&self, enforce: bool) {
        self.dispatch.enforce_deadlines(enforce);
    }
}

/// The hooks of kind `K` that apply to `exec`, from the store as it is now.
pub(crate) fn applicable<K: HookKind, H: Host>(host: &H, exec: &ToolExecution) -> Vec<K::Hook> {
    let hooks = host.pipeline().hooks();
    hooks::applicable(hooks.get::<K>(), exec, |agent| host.chain(agent))
}

// --- One call ----------------------------------------------------------------------------------

/// Runs one call through every phase and returns its result (exactly one result notification
/// is published per call).
pub(crate) async fn execute<H: Host>(host: &H, input: ToolExecutionInput) -> ToolExecutionResult {
    let input = CallInput::from(input);
    let span = call_span(&input, None, None);
    // The pipeline's future is large: box it once instead of moving it through every adapter
    // (measurably cheaper than the memmoves).
    if span.is_disabled() {
        return run(host, input).await;
    }
    #[cfg(feature = "otel")]
    crate::otel::adopt_remote_parent(&span);
    let pipeline = Box::pin(run(host, input));
    let started = Instant::now();
    let result = pipeline.instrument(span.clone()).await;
    record_outcome(&span, &result, started);
    result
}

/// The four phases of one call, in order (the commit phase inline: a separate future would move
/// the result through one more frame on every call).
async fn run<H: Host>(host: &H, input: CallInput) -> ToolExecutionResult {
    let mut call = begin(host, input, false);
    let prepared = match call.early_result() {
        Some(result) => Prepared::FinalResult(result),
        None => prepare(host, &mut call).await,
    };
    let prepared = match prepared {
        Prepared::Dispatch => dispatch_in_place(host, &call).await,
        other => other,
    };
    let result = match settle(&call, prepared) {
        Settled::Finish(result) => result,
        // Boxed: this rarer stage's future would otherwise size every call's future.
        Settled::Post(result) => Box::pin(post::run(host, &call, result)).await,
    };
    finish::run(host, &call, result)
}

/// Phase 3 of a single call: a plain call up to its body's first poll in place (see
/// `first_poll.rs`), the rest of the body when it did not complete there; any other call through
/// [`dispatch`], boxed (the wrappers' and timers' futures would otherwise size every call's).
async fn dispatch_in_place<H: Host>(host: &H, call: &Call) -> Prepared {
    let first = std::future::poll_fn(|cx| Poll::Ready(first_poll::first_poll(host, call, cx)));
    match first.await {
        first_poll::FirstPoll::Done(prepared) => prepared,
        first_poll::FirstPoll::Running(running) => running.finish(call).await,
        first_poll::FirstPoll::Async => Box::pin(dispatch(host, call)).await,
    }
}

/// Phase 1 (stage 1): creates the call (`checked`: its arguments are known to be lossless).
pub(crate) fn begin<H: Host>(host: &H, input: CallInput, checked: bool) -> Call {
    Call::create(host, input, checked, host.pipeline().hooks(), None)
}

/// [`begin`] with the resolution [`classify_resolved`] made for this input: used when the
/// registry has not changed since (same generation), else the name is resolved again.
pub(crate) fn begin_resolved<H: Host>(
    host: &H,
    input: CallInput,
    checked: bool,
    resolved: Option<Resolved>,
) -> Call {
    Call::create(host, input, checked, host.pipeline().hooks(), resolved)
}

/// A resolution made ahead of a call's creation (by its classification).
pub(crate) struct Resolved {
    /// What the name resolved to.
    resolution: Resolution,
    /// The registry generation it was made in: it stands while the generation holds.
    generation: u64,
    /// Whether the arguments were validated against the definition it resolved to (a
    /// concurrency-safe classification implies it): the body need not validate them again.
    args_valid: bool,
}

/// Phase 2 (stages 2–9).
pub(crate) fn prepare<'a, H: Host>(
    host: &'a H,
    call: &'a mut Call,
) -> impl Future<Output = Prepared> + Send + 'a {
    host.pipeline().policy.prepare(host, call)
}

/// Phase 3 (stages 10–14). Returns a post-result, or a final result.
pub(crate) fn dispatch<'a, H: Host>(
    host: &'a H,
    call: &'a Call,
) -> impl Future<Output = Prepared> + Send + 'a {
    dispatch::dispatch(host, call)
}

/// Phase 4 (stages 15–21): post-execute for a post-result, then finishing.
pub(crate) async fn commit<H: Host>(
    host: &H,
    call: &Call,
    prepared: Prepared,
) -> ToolExecutionResult {
    let result = match settle(call, prepared) {
        Settled::Finish(result) => result,
        Settled::Post(result) => post::run(host, call, result).await,
    };
    finish::run(host, call, result)
}

/// Phase 4 without a future when there is no post-execute stage to run.
pub(crate) enum CommitNow {
    /// The finished result.
    Finished(ToolExecutionResult),
    /// A post-result: run [`commit`] on it (as [`Prepared::PostResult`]).
    Post(ToolExecutionResult),
}

/// Phase 4 right away when no post-execute policy applies (see [`CommitNow`]).
#[inline]
pub(crate) fn commit_now<H: Host>(host: &H, call: &Call, prepared: Prepared) -> CommitNow {
    match settle(call, prepared) {
        Settled::Finish(result) => CommitNow::Finished(finish::run(host, call, result)),
        Settled::Post(result) => CommitNow::Post(result),
    }
}

/// Where the result of phases 1–3 goes in phase 4.
enum Settled {
    /// Straight to finishing.
    Finish(ToolExecutionResult),
    /// Through the post-execute policies first.
    Post(ToolExecutionResult),
}

#[inline(always)]
fn settle(call: &Call, prepared: Prepared) -> Settled {
    match prepared {
        Prepared::Dispatch => Settled::Finish(unreachable_dispatch()),
        Prepared::FinalResult(result) => Settled::Finish(result),
        Prepared::PostResult(result) if call.hooks.get::<hooks::PostExecute>().is_empty() => {
            Settled::Finish(result)
        }
        Prepared::PostResult(result) => Settled::Post(result),
    }
}

/// How a call may be scheduled (`docs/CONTRACTS.md`, "The registry", scheduling): parallel only
/// when the tool it resolves to classifies these raw arguments as concurrency-safe; otherwise
/// exclusive.
pub(crate) fn classify<H: Host>(host: &H, input: &ToolExecutionInput) -> ToolExecutionMode {
    let nested = input.parent.is_some();
    classify_resolved(host, &input.name, input.agent, nested, &input.arguments).0
}

/// [`classify`] of a call named `name` by `agent` (`nested`: from inside another call), and
/// the resolution it made (for [`begin_resolved`]).
pub(crate) fn classify_resolved<H: Host>(
    host: &H,
    name: &str,
    agent: Option<ScopeId>,
    nested: bool,
    arguments: &serde_json::Value,
) -> (ToolExecutionMode, Resolved) {
    let generation = host.generation();
    let resolution = host.resolve(name, agent, nested);
    let mode = match &resolution {
        Resolution::Runs(def) => concurrency_mode(def, arguments),
        _ => ToolExecutionMode::Exclusive,
    };
    let resolved = Resolved {
        resolution,
        generation,
        args_valid: mode == ToolExecutionMode::Parallel,
    };
    (mode, resolved)
}

/// Whether `def` classifies `args` as concurrency-safe (a panicking classifier says no).
fn concurrency_mode(def: &ToolDefinition, args: &serde_json::Value) -> ToolExecutionMode {
    let safe = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        def.is_concurrency_safe(args)
    }))
    .unwrap_or(false);
    if safe {
        ToolExecutionMode::Parallel
    } else {
        ToolExecutionMode::Exclusive
    }
}

// --- Many calls --------------------------------------------------------------------------------

/// Runs the calls of one model turn (see [`batch`]).
pub(crate) async fn execute_batch<H: Host>(
    host: &H,
    inputs: Vec<ToolExecutionInput>,
    max_parallel: NonZeroUsize,
) -> Vec<ToolExecutionResult> {
    if inputs.is_empty() {
        return Vec::new();
    }
    let span = tracing::info_span!(
        "tool.batch",
        calls = inputs.len(),
        max_parallel = max_parallel.get()
    );
    Scheduler::batch(host.clone(), inputs, max_parallel)
        .instrument(span)
        .await
}

/// The `tool.execute` span of one call (`index`: its position in a batch or a run's lane),
/// under the current span or, when given, under `parent`.
///
/// It follows the OpenTelemetry GenAI semantic conventions for a tool execution
/// (`docs/CONTRACTS.md`, "Spans"): exported through `tracing-opentelemetry` it is named
/// `execute_tool <tool>` (`otel.name`), internal, with `gen_ai.operation.name`,
/// `gen_ai.tool.name`, `gen_ai.tool.call.id` and `gen_ai.tool.type`; [`record_outcome`] adds
/// `error.type` and the error status on a failure.
pub(crate) fn call_span(
    input: &CallInput,
    index: Option<usize>,
    parent: Option<&tracing::Span>,
) -> tracing::Span {
    let name = input.name.as_str();
    // One field list for both parents (a macro: `info_span!` takes its fields as tokens).
    macro_rules! span {
        ($($parent:tt)*) => {
            tracing::info_span!(
                $($parent)*
                "tool.execute",
                otel.name = format_args!("execute_tool {name}"),
                otel.kind = "internal",
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = name,
                gen_ai.tool.call.id = input.call_id.as_str(),
                gen_ai.tool.r#type = "function",
                nested = input.parent.is_some(),
                batch_index = tracing::field::Empty,
                outcome = tracing::field::Empty,
                duration_us = tracing::field::Empty,
                error.r#type = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
            )
        };
    }
    let span = match parent {
        Some(parent) => span!(parent: parent,),
        None => span!(),
    };
    if let Some(index) = index {
        span.record("batch_index", index);
    }
    span
}

/// Records a call's outcome and duration on its span; a failure also gets `error.type` (its
/// stable error code, `_OTHER` when it has none) and the OpenTelemetry error status.
pub(crate) fn record_outcome(span: &tracing::Span, result: &ToolExecutionResult, started: Instant) {
    span.record("outcome", if result.is_error() { "error" } else { "ok" });
    if let Some(error) = result.error() {
        let code = error.info().map_or("_OTHER", |info| &info.code);
        span.record("error.type", code);
        span.record("otel.status_code", "ERROR");
    }
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
}

/// Dispatch always resolves to a post- or final result.
fn unreachable_dispatch() -> ToolExecutionResult {
    ToolExecutionResult::failure(dsh_tools::ToolError::msg(
        "internal error: dispatch did not produce a result",
    ))
}
