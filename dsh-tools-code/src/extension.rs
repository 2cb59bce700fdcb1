//! Code Mode as a scope extension of the registry (`docs/CONTRACTS.md`, "Presentation modes"):
//! the name it reserves, the `run_code` transport it adds to non-native scopes, the tools it
//! hides from direct calls, and the prompt surface of a code-mode scope.

use std::sync::PoisonError;

use dsh_tools::exec::ScopeId;
use dsh_tools::{Callers, ToolDefinition};

use crate::state::CodeModeState;
use crate::texts::RUN_CODE_NAME;
use crate::{flavour, prompt, transport};
use dsh_tools_core::extension::{ReservedName, ScopeExtension};
use dsh_tools_core::{PresentationMode, PromptError, PromptSurface, ToolNotFoundError};

/// The names Code Mode holds in every mode.
const RESERVED: &[ReservedName] = &[ReservedName {
    name: RUN_CODE_NAME,
    holder: "Code Mode presentation transport",
}];

impl CodeModeState {
    /// The shared `run_code` transport (the same definition for every code-mode scope), in the
    /// flavour of the mounted runtime's language (TypeScript when none is mounted).
    pub(crate) fn transport(&self) -> Option<ToolDefinition> {
        let runtime = self.runtime();
        let index = flavour::index_or_typescript(runtime.as_deref().map(|r| r.language()));
        self.transports[index]
            .get_or_init(|| {
                transport::run_code_definition(self.registry.clone(), &flavour::FLAVOURS[index])
                    .inspect_err(|e| tracing::error!("run_code transport is invalid: {e}"))
                    .ok()
            })
            .clone()
    }
}

impl ScopeExtension for CodeModeState {
    fn reserved(&self) -> &[ReservedName] {
        RESERVED
    }

    fn tool(&self, name: &str, mode: PresentationMode) -> Option<ToolDefinition> {
        (name == RUN_CODE_NAME && mode != PresentationMode::Native)
            .then(|| self.transport())
            .flatten()
    }

    fn tools(&self, mode: PresentationMode) -> Vec<ToolDefinition> {
        self.tool(RUN_CODE_NAME, mode).into_iter().collect()
    }

    fn hides(&self, def: &ToolDefinition, mode: PresentationMode) -> Option<ToolNotFoundError> {
        let name = def.name();
        let message = match (def.callers(), mode) {
            (Callers::Native, _) => return None,
            (Callers::Code, PresentationMode::Native) => format!(
                "unknown tool \"{name}\": it is callable only from Code Mode programs (callers = \"code\"), and this scope presents its tools natively"
            ),
            (Callers::Code, _) => format!(
                "unknown tool \"{name}\": it is code-only — call `{name}` from inside a `run_code` program instead"
            ),
            (Callers::Both, PresentationMode::Code) => format!(
                "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
            ),
            (Callers::Both, _) => return None,
        };
        Some(ToolNotFoundError::hidden(message))
    }

    fn prompt(
        &self,
        scope: Option<ScopeId>,
        mode: PresentationMode,
        stored: &[ToolDefinition],
        known_names: &[String],
    ) -> Option<Result<PromptSurface, PromptError>> {
        Some(prompt::surface(self, scope, mode, stored, known_names))
    }

    fn scope_disposed(&self, scope: ScopeId) {
        self.sdk_cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&Some(scope));
    }
}
