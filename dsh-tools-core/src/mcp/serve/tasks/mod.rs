//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`) on the served registry: which
//! tools answer a task handle, where tasks live, for how long (`docs/CONTRACTS.md`, "Tasks over
//! MCP").

mod call;
mod run;
mod store;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use self::run::{TaskInput, Tasks};
pub use self::store::{MemoryTaskStore, TaskEntry, TaskState, TaskStore, TaskStoreError};

/// Whether a served tool answers a task handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// A client that declared the tasks extension gets a task handle; others get the result.
    Optional,
    /// Only a client that declared the tasks extension may call it (others get `-32021`).
    Required,
}

/// The tasks of a served registry: which tools are long-running, the store, the TTL.
///
/// [`McpTasks::tool`] marks the tools (a host serving Code Mode marks its program tool). The
/// store defaults to this process's memory ([`MemoryTaskStore`]).
///
/// ```
/// use dsh_tools_runtime::mcp::{McpTasks, TaskSupport};
/// let tasks = McpTasks::new().tool("build", TaskSupport::Optional);
/// assert_eq!(tasks.support("build"), Some(TaskSupport::Optional));
/// assert_eq!(tasks.support("read_file"), None);
/// ```
#[derive(Debug, Clone)]
pub struct McpTasks {
    tools: BTreeMap<String, TaskSupport>,
    store: Option<Arc<dyn TaskStore>>,
    ttl: Duration,
}

impl Default for McpTasks {
    fn default() -> Self {
        Self::new()
    }
}

impl McpTasks {
    /// No tool marked yet, in memory, kept an hour.
    pub fn new() -> Self {
        Self {
            tools: BTreeMap::new(),
            store: None,
            ttl: Duration::from_secs(3600),
        }
    }

    /// Marks the served tool `name` long-running.
    pub fn tool(mut self, name: impl Into<String>, support: TaskSupport) -> Self {
        self.tools.insert(name.into(), support);
        self
    }

    /// Keeps tasks in `store` (so they outlive the process with a durable one).
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// How long a task stays readable after it is created (default one hour).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How tool `name` supports tasks, if it does.
    pub fn support(&self, name: &str) -> Option<TaskSupport> {
        self.tools.get(name).copied()
    }

    /// The running tasks of one served view.
    pub(crate) fn start(&self) -> Arc<Tasks> {
        let store = self
            .store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryTaskStore::default()));
        Tasks::new(store, self.ttl)
    }
}
