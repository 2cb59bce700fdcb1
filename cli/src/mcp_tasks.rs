//! The tasks `mcp serve` serves (`docs/CONTRACTS.md`, "Tasks over MCP"): `bash` and `run_code`
//! are long-running, and `--store URL` keeps their tasks across a restart of the server.

use std::sync::Arc;

use dsh_tools_runtime::mcp::{McpTasks, TaskSupport};
use dsh_tools_store::McpTaskStore;

use crate::CliError;
use crate::store_flag::StoreFlag;

/// The served tasks: `bash` and `run_code` calls, in the `--store` store (memory without one).
pub(crate) fn served_tasks(store: &StoreFlag) -> Result<McpTasks, CliError> {
    let tasks = McpTasks::new()
        .tool("bash", TaskSupport::Optional)
        .tool("run_code", TaskSupport::Optional);
    Ok(match store.open_store()? {
        Some(store) => tasks.store(Arc::new(McpTaskStore::new(store))),
        None => tasks,
    })
}
