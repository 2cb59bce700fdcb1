//! Registry errors (developer-facing, returned by mutators) and the harness errors the pipeline
//! turns into results.

use dsh_tools::{ErrorCode, HarnessError};

/// Why a registry mutation was refused. The messages are those of `docs/CONTRACTS.md`,
/// "The registry".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is held by a presentation (Code Mode's transport) in every mode: it cannot be
    /// registered or shadowed.
    #[error(
        "tool name \"{name}\" is reserved for the {holder} and cannot be registered or shadowed"
    )]
    ReservedName {
        /// The name.
        name: &'static str,
        /// What holds it.
        holder: &'static str,
    },
    /// A global tool of that name exists.
    #[error(
        "tool \"{0}\" is already registered (for a per-agent variant, register through that agent's `agent.ctx` instead)"
    )]
    DuplicateGlobal(String),
    /// A tool of that name exists in this scope.
    #[error("tool \"{0}\" is already registered in this scope")]
    DuplicateScoped(String),
    /// `restrict` with neither `allow` nor `deny`.
    #[error(
        "tools.restrict({{}}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)"
    )]
    EmptyRestriction,
    /// `restrict` naming a reserved name.
    #[error(
        "tools.restrict() cannot name reserved {holder} \"{name}\"; restrict end-capability tools instead"
    )]
    RestrictReserved {
        /// The name.
        name: &'static str,
        /// What holds it.
        holder: &'static str,
    },
    /// `restrict` naming tools the scope does not inherit.
    #[error("tools.restrict() names unknown global {names}; known global tools: {known}")]
    UnknownRestrictedNames {
        /// `tool "x"` or `tools "x", "y"`.
        names: String,
        /// The sorted inherited names, or `(none)`.
        known: String,
    },
    /// A second presentation mode for one scope.
    #[error(
        "tools.presentAs(\"{new}\") conflicts with \"{old}\" already declared for this scope; one composition selects one presentation"
    )]
    PresentationConflict {
        /// The mode asked for now.
        new: &'static str,
        /// The mode already declared.
        old: &'static str,
    },
    /// The scope (or the registry) was disposed.
    #[error("the scope was disposed; register through a live scope")]
    ScopeDisposed,
    /// A `#[tool]` or tool-set definition failed its checks, or two collected tools share a name.
    #[error(transparent)]
    Collect(#[from] dsh_tools::CollectError),
    /// A tool-set definition failed its checks.
    #[error(transparent)]
    Definition(#[from] dsh_tools::DefinitionError),
    /// A change listener panicked: the mutation was rolled back.
    #[error("a tools/change listener failed: {0}")]
    ChangeListener(String),
}

/// The named tool is unknown, invisible, or hidden from direct calls (`UNKNOWN_TOOL`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolNotFoundError {
    message: String,
}

impl ToolNotFoundError {
    /// `unknown tool "<name>"`.
    pub fn unknown(name: &str) -> Self {
        Self {
            message: format!("unknown tool \"{name}\""),
        }
    }

    /// A tool that exists but may not be called this way, and what to do instead (e.g. the Code
    /// Mode collapse of a model-direct call).
    ///
    /// ```
    /// use dsh_tools_runtime::ToolNotFoundError;
    /// let error = ToolNotFoundError::hidden("only `run_code` is callable directly".into());
    /// assert_eq!(error.to_string(), "only `run_code` is callable directly");
    /// ```
    pub fn hidden(message: String) -> Self {
        Self { message }
    }
}

impl HarnessError for ToolNotFoundError {
    fn name(&self) -> &'static str {
        "ToolNotFoundError"
    }
    fn code(&self) -> ErrorCode {
        ErrorCode::UnknownTool
    }
}

/// The message of a panic payload (`&str` or `String`; anything else is unprintable): how
/// the pipeline, and an extension running code of its own, word a panic.
///
/// ```
/// use dsh_tools_runtime::extension::panic_message;
/// let payload = std::panic::catch_unwind(|| panic!("boom")).unwrap_err();
/// assert_eq!(panic_message(&*payload), "boom");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "<unprintable thrown value>".to_owned()
    }
}
