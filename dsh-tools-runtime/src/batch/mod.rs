//! Parallel execution of one model turn's calls (beyond the reference, which overlaps calls only
//! inside Code Mode).
//!
//! [`ToolRegistry::execute_batch`] runs a batch through the same stages as
//! [`ToolRegistry::execute`], with one difference: the dispatch of consecutive
//! concurrency-safe calls overlaps.
//!
//! * **Classification.** Each call is classified with [`ToolRegistry::execution_mode`] once, when
//!   it becomes the next call to prepare. Only an explicit parallel answer overlaps; unknown
//!   tools, invalid arguments and exclusive tools are exclusive (fail-closed).
//! * **Policy in call order.** Preparation (pre-execute policies, approval, guards) runs one call
//!   at a time in call order, and so does the commit (post-execute policies, finaliser, result
//!   observers). Only dispatch (execute wrappers and the tool body) overlaps: up to
//!   [`BatchOptions::max_parallel`] parallel calls at once. A prepared call waiting for a free
//!   dispatch slot holds back the preparation of the next one, so policies never run more than
//!   one call ahead of dispatch.
//! * **Exclusive calls are barriers.** An exclusive call waits until every earlier call has been
//!   committed, then runs its whole pipeline alone; later calls start once it is committed.
//! * **Results in call order**, exactly one per call (and one result notification per call).
//!
//! Everything runs inside the task that awaits the batch (no spawning): the calls' futures are
//! polled together, which is what makes their bodies overlap. Dropping the batch future drops
//! every call still running; calls not yet committed then produce no result.

pub(crate) mod scheduler;

use std::num::NonZeroUsize;

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use tracing::Instrument;

use crate::registry::{RegistryConfig, ToolRegistry};
use scheduler::Scheduler;

/// How a batch is scheduled.
///
/// ```
/// use std::num::NonZeroUsize;
/// use dsh_tools_runtime::batch::BatchOptions;
/// let options = BatchOptions::new(NonZeroUsize::new(4).unwrap());
/// assert_eq!(options.max_parallel.get(), 4);
/// assert_eq!(BatchOptions::default().max_parallel.get(), 10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BatchOptions {
    /// How many parallel-safe calls may be dispatched at once.
    pub max_parallel: NonZeroUsize,
}

impl BatchOptions {
    /// Options with this parallelism cap.
    pub const fn new(max_parallel: NonZeroUsize) -> Self {
        Self { max_parallel }
    }
}

impl Default for BatchOptions {
    /// The default registry configuration's cap (10).
    fn default() -> Self {
        RegistryConfig::default().into()
    }
}

impl From<RegistryConfig> for BatchOptions {
    /// The cap of a registry: `max_parallel_sub_calls`.
    fn from(config: RegistryConfig) -> Self {
        Self::new(config.max_parallel_sub_calls)
    }
}

impl ToolRegistry {
    /// Executes the calls of one model turn, overlapping the dispatch of concurrency-safe calls
    /// up to the registry's `max_parallel_sub_calls`, and returns their results in call order
    /// (see the [module docs](crate::batch) for the scheduling rules).
    ///
    /// ```
    /// use dsh_tools::ToolDefinition;
    /// use dsh_tools::exec::ToolExecutionInput;
    /// use dsh_tools_runtime::ToolRegistry;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let registry = ToolRegistry::new();
    /// registry.register(ToolDefinition::builder("read")
    ///     .description("Read a file.")
    ///     .concurrency_safe(true)
    ///     .execute(|args, _| async move { Ok(json!(format!("contents of {}", args["path"]))) })
    ///     .build().unwrap()).unwrap().keep();
    /// let calls = ["a", "b", "c"]
    ///     .map(|path| ToolExecutionInput::new(path, "read", json!({"path": path})))
    ///     .to_vec();
    /// let results = registry.execute_batch(calls).await;
    /// let values: Vec<_> = results.iter().map(|r| r.value().unwrap().clone()).collect();
    /// assert_eq!(values, [json!("contents of \"a\""), json!("contents of \"b\""), json!("contents of \"c\"")]);
    /// # });
    /// ```
    pub async fn execute_batch(&self, inputs: Vec<ToolExecutionInput>) -> Vec<ToolExecutionResult> {
        self.execute_batch_with(inputs, self.config().into()).await
    }

    /// [`ToolRegistry::execute_batch`] with explicit options.
    pub async fn execute_batch_with(
        &self,
        inputs: Vec<ToolExecutionInput>,
        options: BatchOptions,
    ) -> Vec<ToolExecutionResult> {
        if inputs.is_empty() {
            return Vec::new();
        }
        let span = tracing::info_span!(
            "tool.batch",
            calls = inputs.len(),
            max_parallel = options.max_parallel.get()
        );
        Scheduler::new(self.clone(), inputs, options.max_parallel)
            .instrument(span)
            .await
    }
}
