//! What Code Mode puts in a scope's system prompt (`docs/CONTRACTS.md`, "Presentation modes" and
//! "Prompt sections"): the wire tool schemas and the prompt sections `tools:code-only` (order 99),
//! `tools:sdk` (order 150) and, when the scope defers tools, `tools:search` (order 151).

use std::borrow::Cow;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::ScopeId;

use super::flavour::{FLAVOURS, TYPESCRIPT, flavour};
use super::sdk::sdk_tool_from;
use super::state::CodeModeState;
use super::texts::{CODE_ONLY_TEXT, RUN_CODE_NAME};
use dsh_tools_core::extension::ScopeExtension;
use dsh_tools_core::{
    PresentationMode, PromptError, PromptSection, PromptSurface, TOOL_SEARCH_NAME,
};

/// The `tools:code-only` text: [`CODE_ONLY_TEXT`], or, when native-only tools are on the wire
/// beside `run_code`, the same rule naming them.
fn code_only_text(native_only: &[&ToolDefinition]) -> String {
    if native_only.is_empty() {
        return CODE_ONLY_TEXT.to_owned();
    }
    let names: Vec<String> = native_only
        .iter()
        .map(|d| format!("`{}`", d.name()))
        .collect();
    format!(
        "`run_code` and {} are the only tools you can call directly: a call naming any other tool fails, and programs cannot call {}. Every tool declared in the SDK below is reached from inside a `run_code` program, as `await tools.name(args)`.",
        names.join(", "),
        if names.len() == 1 { "it" } else { "them" },
    )
}

/// Code Mode's prompt surface for a scope presenting in `mode` (not native): the wire tools,
/// the names a tool order may list, and the `tools:code-only` / `tools:sdk` sections. The SDK
/// text is cached per scope and rebuilt only when that scope's tools (or the runtime's
/// language) changed; a TypeScript rebuild re-prints only the tools no scope's cached SDK has
/// printed (the registry's [`SdkCache`](super::sdk::SdkCache)).
pub(super) fn surface(
    code: &CodeModeState,
    scope: Option<ScopeId>,
    mode: PresentationMode,
    stored: &[ToolDefinition],
    known_names: &[String],
) -> Result<PromptSurface, PromptError> {
    let runtime = code
        .runtime()
        .ok_or_else(|| PromptError::missing_runtime(mode))?;
    let language = runtime.language();
    let Some(flavour) = flavour(language) else {
        return Err(PromptError::UnknownLanguage {
            language: language.to_owned(),
            known: FLAVOURS
                .iter()
                .map(|f| format!("\"{}\"", f.language))
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    // Callers (`docs/CONTRACTS.md`, "Presentation modes"): a native-only tool is not in the
    // SDK, a code-only one never on the wire. Without native-only tools (the common case) the
    // stored list is the SDK's as it is, with no copy per prompt.
    let native_only: Vec<&ToolDefinition> = stored.iter().filter(|d| !d.callers().code()).collect();
    let in_sdk: Cow<'_, [ToolDefinition]> = if native_only.is_empty() {
        Cow::Borrowed(stored)
    } else {
        stored
            .iter()
            .filter(|d| d.callers().code())
            .cloned()
            .collect()
    };
    let sdk = code.cached_sdk(scope, language, &in_sdk, || {
        if flavour.language == TYPESCRIPT.language {
            let rendered = code.fragments.render(&in_sdk);
            (rendered.shared_text(), Some(rendered))
        } else {
            let sdk_tools: Vec<_> = in_sdk.iter().map(sdk_tool_from).collect();
            ((flavour.render_sdk)(&sdk_tools).into(), None)
        }
    });
    let mut sections = Vec::new();
    if mode == PresentationMode::Code {
        sections.push(PromptSection {
            name: "tools:code-only",
            order: 99,
            text: code_only_text(&native_only),
        });
    }
    sections.push(PromptSection {
        name: "tools:sdk",
        order: 150,
        text: sdk.to_string(),
    });
    // Deferred loading: the scope is shown `tool_search`; programs search too.
    if stored.iter().any(|d| d.name() == TOOL_SEARCH_NAME) {
        sections.push(PromptSection {
            name: "tools:search",
            order: 151,
            text: flavour.tool_search_text.to_owned(),
        });
    }
    let transport = code.tool(RUN_CODE_NAME, mode).map(|d| d.schema());
    let (tools, known_names) = if mode == PresentationMode::Code {
        let mut known: Vec<String> = native_only.iter().map(|d| d.name().to_owned()).collect();
        known.push(RUN_CODE_NAME.to_owned());
        let tools = native_only
            .iter()
            .map(|d| d.schema())
            .chain(transport)
            .collect();
        (tools, known)
    } else {
        // A code-only tool is not the model's to call: not orderable.
        let code_only: Vec<&str> = stored
            .iter()
            .filter(|d| !d.callers().model())
            .map(ToolDefinition::name)
            .collect();
        let mut known: Vec<String> = known_names
            .iter()
            .filter(|n| !code_only.contains(&n.as_str()))
            .cloned()
            .collect();
        known.push(RUN_CODE_NAME.to_owned());
        let tools = stored
            .iter()
            .filter(|d| d.callers().model())
            .map(|d| d.schema())
            .chain(transport)
            .collect();
        (tools, known)
    };
    Ok(PromptSurface {
        tools,
        known_names,
        sections,
    })
}
