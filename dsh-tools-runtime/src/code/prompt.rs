//! What the host puts in its system prompt, per scope (REFERENCE §5.10, §8.1–§8.2): the wire tool
//! schemas and the prompt sections `tools:code-only` (order 99) and `tools:sdk` (order 150).

use dsh_tools::ToolSchemaWire;
use dsh_tools::exec::ScopeId;

use super::flavour::flavour;
use super::sdk::sdk_tool_from;
use crate::RUN_CODE_NAME;
use crate::registry::{PresentationMode, ToolRegistry};

/// The collapse rule shown to a scope in `code` mode.
pub const CODE_ONLY_TEXT: &str = "`run_code` is the only tool you can call directly: a call naming any other tool fails. Every tool declared in the SDK below is reached from inside a `run_code` program, as `await tools.name(args)`.";

/// One prompt section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// `tools:code-only` or `tools:sdk`.
    pub name: &'static str,
    /// Its position among the host's sections (99 and 150).
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
        "dsh-tools: no SDK renderer registered for runtime language \"{0}\" (known: \"typescript\", \"python\")"
    )]
    UnknownLanguage(String),
}

impl ToolRegistry {
    /// The wire tools and prompt sections for `scope` (`None` = the global view). The SDK text is
    /// cached per scope and rebuilt only after the registry changed.
    ///
    /// ```
    /// use dsh_tools_runtime::ToolRegistry;
    /// let surface = ToolRegistry::new().prompt(None).unwrap();
    /// assert!(surface.tools.is_empty() && surface.sections.is_empty());
    /// ```
    pub fn prompt(&self, scope: Option<ScopeId>) -> Result<PromptSurface, PromptError> {
        let mode = self.effective_mode(scope);
        let visible = self.visible(scope);
        if mode == PresentationMode::Native {
            return Ok(PromptSurface {
                tools: visible.iter().map(|d| d.schema()).collect(),
                known_names: self.known_names(scope),
                sections: Vec::new(),
            });
        }
        let runtime = self
            .code_runtime()
            .ok_or_else(|| PromptError::MissingRuntime(super::missing_runtime_message(mode)))?;
        let Some(flavour) = flavour(runtime.language()) else {
            return Err(PromptError::UnknownLanguage(runtime.language().to_owned()));
        };
        let sdk = self.cached_sdk(scope, || {
            let sdk_tools: Vec<_> = visible
                .iter()
                .filter(|d| d.name() != RUN_CODE_NAME)
                .map(sdk_tool_from)
                .collect();
            (flavour.render_sdk)(&sdk_tools)
        });
        let mut sections = Vec::new();
        if mode == PresentationMode::Code {
            sections.push(PromptSection {
                name: "tools:code-only",
                order: 99,
                text: CODE_ONLY_TEXT.to_owned(),
            });
        }
        sections.push(PromptSection {
            name: "tools:sdk",
            order: 150,
            text: sdk.to_string(),
        });
        let (tools, known_names) = if mode == PresentationMode::Code {
            let tools = visible
                .iter()
                .filter(|d| d.name() == RUN_CODE_NAME)
                .map(|d| d.schema())
                .collect();
            (tools, vec![RUN_CODE_NAME.to_owned()])
        } else {
            let mut known = self.known_names(scope);
            known.push(RUN_CODE_NAME.to_owned());
            (visible.iter().map(|d| d.schema()).collect(), known)
        };
        Ok(PromptSurface {
            tools,
            known_names,
            sections,
        })
    }
}
