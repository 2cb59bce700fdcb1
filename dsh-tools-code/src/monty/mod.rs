//! The Python backend of the code-runtime seam: [`MontyRuntime`], on Pydantic's
//! [Monty](https://github.com/pydantic/monty) interpreter — a sandboxed Python written in Rust,
//! no CPython (docs/CONTRACTS.md, "Code Mode: Python").
//!
//! A program is the body of an async function: top-level `await` and `return <value>` work,
//! `print` output is captured as logs (one entry per line), and a returned value (not `None`)
//! is the result. Every run gets a fresh interpreter; nothing survives between runs.
//!
//! # Before running
//!
//! The program is checked against the size limit, then statically ([`check_program`]): every
//! syntax error, every construct the interpreter does not support (class inheritance, `match`,
//! `yield`, `del`, …), every import of a module it does not have and every `tools.x` naming no
//! tool is reported at once, with line:column and a hint; nothing runs. (A `run_code` run checks
//! earlier, with the tools' schemas too: `check_run`.) `tools["name"]` is then
//! turned into a call the interpreter can route (only the brackets change, so positions stay
//! the model's), and one line is put in front binding `ToolCallError`.
//!
//! # Tool calls
//!
//! `await tools.name({...})` and `await tools["exotic-name"]({...})` call the binding with one
//! dict of lossless JSON (anything else raises ``tool arguments must be lossless JSON (call the
//! tool with an arguments object, e.g. `{}`)`` or `tool arguments must be lossless JSON: <what>`
//! and dispatches nothing). Each call is a pending future: calls gathered with
//! `asyncio.gather` run concurrently, at most [`MontyConfig::max_calls_in_flight`] at once.
//! A result becomes Python values (`dict`, `list`, `int`, `float`, …); a failure raises
//! `ToolCallError` with `<tool name>: <failure>` as message. The interpreter cannot define
//! exception classes: `ToolCallError` is the builtin `NotADirectoryError` under that name, a
//! class nothing else in the sandbox raises (so `except ToolCallError` catches tool failures
//! only), it carries the message only (`str(e)`; no `toolName` attribute), and an uncaught one
//! is reported as `ToolCallError: <tool name>: <failure>`.
//! [`MontyConfig::max_tool_calls`] calls are accepted; later ones raise
//! `tool call limit reached (<n> calls per run)` (outcome `call-limit` when uncaught).
//!
//! # Limits
//!
//! Every limit of [`MontyConfig`] has a safe default and its own outcome (see the table there).
//! The interpreter enforces its time budget and recursion limit itself. Stops (cancellation,
//! the wall clock, the output budget) end the program at its next suspension, uncatchably, or
//! at its next checkpoint (every few hundred instructions).
//!
//! **Where programs run** ([`Isolation`]). In process (the default), each run is on a pooled
//! thread with a large stack ([`MontyConfig::thread_stack_bytes`]), so neither deep recursion
//! nor deeply nested source can reach the host's stack. The interpreter counts memory
//! process-wide, so in process only single allocations are capped: for programs you do not
//! trust, use [`Isolation::Workers`] — worker processes with a hard memory limit, killed and
//! replaced after any limit, stop or crash; the host process is never at risk.
//!
//! ```
//! use dsh_tools_runtime::code::monty::{MontyConfig, MontyRuntime};
//! use dsh_tools_runtime::code::{CodeRunRequest, CodeRuntime};
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = MontyRuntime::new(MontyConfig::default()).unwrap();
//! let result = runtime
//!     .run(CodeRunRequest::new("n = 20\nprint('n =', n)\nreturn n + 1", Vec::new()))
//!     .await
//!     .unwrap();
//! assert_eq!(result.value, Some(serde_json::json!(21)));
//! assert_eq!(result.logs, ["n = 20"]);
//! # });
//! ```

mod args;
mod binds;
mod check;
mod config;
mod convert;
mod inproc;
mod outcome;
mod pause;
mod program;
mod protocol;
mod serve;
mod session;
mod threads;
mod workers;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use dsh_tools::definition::BoxFuture;

use super::runtime::{CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeError};

pub use check::{AVAILABLE_MODULES, Finding, check_program};
pub use config::{
    DEFAULT_CPU_BUDGET, DEFAULT_IDLE_THREADS, DEFAULT_MAX_ALLOCATION_BYTES,
    DEFAULT_MAX_CALLS_IN_FLIGHT, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_RECURSION_DEPTH,
    DEFAULT_MAX_SOURCE_BYTES, DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_VALUE_DEPTH,
    DEFAULT_THREAD_STACK_BYTES, DEFAULT_WALL_CLOCK, DEFAULT_WORKER_MEMORY_LIMIT_BYTES,
    DEFAULT_WORKERS, Isolation, MontyConfig, MontyConfigError, WorkerConfig,
};
pub use inproc::CANCELLED_MESSAGE;
pub(crate) use program::check_run;
pub use serve::{WorkerAllocator, serve_worker};

/// Threads of in-process Monty runtimes alive in this process right now: running a program,
/// idle, or still finishing a run that was abandoned after a stop.
pub fn live_threads() -> usize {
    threads::LIVE.load(Ordering::SeqCst)
}

/// Where a runtime runs its programs.
#[derive(Debug, Clone)]
enum Backend {
    InProcess(threads::Threads),
    Workers(Arc<workers::WorkerPool>),
}

/// The Monty code runtime: language `python`, isolation `monty` in process or `process` with
/// workers (see the module docs).
#[derive(Debug, Clone)]
pub struct MontyRuntime {
    config: Arc<MontyConfig>,
    backend: Backend,
}

impl MontyRuntime {
    /// A runtime with these limits (validated). With [`Isolation::Workers`] the workers are
    /// started now.
    pub fn new(config: MontyConfig) -> Result<Self, MontyConfigError> {
        config.validate()?;
        let backend = match &config.isolation {
            Isolation::InProcess => Backend::InProcess(threads::Threads::new(
                config.thread_stack_bytes,
                config.idle_threads,
            )),
            Isolation::Workers(workers) => {
                Backend::Workers(workers::WorkerPool::new(workers.clone()))
            }
        };
        Ok(Self {
            config: Arc::new(config),
            backend,
        })
    }

    /// The limits.
    pub fn config(&self) -> &MontyConfig {
        &self.config
    }

    /// Worker processes started and idle right now (0 in process).
    pub fn idle_workers(&self) -> usize {
        match &self.backend {
            Backend::InProcess(_) => 0,
            Backend::Workers(pool) => pool.idle_workers(),
        }
    }
}

impl Default for MontyRuntime {
    fn default() -> Self {
        Self::new(MontyConfig::default()).expect("the default config is valid")
    }
}

impl CodeRuntime for MontyRuntime {
    fn language(&self) -> &str {
        "python"
    }

    fn isolation(&self) -> &str {
        match self.backend {
            Backend::InProcess(_) => "monty",
            Backend::Workers(_) => "process",
        }
    }

    /// In process, the program's thread polls the host's work whenever the program waits for
    /// its tools; with workers, the caller does.
    fn polls_host_work(&self) -> bool {
        matches!(self.backend, Backend::InProcess(_))
    }

    /// A suspended run's program is paused and serialised (a durable run resumes it, here or
    /// in another process); with workers, the paused state crosses the worker protocol.
    fn snapshots(&self) -> bool {
        true
    }

    fn run(
        &self,
        request: CodeRunRequest,
    ) -> BoxFuture<'static, Result<CodeRunResult, CodeRuntimeError>> {
        let valid = crate::sandbox::names::validate_bindings("monty", &request.bindings);
        let config = self.config.clone();
        let backend = self.backend.clone();
        Box::pin(async move {
            valid?;
            Ok(match backend {
                Backend::InProcess(threads) => inproc::run(threads, config, request).await,
                Backend::Workers(pool) => workers::run(pool, config, request).await,
            })
        })
    }
}
