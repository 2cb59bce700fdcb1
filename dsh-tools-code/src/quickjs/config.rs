//! [`QuickJsConfig`]: every limit of the sandbox, each with a safe default.

use std::time::Duration;

use crate::strip::SourceLimits;

/// Default [`QuickJsConfig::memory_limit_bytes`]: 64 MiB (the OSS-Fuzz QuickJS harness).
pub const DEFAULT_MEMORY_LIMIT_BYTES: usize = 64 * 1024 * 1024;
/// Default [`QuickJsConfig::max_stack_bytes`]: 256 KiB (QuickJS's own default).
pub const DEFAULT_MAX_STACK_BYTES: usize = 256 * 1024;
/// Default [`QuickJsConfig::cpu_budget`]: 5 s of busy time.
pub const DEFAULT_CPU_BUDGET: Duration = Duration::from_secs(5);
/// Default [`QuickJsConfig::wall_clock`]: 30 s.
pub const DEFAULT_WALL_CLOCK: Duration = Duration::from_secs(30);
/// Default [`QuickJsConfig::max_output_bytes`]: 1 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default [`QuickJsConfig::max_tool_calls`]: 256 per run.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 256;
/// Default [`QuickJsConfig::max_calls_in_flight`]: 16.
pub const DEFAULT_MAX_CALLS_IN_FLIGHT: usize = 16;
/// Default [`QuickJsConfig::max_value_depth`]: 1,024 levels.
pub const DEFAULT_MAX_VALUE_DEPTH: usize = 1024;
/// Default [`QuickJsConfig::warm_sandboxes`]: 2.
pub const DEFAULT_WARM_SANDBOXES: usize = 2;
/// Default [`QuickJsConfig::thread_stack_bytes`]: 16 MiB of (lazily committed) address space.
pub const DEFAULT_THREAD_STACK_BYTES: usize = 16 * 1024 * 1024;
/// Host stack the sandbox thread keeps beyond [`QuickJsConfig::max_stack_bytes`] for swc, the
/// Rust frames around QuickJS and the cheap nesting kinds the pre-swc scanner does not count.
pub const THREAD_STACK_HEADROOM_BYTES: usize = 8 * 1024 * 1024;

/// The limits of [`QuickJsRuntime`](super::QuickJsRuntime). Build one with
/// `QuickJsConfig { field: value, ..QuickJsConfig::default() }`; [`QuickJsConfig::validate`]
/// (called by `QuickJsRuntime::new`) rejects unusable values.
///
/// Every limit produces its own outcome, with the budget in the message:
///
/// | limit | outcome kind | message |
/// |---|---|---|
/// | memory | `memory-limit` | `memory limit reached (<bytes> bytes)` |
/// | JS stack | `stack-overflow` | `stack limit reached (<bytes> bytes)` |
/// | CPU | `timeout` | `compute budget exhausted (<ms>ms of CPU time)` |
/// | wall clock | `timeout` | `wall-clock ceiling reached (<ms>ms)` |
/// | source | `source-limit` | `program source is <n> bytes, over the <max>-byte limit` / `program nests deeper than <max> levels at <line>:<column>` |
/// | output | `output-limit` | `outer output exceeded <max> bytes` |
/// | tool calls | `call-limit` (when uncaught) | `tool call limit reached (<n> calls per run)` |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuickJsConfig {
    /// QuickJS heap limit in bytes (default 64 MiB, at least 1 MiB).
    pub memory_limit_bytes: usize,
    /// QuickJS stack limit in bytes (default 256 KiB, 64 KiB to 64 MiB).
    pub max_stack_bytes: usize,
    /// CPU time the program may use (default 5 s): the sandbox thread's CPU clock, so neither
    /// time spent waiting for bindings nor time the thread spends descheduled on a loaded
    /// machine counts (where the platform has no thread CPU clock, busy wall time is the
    /// measure). Enforced by QuickJS's interrupt handler.
    pub cpu_budget: Duration,
    /// Wall-clock ceiling of a run (default 30 s), host awaits included. Also enforced from
    /// outside the engine, so a native operation the interrupt handler does not reach cannot
    /// hold the caller past it (the thread is then abandoned and ends on its own).
    pub wall_clock: Duration,
    /// Program size and nesting, checked before swc parses the program.
    pub source: SourceLimits,
    /// Outer output budget in bytes (default 1 MiB, at least 4): the JSON size of the logs array
    /// plus the JSON of the completion value or failure message (`docs/CONTRACTS.md`, "The QuickJS
    /// sandbox").
    pub max_output_bytes: usize,
    /// Binding calls a run may make (default 256). Later calls reject; see
    /// [`QuickJsRuntime`](super::QuickJsRuntime).
    pub max_tool_calls: usize,
    /// Binding calls running at once (default 16, at least 1); later ones wait in a queue.
    pub max_calls_in_flight: usize,
    /// Deepest JSON value accepted across the boundary in either direction (default 1,024):
    /// the host's `serde_json` values are dropped and serialised recursively.
    pub max_value_depth: usize,
    /// Stack size of the sandbox threads (default 16 MiB, at least `max_stack_bytes` + 8 MiB +
    /// 4 KiB per `source.max_depth` level). Address space only: pages are committed as touched.
    pub thread_stack_bytes: usize,
    /// Idle sandbox threads kept, each with a fresh sandbox already built for its next run
    /// (default 2, at most 64; 0 builds every sandbox when its run starts and ends every thread
    /// after its run). A sandbox never serves two runs: this only moves construction (about
    /// 100 µs) off the run's critical path.
    pub warm_sandboxes: usize,
}

impl Default for QuickJsConfig {
    fn default() -> Self {
        Self {
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
            max_stack_bytes: DEFAULT_MAX_STACK_BYTES,
            cpu_budget: DEFAULT_CPU_BUDGET,
            wall_clock: DEFAULT_WALL_CLOCK,
            source: SourceLimits::default(),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            max_calls_in_flight: DEFAULT_MAX_CALLS_IN_FLIGHT,
            max_value_depth: DEFAULT_MAX_VALUE_DEPTH,
            thread_stack_bytes: DEFAULT_THREAD_STACK_BYTES,
            warm_sandboxes: DEFAULT_WARM_SANDBOXES,
        }
    }
}

/// An unusable [`QuickJsConfig`] value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dsh-tools-runtime(quickjs): config.{key} {problem}")]
pub struct QuickJsConfigError {
    /// The offending field.
    pub key: &'static str,
    /// What is wrong with it.
    pub problem: String,
}

fn check(
    ok: bool,
    key: &'static str,
    problem: impl FnOnce() -> String,
) -> Result<(), QuickJsConfigError> {
    if ok {
        Ok(())
    } else {
        Err(QuickJsConfigError {
            key,
            problem: problem(),
        })
    }
}

impl QuickJsConfig {
    /// Checks every limit.
    ///
    /// ```
    /// use dsh_tools_runtime::code::quickjs::QuickJsConfig;
    /// assert!(QuickJsConfig::default().validate().is_ok());
    /// let config = QuickJsConfig { max_output_bytes: 3, ..QuickJsConfig::default() };
    /// assert_eq!(
    ///     config.validate().unwrap_err().to_string(),
    ///     "dsh-tools-runtime(quickjs): config.max_output_bytes must be at least 4, got 3"
    /// );
    /// ```
    pub fn validate(&self) -> Result<(), QuickJsConfigError> {
        const MIB: usize = 1024 * 1024;
        check(self.memory_limit_bytes >= MIB, "memory_limit_bytes", || {
            format!(
                "must be at least 1 MiB ({MIB}), got {}",
                self.memory_limit_bytes
            )
        })?;
        check(
            (64 * 1024..=64 * MIB).contains(&self.max_stack_bytes),
            "max_stack_bytes",
            || {
                format!(
                    "must be between 64 KiB and 64 MiB, got {}",
                    self.max_stack_bytes
                )
            },
        )?;
        check(
            self.cpu_budget >= Duration::from_millis(1),
            "cpu_budget",
            || format!("must be at least 1ms, got {:?}", self.cpu_budget),
        )?;
        check(
            self.wall_clock >= Duration::from_millis(1),
            "wall_clock",
            || format!("must be at least 1ms, got {:?}", self.wall_clock),
        )?;
        check(
            self.wall_clock <= Duration::from_secs(365 * 24 * 3600),
            "wall_clock",
            || format!("must be at most a year, got {:?}", self.wall_clock),
        )?;
        check(
            self.source.max_source_bytes >= 1,
            "source.max_source_bytes",
            || format!("must be at least 1, got {}", self.source.max_source_bytes),
        )?;
        check(self.source.max_depth >= 1, "source.max_depth", || {
            format!("must be at least 1, got {}", self.source.max_depth)
        })?;
        check(self.source.max_depth <= 4096, "source.max_depth", || {
            format!(
                "must be at most 4096 (swc needs up to 3.4 KiB of stack per level), got {}",
                self.source.max_depth
            )
        })?;
        check(self.max_output_bytes >= 4, "max_output_bytes", || {
            format!("must be at least 4, got {}", self.max_output_bytes)
        })?;
        check(self.max_calls_in_flight >= 1, "max_calls_in_flight", || {
            format!("must be at least 1, got {}", self.max_calls_in_flight)
        })?;
        check(self.max_value_depth >= 1, "max_value_depth", || {
            format!("must be at least 1, got {}", self.max_value_depth)
        })?;
        let needed =
            self.max_stack_bytes + THREAD_STACK_HEADROOM_BYTES + self.source.max_depth * 4096;
        check(
            self.thread_stack_bytes >= needed,
            "thread_stack_bytes",
            || {
                format!(
                    "must be at least max_stack_bytes + 8 MiB + 4 KiB per source.max_depth level ({needed}), got {}",
                    self.thread_stack_bytes
                )
            },
        )?;
        check(self.warm_sandboxes <= 64, "warm_sandboxes", || {
            format!("must be at most 64, got {}", self.warm_sandboxes)
        })?;
        Ok(())
    }
}
