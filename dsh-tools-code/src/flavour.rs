//! The languages of Code Mode: for each code-runtime language, the `run_code` texts and the SDK
//! renderer (docs/CONTRACTS.md, "Code Mode: Python"). A new language is one more [`Flavour`].

use dsh_tools::ToolDefinition;

use super::sdk::{SdkTool, render_tools_sdk, signature};
use super::sdk_py::{render_tools_sdk_py, signature_py_of};
use super::texts::{
    CODE_PARAMETER_DESCRIPTION, RUN_CODE_DESCRIPTION, TOOL_SEARCH_TEXT, TOOL_SEARCH_TEXT_PY,
};
pub use super::texts::{CODE_PARAMETER_DESCRIPTION_PY, RUN_CODE_DESCRIPTION_PY};

/// What Code Mode needs to know about one program language.
#[derive(Debug, Clone, Copy)]
pub struct Flavour {
    /// The code runtime's [`language`](super::CodeRuntime::language).
    pub language: &'static str,
    /// The `run_code` tool description.
    pub run_code_description: &'static str,
    /// The description of `run_code`'s `code` parameter.
    pub code_parameter_description: &'static str,
    /// The `tools:sdk` prompt section for a list of tools.
    pub render_sdk: fn(&[SdkTool]) -> String,
    /// The `tools:search` prompt section (shown when the scope defers tools).
    pub tool_search_text: &'static str,
    /// One tool's declaration on its own, as tool search in programs returns it.
    pub signature: fn(&ToolDefinition) -> String,
}

/// The TypeScript flavour (the QuickJS runtime's).
pub const TYPESCRIPT: Flavour = Flavour {
    language: "typescript",
    run_code_description: RUN_CODE_DESCRIPTION,
    code_parameter_description: CODE_PARAMETER_DESCRIPTION,
    render_sdk: render_tools_sdk,
    tool_search_text: TOOL_SEARCH_TEXT,
    signature,
};

/// The Python flavour (the Monty runtime's).
pub const PYTHON: Flavour = Flavour {
    language: "python",
    run_code_description: RUN_CODE_DESCRIPTION_PY,
    code_parameter_description: CODE_PARAMETER_DESCRIPTION_PY,
    render_sdk: render_tools_sdk_py,
    tool_search_text: TOOL_SEARCH_TEXT_PY,
    signature: signature_py_of,
};

/// Every flavour, in the order error messages list them.
pub const FLAVOURS: &[Flavour] = &[TYPESCRIPT, PYTHON];

/// The flavour of `language`, if there is one.
///
/// ```
/// use dsh_tools_runtime::code::flavour::flavour;
/// assert_eq!(flavour("python").unwrap().code_parameter_description,
///            "The program: the body of an async Python function.");
/// assert!(flavour("toString").is_none());
/// ```
pub fn flavour(language: &str) -> Option<&'static Flavour> {
    FLAVOURS.iter().find(|f| f.language == language)
}

/// The index of `language` in [`FLAVOURS`], TypeScript's when there is none.
pub(crate) fn index_or_typescript(language: Option<&str>) -> usize {
    language
        .and_then(|language| FLAVOURS.iter().position(|f| f.language == language))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_flavour_never_mentions_typescript() {
        for text in [RUN_CODE_DESCRIPTION_PY, CODE_PARAMETER_DESCRIPTION_PY] {
            assert!(!text.contains("TypeScript"), "{text}");
        }
        assert!(RUN_CODE_DESCRIPTION_PY.starts_with("Execute a Python program"));
        assert!(RUN_CODE_DESCRIPTION_PY.contains("`return <value>`"));
        assert!(RUN_CODE_DESCRIPTION_PY.contains("print(...)"));
        assert!(RUN_CODE_DESCRIPTION_PY.contains("BODY of an"));
    }
}
