//! `catalog [--check FILE]`: the markdown catalog of the example tools (`docs/tool-catalog.md`),
//! or whether a committed copy is still current.

use std::path::PathBuf;

use clap::Args;
use dsh_tools_runtime::PresentationMode;
use dsh_tools_runtime::catalog::{Catalog, CatalogEntry, PackageInfo, first_drift};
use dsh_tools_runtime::code::{CodeMode, RUN_CODE_NAME};
use serde_json::json;

use crate::call_cmd::host_registry_in;
use crate::{CliError, Input, Language, Report};

/// Arguments of `catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// Compare FILE with the generated catalog instead of printing it: exit status 1 and the
    /// first differing line when they differ.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
}

/// Where the `run_code` transport is declared (it is built by the registry, not by `#[tool]`).
const RUN_CODE_SOURCE: &str = "dsh-tools-code/src/transport.rs";

const INTRO: &str = "The tools of the `dsh-tools` example host: the coding tool pack and the Code Mode transport `run_code`. Each parameter schema is the canonical JSON Schema the registry validates arguments against; `dsh-tools list --dialect <mcp|openai-strict|gemini|anthropic>` prints the same tools as each provider receives them.";

/// The packages the example host ships.
fn manifest() -> Vec<PackageInfo> {
    vec![
        PackageInfo {
            name: "dsh_tools_examples".into(),
            requires: vec!["a POSIX sh (for bash)".into()],
            aliases: Vec::new(),
            note: Some("Relative paths resolve against the host's current directory. `bash`, `edit_file` and `write_file` ask for approval in the CLI host.".into()),
        },
        PackageInfo {
            name: "dsh_tools_runtime".into(),
            requires: vec![
                "the code-mode feature".into(),
                "a scope presented as code or both".into(),
            ],
            aliases: Vec::new(),
            note: Some("`run_code` is registered by the registry itself when a scope presents its tools as Code Mode; programs call the other tools through the generated TypeScript SDK.".into()),
        },
    ]
}

/// The catalog of every collected `#[tool]` plus `run_code`.
pub fn example_catalog() -> Result<Catalog, CliError> {
    let mut entries = Vec::new();
    for registration in dsh_tools::collect::registrations() {
        let entry = CatalogEntry::from_registration(registration).map_err(|e| {
            CliError::new(format!("cannot build tool \"{}\": {e}", registration.name))
        })?;
        entries.push(entry);
    }
    let registry = host_registry_in(PresentationMode::Code, false)?;
    CodeMode::new(Language::Typescript.runtime()?)
        .install(&registry)
        .map_err(|e| CliError::new(format!("cannot install Code Mode: {e}")))?;
    let run_code = registry
        .get(RUN_CODE_NAME, None)
        .ok_or_else(|| CliError::new("the Code Mode registry has no run_code"))?;
    entries.push(CatalogEntry::new(
        "dsh_tools_runtime",
        RUN_CODE_SOURCE,
        run_code,
    ));
    Catalog::build(INTRO, manifest(), entries).map_err(|e| CliError::new(e.to_string()))
}

/// Prints the catalog, or checks FILE against it.
pub(super) fn run(args: CatalogArgs) -> Result<Report, CliError> {
    let generated = example_catalog()?.to_markdown();
    let Some(path) = args.check else {
        let output = generated
            .strip_suffix('\n')
            .unwrap_or(&generated)
            .to_owned();
        return Ok(Report {
            output,
            passed: true,
            suspended: false,
        });
    };
    let input = Input::new(Some(path));
    let committed = input.read_text()?;
    Ok(match first_drift(&committed, &generated) {
        None => Report::json(&json!({"ok": true}), true),
        Some(drift) => {
            let message = format!(
                "{input}:{}: the catalog is out of date (expected {}, found {}); regenerate it with `dsh-tools catalog > {input}`",
                drift.line,
                shown(drift.expected.as_deref()),
                shown(drift.found.as_deref()),
            );
            Report::json(
                &json!({
                    "ok": false,
                    "line": drift.line,
                    "expected": drift.expected,
                    "found": drift.found,
                    "message": message,
                }),
                false,
            )
        }
    })
}

fn shown(line: Option<&str>) -> String {
    line.map_or_else(|| "the end of the file".to_owned(), |l| format!("{l:?}"))
}
