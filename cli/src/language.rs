//! The program language of `run`, `repl` and `sdk`: TypeScript (QuickJS) or Python (Monty).

use std::path::Path;
use std::sync::Arc;

use clap::ValueEnum;
use dsh_tools_runtime::code::CodeRuntime;
use dsh_tools_runtime::code::monty::{Isolation, MontyConfig, MontyRuntime, WorkerConfig};
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::sdk::SdkTool;

use crate::CliError;

/// The hidden first argument that makes the `dsh-tools` binary a Monty worker process (see
/// [`Isolation::Workers`]).
pub const WORKER_ARGUMENT: &str = "__monty-worker";

/// A Code Mode program language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Language {
    /// TypeScript, run in the embedded QuickJS sandbox.
    Typescript,
    /// Python, run on the Monty interpreter in a worker process.
    Python,
}

impl Language {
    /// The language `--language` names, else the one the program file's extension names
    /// (`.py` is Python), else TypeScript.
    pub fn choose(flag: Option<Self>, program: Option<&Path>) -> Self {
        flag.unwrap_or_else(|| match program.and_then(Path::extension) {
            Some(extension) if extension == "py" => Self::Python,
            _ => Self::Typescript,
        })
    }

    /// The runtime programs of this language run in. Python programs run in worker processes
    /// (this binary, re-run with [`WORKER_ARGUMENT`]) with a 64 MiB memory limit.
    pub fn runtime(self) -> Result<Arc<dyn CodeRuntime>, CliError> {
        match self {
            Self::Typescript => QuickJsRuntime::new(QuickJsConfig::default())
                .map(|r| Arc::new(r) as Arc<dyn CodeRuntime>)
                .map_err(|e| CliError::new(format!("cannot configure the sandbox: {e}"))),
            Self::Python => {
                let this = std::env::current_exe()
                    .map_err(|e| CliError::new(format!("cannot find this executable: {e}")))?;
                let config = MontyConfig {
                    isolation: Isolation::Workers(WorkerConfig {
                        workers: 1,
                        ..WorkerConfig::new(this, [WORKER_ARGUMENT])
                    }),
                    ..MontyConfig::default()
                };
                MontyRuntime::new(config)
                    .map(|r| Arc::new(r) as Arc<dyn CodeRuntime>)
                    .map_err(|e| CliError::new(format!("cannot configure the interpreter: {e}")))
            }
        }
    }

    /// The language a continuation names (`typescript`, `python`).
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "typescript" => Some(Self::Typescript),
            "python" => Some(Self::Python),
            _ => None,
        }
    }

    /// The SDK section of `tools` in this language.
    pub fn render_sdk(self, tools: &[SdkTool]) -> String {
        match self {
            Self::Typescript => dsh_tools_runtime::code::sdk::render_tools_sdk(tools),
            Self::Python => dsh_tools_runtime::code::sdk_py::render_tools_sdk_py(tools),
        }
    }
}
