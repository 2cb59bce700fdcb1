//! The QuickJS backend of the code-runtime seam (`docs/CONTRACTS.md`, "The QuickJS
//! sandbox"): [`QuickJsRuntime`].
//!
//! Each run gets a **fresh** QuickJS runtime and context — never shared with another run — on a
//! sandbox thread whose stack size the configuration chooses
//! ([`QuickJsConfig::thread_stack_bytes`]). Threads are pooled per runtime, and an idle thread
//! builds the fresh sandbox for its next run ahead of time ([`QuickJsConfig::warm_sandboxes`]),
//! which takes QuickJS's context construction (about 100 µs) off the run's critical path. The
//! program is checked against the source limits, type-stripped
//! ([`strip_program`](crate::strip::strip_program)) and evaluated as the body of an async
//! function; the thread then drives its promise: run the pending jobs, poll the binding calls
//! in flight, and when nothing can make progress, park until a call's waker or a stop wakes it.
//!
//! # Limits
//!
//! Every limit of [`QuickJsConfig`] has a safe default and its own outcome, with the budget in
//! the message (see the table on [`QuickJsConfig`]). After any of them fires, the host process
//! and later runs are unaffected: the sandbox is dropped with its run. The wall clock and
//! cancellation are also enforced from outside the engine: a thread stuck in a native
//! operation the interrupt handler does not reach is abandoned after a short grace period
//! (200 ms) and rejoins the pool when it ends.
//!
//! # Binding calls
//!
//! `tools.x(args)` returns a promise. The arguments cross as lossless JSON; a value that is not
//! lossless rejects the call with
//! ``tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)``
//! (a throwing getter: `tool arguments must be lossless JSON: <message>`) and nothing is
//! dispatched. Otherwise the binding's future runs — concurrently with the other calls, at most
//! [`QuickJsConfig::max_calls_in_flight`] at once, the rest waiting in submission order — and
//! its result resolves the promise (a value that is not lossless rejects with
//! `binding resolution must be lossless JSON`) or rejects it with an instance of the
//! namespace's error class (`name` = the class name, own property `memberNameProperty` = the
//! binding name, `message` = the failure), or a plain `Error`. A panicking binding (before or
//! inside its future) is caught and rejects the call with
//! `binding "<global>.<name>" panicked: <message>`.
//!
//! **Where binding futures run.** They are polled on the sandbox thread, inside the context of
//! the Tokio runtime that called [`CodeRuntime::run`] (so `tokio::spawn`, timers and Tokio
//! channels work), and woken by unparking that thread: an awaited call costs no cross-thread
//! hand-off (about 3 µs; through the caller's executor it was about 13 µs). They must not
//! block the thread for long (that stalls the program, not the caller), and
//! `tokio::task::block_in_place` is unavailable to them. The request's [`HostWork`] (for
//! `run_code`, the sub-call lane: every tool call's pipeline and its commit) is polled here too,
//! just before the binding futures ([`CodeRuntime::polls_host_work`] is `true`), so tool bodies
//! called from a program run on the sandbox thread under the same rules; the time spent
//! polling it counts against neither the program's busy time nor its compute budget.
//!
//! [`HostWork`]: crate::HostWork
//!
//! **Call limit.** A run accepts [`QuickJsConfig::max_tool_calls`] calls; every later call
//! rejects with one shared `Error` whose message is `tool call limit reached (<n> calls per
//! run)`. The program may catch it and carry on; if that error is what ends the program
//! (uncaught), the outcome kind is `call-limit` with that message.
//!
//! **Settlement.** The run returns as soon as the program settles or stops. Binding futures
//! still in flight then are dropped, not polled further: a binding whose work must outlive the
//! run (`docs/CONTRACTS.md`, "Sub-calls", rule 6) spawns that work and returns a handle.
//!
//! # Recorded runs
//!
//! A request with a [`RunRecord`](crate::RunRecord) (what a suspendable run uses) makes
//! the run replayable: `Date.now()`, `new Date()` and `Date()` read the record's clock (recorded
//! reads first, then the system clock, recorded), `Math.random()` is a generator seeded from
//! the record, and each non-empty delivery of binding results is a numbered round whose calls
//! are recorded — a replay delivers the same calls together in the same rounds, so promise
//! reactions interleave as they did. Without a record, `Date` and `Math.random` are QuickJS's
//! own and results are delivered as soon as they are ready.
//!
//! # Global surface
//!
//! An allow-list, [`GLOBAL_ALLOW_LIST`], plus `console` and the binding globals and error
//! classes. No `eval`, no `Function` (and the constructors reachable from function prototypes
//! throw `EvalError`), no module loader, no timers, no `std`/`os`, no host objects.

mod bindings;
mod build;
mod config;
mod console;
mod convert;
mod cpu;
mod drive;
mod errors;
mod globals;
mod host;
mod inspect;
mod schedule;
mod sites;
mod sources;
mod worker;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use dsh_tools::definition::BoxFuture;

use super::runtime::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeError};

pub use crate::sandbox::names::{
    GLOBAL_ALLOW_LIST, PORTABLE_RESERVED_WORDS, RESERVED_BINDING_GLOBALS, RESERVED_ERROR_MEMBERS,
};
pub use config::{
    DEFAULT_CPU_BUDGET, DEFAULT_MAX_CALLS_IN_FLIGHT, DEFAULT_MAX_OUTPUT_BYTES,
    DEFAULT_MAX_STACK_BYTES, DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_VALUE_DEPTH,
    DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_THREAD_STACK_BYTES, DEFAULT_WALL_CLOCK,
    DEFAULT_WARM_SANDBOXES, QuickJsConfig, QuickJsConfigError, THREAD_STACK_HEADROOM_BYTES,
};

/// The message of the `abort` outcome when the request's cancellation token fires.
pub const CANCELLED_MESSAGE: &str = crate::texts::CANCELLED;

/// Sandbox threads alive in this process right now: running a program, idle with a fresh
/// sandbox ready, or still finishing a run that was abandoned after a stop.
pub fn live_sandbox_threads() -> usize {
    worker::LIVE_THREADS.load(Ordering::SeqCst)
}

/// The QuickJS code runtime: language `typescript`, isolation `quickjs` (see the module docs).
///
/// ```
/// use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
/// use dsh_tools_runtime::code::{CodeRunRequest, CodeRuntime};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let runtime = QuickJsRuntime::new(QuickJsConfig::default()).unwrap();
/// let result = runtime
///     .run(CodeRunRequest::new(
///         "const n: number = 20;\nconsole.log('n =', n);\nreturn n + 1;",
///         Vec::new(),
///     ))
///     .await
///     .unwrap();
/// assert_eq!(result.value, Some(serde_json::json!(21)));
/// assert_eq!(result.logs, ["n = 20"]);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct QuickJsRuntime {
    config: Arc<QuickJsConfig>,
    pool: worker::Pool,
}

impl QuickJsRuntime {
    /// A runtime with these limits (validated).
    pub fn new(config: QuickJsConfig) -> Result<Self, QuickJsConfigError> {
        config.validate()?;
        let config = Arc::new(config);
        Ok(Self {
            pool: worker::Pool::new(config.clone()),
            config,
        })
    }

    /// The limits.
    pub fn config(&self) -> &QuickJsConfig {
        &self.config
    }
}

impl Default for QuickJsRuntime {
    fn default() -> Self {
        Self::new(QuickJsConfig::default()).expect("the default config is valid")
    }
}

impl CodeRuntime for QuickJsRuntime {
    fn language(&self) -> &str {
        "typescript"
    }

    fn isolation(&self) -> &str {
        "quickjs"
    }

    /// The sandbox thread polls the host's work whenever the program waits for its bindings.
    fn polls_host_work(&self) -> bool {
        true
    }

    /// `Date` and `Math.random` read the request's record, and binding results are delivered
    /// in its recorded rounds (see [`RunRecord`](crate::RunRecord)).
    fn replays(&self) -> bool {
        true
    }

    fn run(
        &self,
        request: CodeRunRequest,
    ) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>> {
        let valid = crate::sandbox::names::validate_bindings("quickjs", &request.bindings);
        let (pool, config) = (self.pool.clone(), self.config.clone());
        Box::pin(async move {
            valid?;
            Ok(host::run(pool, config, request).await)
        })
    }
}
