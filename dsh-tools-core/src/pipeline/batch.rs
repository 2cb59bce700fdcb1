//! Parallel execution of one model turn's calls (beyond the reference, which overlaps calls only
//! inside Code Mode).
//!
//! [`ToolRegistry::execute_batch`] runs a batch through the same phases as
//! [`ToolRegistry::execute`], with one difference: the dispatch of consecutive
//! concurrency-safe calls overlaps.
//!
//! [`ToolRegistry::execute_batch`]: crate::ToolRegistry::execute_batch
//! [`ToolRegistry::execute`]: crate::ToolRegistry::execute
//! [`ToolRegistry::execution_mode`]: crate::ToolRegistry::execution_mode
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

use std::num::NonZeroUsize;

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
        Self::new(DEFAULT_MAX_PARALLEL)
    }
}

/// How many parallel-safe calls of one batch (or one Code Mode run) run at once by default.
pub(crate) const DEFAULT_MAX_PARALLEL: NonZeroUsize = NonZeroUsize::new(10).unwrap();
