//! The seam through which an extension (Code Mode, or a host's own) adds to what scopes see,
//! without the registry knowing it by name.

use std::any::Any;
use std::sync::Arc;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ScopeId;

use super::deferral::TOOL_SEARCH_NAME;
use super::prompt::{PromptError, PromptSurface};
use super::{PresentationMode, ToolRegistry};
use crate::error::{RegistryError, ToolNotFoundError};

/// A name an extension holds: no stored tool may take it, and no restriction may name it.
///
/// ```
/// use dsh_tools_runtime::extension::ReservedName;
/// const RESERVED: &[ReservedName] = &[ReservedName { name: "ping_all", holder: "pinger" }];
/// assert_eq!(RESERVED[0].name, "ping_all");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReservedName {
    /// The name.
    pub name: &'static str,
    /// What holds it, for the error messages (e.g. "Code Mode presentation transport").
    pub holder: &'static str,
}

/// What an extension adds to a scope beyond its stored tools, per presentation mode: extra
/// tools, tools it may reach only indirectly, and the prompt of a non-native scope. A host
/// installs one with [`ToolRegistry::install_extension`](crate::ToolRegistry::install_extension);
/// a registry holds any number, asked in installation order. Every method but
/// [`reserved`](ScopeExtension::reserved) has a default that adds nothing.
///
/// ```
/// use std::sync::Arc;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::extension::{ReservedName, ScopeExtension};
///
/// /// Holds a name and adds nothing else.
/// struct Holder;
/// impl ScopeExtension for Holder {
///     fn reserved(&self) -> &[ReservedName] {
///         &[ReservedName { name: "held", holder: "holder extension" }]
///     }
/// }
///
/// let registry = ToolRegistry::new();
/// registry.install_extension(Arc::new(Holder)).unwrap();
/// assert!(registry.extension::<Holder>().is_some());
/// ```
pub trait ScopeExtension: Any + Send + Sync {
    /// The names the extension holds, in every mode.
    fn reserved(&self) -> &[ReservedName];

    /// The extra tool named `name` that a scope presenting in `mode` sees, if any.
    fn tool(&self, name: &str, mode: PresentationMode) -> Option<ToolDefinition> {
        let _ = (name, mode);
        None
    }

    /// Every extra tool a scope presenting in `mode` sees (after its stored tools).
    fn tools(&self, mode: PresentationMode) -> Vec<ToolDefinition> {
        let _ = mode;
        Vec::new()
    }

    /// Why the stored tool `def` may not be called directly (by the model, rather than from
    /// inside another call) by a scope presenting in `mode`; `None` when it may, as far as this
    /// extension is concerned. Its [`callers`](ToolDefinition::callers) count: a code-only tool
    /// is never called directly, a native-only one always may be. The registry's own rule
    /// (a code-only tool is refused) applies when no extension refuses.
    fn hides(&self, def: &ToolDefinition, mode: PresentationMode) -> Option<ToolNotFoundError> {
        let _ = (def, mode);
        None
    }

    /// The prompt surface of a scope presenting in `mode` (never `Native`), or `None` when this
    /// extension does not present that scope: `stored` are its visible stored tools,
    /// `known_names` its pre-restriction names. The first extension answering presents it.
    fn prompt(
        &self,
        scope: Option<ScopeId>,
        mode: PresentationMode,
        stored: &[ToolDefinition],
        known_names: &[String],
    ) -> Option<Result<PromptSurface, PromptError>> {
        let _ = (scope, mode, stored, known_names);
        None
    }

    /// `scope` was disposed: free whatever was kept for it.
    fn scope_disposed(&self, scope: ScopeId) {
        let _ = scope;
    }
}

impl ToolRegistry {
    /// Installs `extension`: from now on every scope sees what it adds (see
    /// [`ScopeExtension`]). Refused when one of its [reserved](ScopeExtension::reserved) names
    /// is already held (by an installed extension, tool search, or a stored tool of any scope).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_tools_runtime::{RegistryError, ToolRegistry};
    /// use dsh_tools_runtime::extension::{ReservedName, ScopeExtension};
    ///
    /// struct Holder;
    /// impl ScopeExtension for Holder {
    ///     fn reserved(&self) -> &[ReservedName] {
    ///         &[ReservedName { name: "held", holder: "holder extension" }]
    ///     }
    /// }
    /// let registry = ToolRegistry::new();
    /// registry.install_extension(Arc::new(Holder)).unwrap();
    /// let again = registry.install_extension(Arc::new(Holder)).unwrap_err();
    /// assert!(matches!(again, RegistryError::ReservedName { name: "held", .. }));
    /// ```
    pub fn install_extension(
        &self,
        extension: Arc<dyn ScopeExtension>,
    ) -> Result<(), RegistryError> {
        let mut state = self.inner.write();
        for reserved in extension.reserved() {
            let held = state
                .extensions
                .iter()
                .flat_map(|e| e.reserved())
                .find(|r| r.name == reserved.name)
                .copied()
                .or_else(|| {
                    (reserved.name == TOOL_SEARCH_NAME).then_some(ReservedName {
                        name: TOOL_SEARCH_NAME,
                        holder: "tool search (deferred loading)",
                    })
                });
            let stored = || {
                state.global.tool(reserved.name).is_some()
                    || state
                        .scopes
                        .values()
                        .any(|node| node.layer.tool(reserved.name).is_some())
            };
            match held {
                Some(held) => {
                    return Err(RegistryError::ReservedName {
                        name: held.name,
                        holder: held.holder,
                    });
                }
                None if stored() => {
                    return Err(RegistryError::ReservedName {
                        name: reserved.name,
                        holder: reserved.holder,
                    });
                }
                None => {}
            }
        }
        state.extensions.push(extension);
        Ok(())
    }

    /// The installed extension of type `T`, if any (the first, when several are).
    pub fn extension<T: ScopeExtension>(&self) -> Option<Arc<T>> {
        let state = self.inner.read();
        state.extensions.iter().find_map(|extension| {
            let any: Arc<dyn Any + Send + Sync> = Arc::clone(extension) as _;
            any.downcast::<T>().ok()
        })
    }
}
