//! [`MontyConfig`]: every limit of the Python runtime, each with a safe default.

use std::path::PathBuf;
use std::time::Duration;

/// Default [`MontyConfig::cpu_budget`]: 5 s of interpreter time.
pub const DEFAULT_CPU_BUDGET: Duration = Duration::from_secs(5);
/// Default [`MontyConfig::wall_clock`]: 30 s.
pub const DEFAULT_WALL_CLOCK: Duration = Duration::from_secs(30);
/// Default [`MontyConfig::max_recursion_depth`]: 1,000 frames (CPython's default).
pub const DEFAULT_MAX_RECURSION_DEPTH: usize = 1000;
/// Default [`MontyConfig::max_source_bytes`]: 64 KiB.
pub const DEFAULT_MAX_SOURCE_BYTES: usize = 64 * 1024;
/// Default [`MontyConfig::max_output_bytes`]: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default [`MontyConfig::max_tool_calls`]: 256 per run.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 256;
/// Default [`MontyConfig::max_calls_in_flight`]: 16.
pub const DEFAULT_MAX_CALLS_IN_FLIGHT: usize = 16;
/// Default [`MontyConfig::max_value_depth`]: 1,024 levels.
pub const DEFAULT_MAX_VALUE_DEPTH: usize = 1024;
/// Default [`MontyConfig::max_allocation_bytes`]: 64 MiB.
pub const DEFAULT_MAX_ALLOCATION_BYTES: usize = 64 * 1024 * 1024;
/// Default [`MontyConfig::thread_stack_bytes`]: 64 MiB of (lazily committed) address space.
pub const DEFAULT_THREAD_STACK_BYTES: usize = 64 * 1024 * 1024;
/// Default [`MontyConfig::idle_threads`]: 2.
pub const DEFAULT_IDLE_THREADS: usize = 2;
/// Default [`WorkerConfig::memory_limit_bytes`]: 64 MiB.
pub const DEFAULT_WORKER_MEMORY_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Default [`WorkerConfig::workers`]: 2 started ahead.
pub const DEFAULT_WORKERS: usize = 2;

/// Where programs run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Isolation {
    /// In this process, each run on a dedicated thread with a large stack. Every limit but
    /// memory holds: the interpreter's memory accounting is process-wide, so only single
    /// allocations are capped ([`MontyConfig::max_allocation_bytes`]) and a program that grows
    /// many small objects is stopped by its time budgets alone. For programs you trust.
    #[default]
    InProcess,
    /// In worker processes, with a hard memory limit: see [`WorkerConfig`].
    Workers(WorkerConfig),
}

/// Worker processes: a small pool started ahead, one program at a time each, a worker killed
/// and replaced after any limit it breaches, any stop, and any crash.
///
/// The executable must call
/// [`serve_worker`](super::serve_worker) with
/// [`WorkerAllocator`](super::WorkerAllocator) as its global allocator — the
/// `dsh-monty-worker` binary of this crate does, and so can the host's own binary (the
/// `dsh-tools` CLI re-runs itself with a hidden `__monty-worker` argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerConfig {
    /// The worker executable.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The memory a program may use, in bytes (default 64 MiB, at least 1 MiB): the
    /// interpreter raises `MemoryError` (uncatchable) past it, and the worker process exits
    /// 4 MiB above it whatever it is doing.
    pub memory_limit_bytes: usize,
    /// Workers kept started and idle (default 2, at most 64).
    pub workers: usize,
}

impl WorkerConfig {
    /// Workers running `command` with `args`, the default memory limit and pool size.
    pub fn new(
        command: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            memory_limit_bytes: DEFAULT_WORKER_MEMORY_LIMIT_BYTES,
            workers: DEFAULT_WORKERS,
        }
    }
}

/// The limits of [`MontyRuntime`](super::MontyRuntime). Build one with
/// `MontyConfig { field: value, ..MontyConfig::default() }`; [`MontyConfig::validate`] (called
/// by `MontyRuntime::new`) rejects unusable values.
///
/// Every limit produces its own outcome, with the budget in the message:
///
/// | limit | outcome kind | message |
/// |---|---|---|
/// | interpreter time | `timeout` | `compute budget exhausted (<ms>ms of interpreter time)` |
/// | wall clock | `timeout` | `wall-clock ceiling reached (<ms>ms)` |
/// | memory (workers) | `memory-limit` | `memory limit reached (<bytes> bytes)` |
/// | one allocation (in process) | `memory-limit` | `memory limit reached (an allocation over the in-process cap)` |
/// | recursion | `stack-overflow` | `recursion limit reached (<n> frames)` + traceback |
/// | source | `source-limit` | `program source is <n> bytes, over the <max>-byte limit` |
/// | output | `output-limit` | `outer output exceeded <max> bytes` |
/// | tool calls | `call-limit` (when uncaught) | `tool call limit reached (<n> calls per run)` |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontyConfig {
    /// Interpreter time a program may use (default 5 s): the interpreter's own clock, which runs
    /// only while it executes Python (never while the program waits for tools). It is wall
    /// time, not CPU time: on a loaded machine a descheduled program is charged too. Enforced
    /// by the interpreter, uncatchable.
    pub cpu_budget: Duration,
    /// Wall-clock ceiling of a run (default 30 s), tool calls included; enforced from outside
    /// the interpreter.
    pub wall_clock: Duration,
    /// Deepest Python call stack (default 1,000, at most 100,000).
    pub max_recursion_depth: usize,
    /// Largest accepted program, in UTF-8 bytes (default 64 KiB, at most 1 MiB).
    pub max_source_bytes: usize,
    /// Outer output budget in bytes (default 1 MiB, at least 4): the JSON size of the logs
    /// array plus the JSON of the completion value or failure message.
    pub max_output_bytes: usize,
    /// Tool calls a run may make (default 256). Later calls raise.
    pub max_tool_calls: usize,
    /// Tool calls running at once (default 16, at least 1); later ones wait in a queue.
    pub max_calls_in_flight: usize,
    /// Deepest JSON value accepted across the boundary in either direction (default 1,024).
    pub max_value_depth: usize,
    /// In process: the largest single allocation a program may ask for (default 64 MiB); a
    /// bigger string, list or integer raises `MemoryError` before it is allocated.
    pub max_allocation_bytes: usize,
    /// Stack size of the threads programs run on (default 64 MiB, at least 16 MiB + 4 KiB per
    /// recursion level + 128 bytes per source byte). Address space only.
    pub thread_stack_bytes: usize,
    /// In process: idle threads kept for the next runs (default 2, at most 64; 0 ends every
    /// thread after its run).
    pub idle_threads: usize,
    /// Where programs run (default: in this process).
    pub isolation: Isolation,
}

impl Default for MontyConfig {
    fn default() -> Self {
        Self {
            cpu_budget: DEFAULT_CPU_BUDGET,
            wall_clock: DEFAULT_WALL_CLOCK,
            max_recursion_depth: DEFAULT_MAX_RECURSION_DEPTH,
            max_source_bytes: DEFAULT_MAX_SOURCE_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            max_calls_in_flight: DEFAULT_MAX_CALLS_IN_FLIGHT,
            max_value_depth: DEFAULT_MAX_VALUE_DEPTH,
            max_allocation_bytes: DEFAULT_MAX_ALLOCATION_BYTES,
            thread_stack_bytes: DEFAULT_THREAD_STACK_BYTES,
            idle_threads: DEFAULT_IDLE_THREADS,
            isolation: Isolation::InProcess,
        }
    }
}

/// An unusable [`MontyConfig`] value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dsh-tools-runtime(monty): config.{key} {problem}")]
pub struct MontyConfigError {
    /// The offending field.
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

fn check(
    ok: bool,
    key: &'static str,
    problem: impl FnOnce() -> String,
) -> Result<(), MontyConfigError> {
    if ok {
        Ok(())
    } else {
        Err(MontyConfigError {
            key,
            problem: problem(),
        })
    }
}

const MIB: usize = 1024 * 1024;

impl MontyConfig {
    /// The smallest [`thread_stack_bytes`](Self::thread_stack_bytes) these limits need.
    pub fn needed_stack_bytes(&self) -> usize {
        16 * MIB + self.max_recursion_depth * 4096 + self.max_source_bytes * 128
    }

    /// Checks every limit.
    ///
    /// ```
    /// use dsh_tools_runtime::code::monty::MontyConfig;
    /// assert!(MontyConfig::default().validate().is_ok());
    /// let config = MontyConfig { max_calls_in_flight: 0, ..MontyConfig::default() };
    /// assert_eq!(
    ///     config.validate().unwrap_err().to_string(),
    ///     "dsh-tools-runtime(monty): config.max_calls_in_flight must be at least 1, got 0"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), MontyConfigError> {
        check(
            self.cpu_budget >= Duration::from_millis(1),
            "cpu_budget",
            || format!("must be at least 1ms, got {:?}", self.cpu_budget),
        )?;
        check(
            (Duration::from_millis(1)..=Duration::from_secs(365 * 24 * 3600))
                .contains(&self.wall_clock),
            "wall_clock",
            || format!("must be between 1ms and a year, got {:?}", self.wall_clock),
        )?;
        check(
            (1..=100_000).contains(&self.max_recursion_depth),
            "max_recursion_depth",
            || {
                format!(
                    "must be between 1 and 100000, got {}",
                    self.max_recursion_depth
                )
            },
        )?;
        check(
            (1..=MIB).contains(&self.max_source_bytes),
            "max_source_bytes",
            || {
                format!(
                    "must be between 1 and 1 MiB ({MIB}), got {}",
                    self.max_source_bytes
                )
            },
        )?;
        check(self.max_output_bytes >= 4, "max_output_bytes", || {
            format!("must be at least 4, got {}", self.max_output_bytes)
        })?;
        check(self.max_calls_in_flight >= 1, "max_calls_in_flight", || {
            format!("must be at least 1, got {}", self.max_calls_in_flight)
        })?;
        check(self.max_value_depth >= 1, "max_value_depth", || {
            format!("must be at least 1, got {}", self.max_value_depth)
        })?;
        check(
            self.max_allocation_bytes >= MIB,
            "max_allocation_bytes",
            || {
                format!(
                    "must be at least 1 MiB ({MIB}), got {}",
                    self.max_allocation_bytes
                )
            },
        )?;
        let needed = self.needed_stack_bytes();
        check(
            self.thread_stack_bytes >= needed,
            "thread_stack_bytes",
            || {
                format!(
                    "must be at least 16 MiB + 4 KiB per recursion level + 128 bytes per source byte ({needed}), got {}",
                    self.thread_stack_bytes
                )
            },
        )?;
        check(self.idle_threads <= 64, "idle_threads", || {
            format!("must be at most 64, got {}", self.idle_threads)
        })?;
        if let Isolation::Workers(workers) = &self.isolation {
            check(
                workers.memory_limit_bytes >= MIB,
                "isolation.memory_limit_bytes",
                || {
                    format!(
                        "must be at least 1 MiB ({MIB}), got {}",
                        workers.memory_limit_bytes
                    )
                },
            )?;
            check(workers.workers <= 64, "isolation.workers", || {
                format!("must be at most 64, got {}", workers.workers)
            })?;
        }
        Ok(())
    }
}
