//! Served calls that suspend at an approval (Code Mode's durable `run_code`) for a 2026-07-28
//! client that can elicit (`docs/CONTRACTS.md`, "Approval over MCP"): the run suspends, the
//! result is an input-required result whose sealed `requestState` carries the run's sealed
//! continuation, and the retry with the answer resumes it. Every tool call of the run runs
//! once; a tampered, replayed or expired state is refused (`rounds`) before anything runs.

use std::sync::Arc;

use dsh_tools::exec::ToolExecutionInput;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RoleServer};

use super::approval::{approves, can_elicit, suspended_question};
use super::handler::RegistryHandler;
use super::rounds::CallRound;
use super::wire::{declares_object_output, mcp_result};
use crate::extension::{Suspendable, SuspendableCalls};

impl RegistryHandler {
    /// The suspendable implementation of the tool `name`, when this call asks its client's
    /// user in its result: approvals go to the client, the client is at 2026-07-28 and can
    /// elicit.
    pub(super) fn suspends(
        &self,
        name: &str,
        round: &CallRound,
        context: &RequestContext<RoleServer>,
    ) -> Option<Arc<dyn SuspendableCalls>> {
        let runs = self.suspendable.as_ref()?;
        (self.approvals.is_some() && round.in_rounds() && can_elicit(context) && runs.handles(name))
            .then(|| Arc::clone(runs))
    }

    /// Runs (or, from the state's continuation, resumes) a suspendable call.
    pub(super) async fn call_suspendable(
        &self,
        runs: Arc<dyn SuspendableCalls>,
        round: &CallRound,
        request: &CallToolRequestParams,
        input: ToolExecutionInput,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        let invalid =
            |e: &dyn std::fmt::Display| rmcp::ErrorData::invalid_params(e.to_string(), None);
        let structured = self
            .registry
            .get(&input.name, Some(self.agent))
            .is_some_and(|def| declares_object_output(&def));
        let outcome = match round.continuation() {
            None => runs.start(input).await,
            Some(continuation) => {
                let approve = approves(round).map_err(|e| invalid(&e))?;
                runs.resume(continuation.to_owned(), approve, self.agent, input.cancel)
                    .await
                    .map_err(|e| invalid(&e))?
            }
        };
        match outcome {
            Suspendable::Completed(result) => {
                Ok(CallToolResponse::Complete(mcp_result(&result, structured)))
            }
            Suspendable::Suspended {
                continuation,
                calls,
            } => {
                let (key, question) = suspended_question(&calls);
                self.rounds
                    .suspended(request, continuation, key, question)
                    .map(CallToolResponse::InputRequired)
                    .ok_or_else(|| {
                        rmcp::ErrorData::internal_error("cannot seal the request state", None)
                    })
            }
        }
    }
}
