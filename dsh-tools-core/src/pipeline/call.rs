//! Stage 1 (`docs/CONTRACTS.md`, "Stages"): a call in flight — its execution (arguments snapshotted
//! once, a fresh token), the tool it resolved to, and what every later stage needs.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use dsh_tools::definition::FinalizeFn;
use dsh_tools::exec::{ExecutionToken, ToolExecution, ToolExecutionResult};
use dsh_tools::json::is_lossless;
use dsh_tools::{ToolDefinition, ToolError};

use super::hooks::HookTables;
use super::input::{CallInput, CallerCancel, SharedStr};
use super::{Host, Resolution, Resolved};
use crate::error::ToolNotFoundError;

/// A call in flight: what every stage after the first needs.
pub(crate) struct Call {
    pub(crate) exec: Arc<ToolExecution>,
    pub(crate) caller_cancel: CallerCancel,
    pub(crate) finalizer: Option<FinalizeFn>,
    /// The hook store as it was when the call started.
    pub(crate) hooks: Arc<HookTables>,
    /// Whether dispatch invoked the body (set by dispatch; read by the late cancellation of
    /// stage 16, which is `ABORTED` only when the body ran).
    pub(crate) body_invoked: AtomicBool,
    /// The definition the call resolved to at creation, and the store generation read before
    /// resolving: dispatch reuses it while the generation holds.
    pub(crate) resolved: Option<(ToolDefinition, u64)>,
    /// Why this call may not run the tool it names (stage 2), found when it was created.
    pub(crate) hidden: Option<ToolNotFoundError>,
    /// Whether its arguments were already validated against the `resolved` definition (by a
    /// batch's classification): the body is then invoked without validating them again.
    pub(crate) args_valid: bool,
}

impl Call {
    /// Stage 1: snapshot the arguments once, mint the token, resolve the tool, capture its
    /// finaliser. A non-lossless argument value is the call's final failure; `checked` says the
    /// submitter already made sure the arguments are lossless JSON (a Code Mode binding refuses
    /// anything else before it submits a sub-call).
    pub(crate) fn create<H: Host>(
        host: &H,
        input: CallInput,
        checked: bool,
        hooks: Arc<HookTables>,
        resolved: Option<Resolved>,
    ) -> Self {
        let CallInput {
            call_id,
            root_call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
            progress,
            caller,
        } = input;
        let lossless = checked || is_lossless(&arguments);
        let generation = host.generation();
        // A resolution made for this input in the same registry generation still holds.
        let (resolution, args_valid) = match resolved {
            Some(ahead) if ahead.generation == generation => (ahead.resolution, ahead.args_valid),
            _ => (host.resolve(name.as_str(), agent, parent.is_some()), false),
        };
        let (def, hidden) = match resolution {
            Resolution::Runs(def) => (Some(def), None),
            Resolution::Hidden { def, refusal } => (Some(def), Some(refusal)),
            Resolution::Unknown => (None, None),
        };
        // The finaliser is captured now. The argument failure of a hidden call that is not
        // cancelled drops it, as hiding does (stage 2): such a call could never execute.
        let finalizer = def
            .as_ref()
            .and_then(|def| def.finalizer())
            .filter(|_| lossless || hidden.is_none() || cancel.is_cancelled());
        // The name a call resolved by is the definition's own: shared, not copied.
        let name = match &def {
            Some(def) if def.name() == name.as_str() => def.name_shared(),
            _ => name.into_shared(),
        };
        let call_id = call_id.into_shared();
        let root_call_id =
            root_call_id.map_or_else(|| Arc::clone(&call_id), SharedStr::into_shared);
        let exec = Arc::new(ToolExecution {
            token: ExecutionToken::mint(),
            call_id,
            root_call_id,
            name,
            arguments: lossless.then(|| Arc::new(arguments)),
            agent,
            parent,
            progress,
            caller,
        });
        let resolved = def
            .filter(|_| hidden.is_none())
            .map(|def| (def, generation));
        Self {
            exec,
            caller_cancel: cancel,
            finalizer,
            hooks,
            body_invoked: AtomicBool::new(false),
            resolved,
            hidden,
            args_valid,
        }
    }

    /// The final result decided at creation: arguments that are not lossless JSON (no policy
    /// stage runs for them).
    pub(crate) fn early_result(&self) -> Option<ToolExecutionResult> {
        self.exec.arguments.is_none().then(|| {
            ToolExecutionResult::failure(ToolError::msg(
                "tool execution arguments must be losslessly JSON-serializable",
            ))
        })
    }

    /// The declared budget of the tool the call resolved to.
    pub(crate) fn budget(&self) -> Option<u64> {
        self.resolved.as_ref().and_then(|(def, _)| def.timeout_ms())
    }
}
