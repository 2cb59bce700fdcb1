//! A served `tools/call` as a task: whether it becomes one, and its start in the background.

use std::sync::Arc;

use dsh_tools::exec::{CallerInput, InputChannel, ToolExecutionInput};
use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateTaskResult};
use rmcp::service::{RequestContext, RoleServer};

use super::{TaskInput, TaskSupport, Tasks};
use crate::mcp::serve::handler::RegistryHandler;
use crate::mcp::serve::wire::mcp_result;

impl RegistryHandler {
    /// The served tasks, or `-32601` when the server does not serve the extension.
    pub(crate) fn served_tasks(&self) -> Result<&Arc<Tasks>, rmcp::ErrorData> {
        self.tasks
            .as_ref()
            .map(|(_, tasks)| tasks)
            .ok_or_else(rmcp::ErrorData::method_not_found::<rmcp::model::GetTaskMethod>)
    }

    /// The tasks to run `request` in, when it becomes a task: its tool supports tasks and the
    /// client declared the extension (for this request or its session). A tool that requires
    /// a task, called by a client that did not declare it, is `-32021`.
    pub(crate) fn as_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Arc<Tasks>>, rmcp::ErrorData> {
        let Some((options, tasks)) = &self.tasks else {
            return Ok(None);
        };
        let Some(support) = options.support(&request.name) else {
            return Ok(None);
        };
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        match (support, declared) {
            (_, true) => Ok(Some(Arc::clone(tasks))),
            (TaskSupport::Optional, false) => Ok(None),
            (TaskSupport::Required, false) => {
                Err(rmcp::ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ))
            }
        }
    }

    /// Creates the call's task (stored before the handle is answered) and runs the call in the
    /// background: its questions park the task (`input_required`) until `tasks/update`
    /// answers them, `tasks/cancel` stops it, and its result completes the task.
    pub(crate) async fn start_task(
        &self,
        tasks: Arc<Tasks>,
        mut input: ToolExecutionInput,
        context: &RequestContext<RoleServer>,
        structured: bool,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let (task, live) = tasks.create(&input.name).await?;
        let id = task.task_id.clone();
        input.cancel = live.cancel.clone();
        input.progress = None;
        let caller: Arc<dyn CallerInput> = Arc::new(TaskInput {
            tasks: Arc::clone(&tasks),
            id: id.clone(),
            live,
            capabilities: context.client_capabilities().unwrap_or_default(),
        });
        input.caller = Some(InputChannel(Arc::clone(&caller)));
        // An `ask` of the call is a question of the task too, answered by `tasks/update`.
        let approval = self
            .approvals
            .as_ref()
            .and_then(|approvals| approvals.prepare_caller(&input.call_id, caller));
        let registry = self.registry.clone();
        tokio::spawn(async move {
            let result = registry.execute(input).await;
            drop(approval);
            let result = mcp_result(&result, structured);
            let result = match serde_json::to_value(result) {
                Ok(serde_json::Value::Object(result)) => result,
                _ => Default::default(),
            };
            tasks.finish(&id, result).await;
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }
}
