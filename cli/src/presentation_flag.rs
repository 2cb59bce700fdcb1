//! `--mode native|code|both` and `--language typescript|python` of `mcp serve`: how the served
//! tools are presented to the MCP client. `code` lists one `run_code` tool (plus `tool_search`
//! when tools are deferred) whose description carries the SDK of every served and imported
//! tool; `both` lists the tools and `run_code`. `--defer-beyond N` defers all but the first N
//! tools behind `tool_search`. Programs' calls go through the same pipeline
//! (approvals, guards) as direct calls, and to the imported servers; a program that reaches
//! an approval suspends, and a 2026-07-28 client's retry with the answer resumes it.

use clap::{Args, ValueEnum};
use dsh_tools_runtime::PresentationMode;
use std::sync::Arc;

use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::durable::{
    ContinuationKey, Durability, DurableRunCode, MemorySpentStore,
};
use dsh_tools_runtime::extension::SuspendableCalls;

use crate::CliError;
use crate::language::Language;

/// How `mcp serve` presents its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ServeMode {
    /// Every tool as an MCP tool.
    #[default]
    Native,
    /// One `run_code` tool (Code Mode) over every tool.
    Code,
    /// Every tool, and `run_code`.
    Both,
}

/// The presentation flags of `mcp serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct PresentationFlags {
    /// How the tools are presented: `native` (each tool), `code` (one `run_code` tool whose
    /// programs call every tool) or `both`.
    #[arg(long, value_enum, default_value_t = ServeMode::Native)]
    pub mode: ServeMode,
    /// The language of `run_code` programs (with `--mode code` or `both`; default TypeScript).
    #[arg(long, value_enum, value_name = "LANGUAGE")]
    pub language: Option<Language>,
    /// Show the first N tools up front and defer the rest behind `tool_search` (programs find
    /// them with `tools.$search`), for large tool sets.
    #[arg(long, value_name = "N")]
    pub defer_beyond: Option<usize>,
}

impl PresentationFlags {
    /// The registry's presentation mode.
    pub fn mode(&self) -> PresentationMode {
        match self.mode {
            ServeMode::Native => PresentationMode::Native,
            ServeMode::Code => PresentationMode::Code,
            ServeMode::Both => PresentationMode::Both,
        }
    }

    /// Installs Code Mode in the flags' language on `registry` when the mode presents
    /// `run_code`, and returns its durable `run_code` (a program that reaches an approval
    /// suspends; its continuations are sealed with a key of this process); refuses
    /// `--language` and `--defer-beyond` with `--mode native` (they would mean nothing).
    pub(super) fn install(
        &self,
        registry: &dsh_tools_runtime::ToolRegistry,
    ) -> Result<Option<Arc<dyn SuspendableCalls>>, CliError> {
        if self.mode == ServeMode::Native {
            return match (self.language, self.defer_beyond) {
                (Some(_), _) => Err(CliError::new(
                    "--language: programs run only with --mode code or --mode both",
                )),
                (None, Some(_)) => Err(CliError::new(
                    "--defer-beyond: tools are deferred only with --mode code or --mode both",
                )),
                (None, None) => Ok(None),
            };
        }
        registry.defer_beyond(self.defer_beyond);
        let language = self.language.unwrap_or(Language::Typescript);
        CodeMode::new(language.runtime()?)
            .install(registry)
            .map_err(|e| CliError::new(format!("cannot install Code Mode: {e}")))?;
        let durability = Durability::new(
            ContinuationKey::generate(),
            Arc::new(MemorySpentStore::default()),
        );
        Ok(Some(Arc::new(DurableRunCode::new(registry, durability))))
    }
}
