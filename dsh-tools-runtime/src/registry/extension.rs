//! The seam through which a presentation (Code Mode) adds to what scopes see, without the
//! registry knowing it by name.

use std::any::Any;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ScopeId;

use super::prompt::{PromptError, PromptSurface};
use super::{PresentationMode, ToolRegistry};
use crate::error::ToolNotFoundError;

/// A presentation compiled into the crate: every new registry runs its `install` (Code Mode
/// submits one with `inventory::submit!`; the registry never names it).
pub(crate) struct Builtin {
    /// Plugs the presentation into a freshly built registry.
    pub(crate) install: fn(&ToolRegistry),
}

inventory::collect!(Builtin);

/// A name an extension holds: no stored tool may take it, and no restriction may name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReservedName {
    /// The name.
    pub(crate) name: &'static str,
    /// What holds it, for the error messages (e.g. "Code Mode presentation transport").
    pub(crate) holder: &'static str,
}

/// What a scope sees beyond its stored tools, per presentation mode: extra tools, tools it may
/// reach only indirectly, and its prompt. Code Mode is the one implementation; the registry holds
/// at most one.
pub(crate) trait ScopeExtension: Send + Sync + 'static {
    /// The extension itself, for its own host methods to find their state.
    #[allow(
        dead_code,
        reason = "a seam for the presentation compiled in (Code Mode); unused in a build without one"
    )]
    fn as_any(&self) -> &dyn Any;

    /// The names the extension holds.
    fn reserved(&self) -> &[ReservedName];

    /// The extra tool named `name` that a scope presenting in `mode` sees, if any.
    fn tool(&self, name: &str, mode: PresentationMode) -> Option<ToolDefinition>;

    /// Every extra tool a scope presenting in `mode` sees (after its stored tools).
    fn tools(&self, mode: PresentationMode) -> Vec<ToolDefinition>;

    /// Why the stored tool `def` may not be called directly (by the model, rather than from
    /// inside another call) by a scope presenting in `mode`; `None` when it may. Its
    /// [`callers`](ToolDefinition::callers) count: a code-only tool is never called directly, a
    /// native-only one always may be.
    fn hides(&self, def: &ToolDefinition, mode: PresentationMode) -> Option<ToolNotFoundError>;

    /// The prompt surface of a scope presenting in `mode` (never `Native`): `stored` are its
    /// visible stored tools, `known_names` its pre-restriction names.
    fn prompt(
        &self,
        scope: Option<ScopeId>,
        mode: PresentationMode,
        stored: &[ToolDefinition],
        known_names: Vec<String>,
    ) -> Result<PromptSurface, PromptError>;

    /// `scope` was disposed: free whatever was kept for it.
    fn scope_disposed(&self, scope: ScopeId);
}
