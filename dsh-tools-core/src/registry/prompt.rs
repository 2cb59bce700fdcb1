//! What the host puts in its system prompt, per scope (`docs/CONTRACTS.md`, "The registry", the
//! prompt): the wire tool schemas, the names a tool order may list, and the prompt sections of the
//! scope's presentation.

use dsh_tools::exec::ScopeId;
use dsh_tools::{ToolDefinition, ToolSchemaWire};

use super::deferral::{self, TOOL_SEARCH_NAME};
use super::{PresentationMode, ToolRegistry, view};

/// One prompt section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// Its name, e.g. `tools:sdk`.
    pub name: &'static str,
    /// Its position among the host's sections.
    pub order: u32,
    /// The text (never empty: empty sections are dropped).
    pub text: String,
}

/// A scope's contribution to the system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptSurface {
    /// The wire tool schemas, in order.
    pub tools: Vec<ToolSchemaWire>,
    /// The names a host may list in its tool order.
    pub known_names: Vec<String>,
    /// The prompt sections.
    pub sections: Vec<PromptSection>,
}

/// Why a prompt cannot be assembled for a scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// A non-native mode without a code runtime.
    #[error("{0}")]
    MissingRuntime(String),
    /// The runtime's language has no SDK renderer.
    #[error(
        "dsh-tools: no SDK renderer registered for runtime language \"{language}\" (known: {known})"
    )]
    UnknownLanguage {
        /// The runtime's language.
        language: String,
        /// The languages with a renderer, quoted and comma-separated.
        known: String,
    },
    /// A tool the prompt would show reads host state the registry does not provide.
    #[error(
        "dsh-tools: tool \"{tool}\" reads host state `{state}` (a State<T> parameter), which the registry does not provide: call registry.provide_state(Arc::new(…)) with a `{state}` before building the prompt"
    )]
    MissingState {
        /// The tool.
        tool: String,
        /// The state's type name.
        state: String,
    },
}

impl PromptError {
    /// The error of a prompt for a scope presenting in `mode` (not native) when no extension
    /// presents it: Code Mode is not installed.
    ///
    /// ```
    /// use dsh_tools_runtime::{PresentationMode, PromptError};
    /// let error = PromptError::missing_runtime(PresentationMode::Code);
    /// assert!(error.to_string().starts_with("dsh-tools: mode \"code\" requires a code runtime"));
    /// ```
    pub fn missing_runtime(mode: PresentationMode) -> Self {
        Self::MissingRuntime(format!(
            "dsh-tools: mode \"{}\" requires a code runtime — install Code Mode on the registry (dsh_tools_runtime::code::CodeMode::new(runtime).install(&registry), e.g. with dsh_tools_runtime::code::quickjs::QuickJsRuntime) or use PresentationMode::Native",
            mode.as_str()
        ))
    }
}

/// The names of the tools among `visible` only Code Mode programs may call.
fn code_only_names(visible: &[ToolDefinition]) -> Vec<&str> {
    visible
        .iter()
        .filter(|d| !d.callers().model())
        .map(ToolDefinition::name)
        .collect()
}

impl ToolRegistry {
    /// The wire tools and prompt sections for `scope` (`None` = the global view). A native scope
    /// gets its [shown](ToolRegistry::shown) tools (but the code-only ones) and no section; the other modes get what their presentation (Code
    /// Mode) adds, whose SDK text is cached per scope and rebuilt only when the scope's tools
    /// change.
    ///
    /// ```
    /// use dsh_tools_runtime::ToolRegistry;
    /// let surface = ToolRegistry::new().prompt(None).unwrap();
    /// assert!(surface.tools.is_empty() && surface.sections.is_empty());
    /// ```
    pub fn prompt(&self, scope: Option<ScopeId>) -> Result<PromptSurface, PromptError> {
        let mode = self.effective_mode(scope);
        let (listing, mut known_names) = {
            let state = self.inner.read();
            let view::View {
                visible,
                known_names,
                ..
            } = view::view(&state, scope);
            (deferral::split(&state, scope, visible), known_names)
        };
        // Deferred loading: the tools not found yet are left out, `tool_search` and the found
        // ones follow the loaded tools.
        if listing.defers() {
            known_names.push(TOOL_SEARCH_NAME.to_owned());
        }
        let mut visible = listing.shown(|| self.tool_search());
        self.check_states(&visible)?;
        if mode == PresentationMode::Native {
            // What extensions add to a native scope (Code Mode adds nothing there) is listed
            // after its own tools.
            let extensions = self.inner.read().extensions.clone();
            for extension in &extensions {
                let added = extension.tools(mode);
                known_names.extend(added.iter().map(|d| d.name().to_owned()));
                visible.extend(added);
            }
            // A code-only tool is not the model's to call: neither listed nor orderable.
            let code_only: Vec<&str> = code_only_names(&visible);
            return Ok(PromptSurface {
                tools: visible
                    .iter()
                    .filter(|d| d.callers().model())
                    .map(|d| d.schema())
                    .collect(),
                known_names: known_names
                    .into_iter()
                    .filter(|n| !code_only.contains(&n.as_str()))
                    .collect(),
                sections: Vec::new(),
            });
        }
        let extensions = self.inner.read().extensions.clone();
        extensions
            .iter()
            .find_map(|e| e.prompt(scope, mode, &visible, &known_names))
            .unwrap_or_else(|| Err(PromptError::missing_runtime(mode)))
    }

    /// Refuses a prompt showing a tool whose host state is not provided, naming the first.
    fn check_states(&self, shown: &[ToolDefinition]) -> Result<(), PromptError> {
        let states = self.inner.pipeline.states();
        let missing = shown.iter().find_map(|tool| {
            let need = tool.needed_states().iter().find(|n| !states.provides(n))?;
            Some((tool.name(), need.type_name()))
        });
        match missing {
            Some((tool, state)) => Err(PromptError::MissingState {
                tool: tool.to_owned(),
                state: state.to_owned(),
            }),
            None => Ok(()),
        }
    }
}
