//! `sdk`: the Code Mode SDK section of the example tools, one TypeScript or Python type, or the
//! section for a JSON list of tools — in TypeScript or, with `--language python`, Python.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use dsh_tools_runtime::code::sdk::{SdkTool, json_schema_to_ts, sdk_tool_from};
use dsh_tools_runtime::code::sdk_py::json_schema_to_py;
use serde::Deserialize;
use serde_json::Value;

use crate::mcp_flag::{McpFlags, with_imported};
use crate::{CliError, Input, Language, Report};

/// Arguments of `sdk`.
#[derive(Debug, Args)]
pub struct SdkArgs {
    /// What to print (the example tools' SDK section when left out).
    #[command(subcommand)]
    pub command: Option<SdkCommand>,
    /// MCP servers whose tools join the example tools' SDK section.
    #[command(flatten)]
    pub mcp: McpFlags,
    /// The SDK's language (default typescript).
    #[arg(long, value_enum, default_value = "typescript", global = true)]
    pub language: Language,
}

/// The `sdk` subcommands.
#[derive(Debug, Subcommand)]
pub enum SdkCommand {
    /// The TypeScript type of one JSON schema.
    TsType {
        /// The schema: JSON text, a file, or `-` / nothing for standard input.
        schema: Option<PathBuf>,
    },
    /// The Python type of one JSON schema (and the `TypedDict` classes it names).
    PyType {
        /// The schema: a JSON file, or `-` / nothing for standard input.
        schema: Option<PathBuf>,
    },
    /// The SDK section for a JSON list of `{name, description, parameters, output?}`.
    Render {
        /// The tools: JSON text, a file, or `-` / nothing for standard input.
        tools: Option<PathBuf>,
    },
}

/// One entry of `sdk render`'s input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolEntry {
    name: String,
    #[serde(default)]
    description: String,
    parameters: Value,
    #[serde(default = "any_value")]
    output: Value,
}

fn any_value() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Reads a JSON list of `{name, description?, parameters, output?}` (the input form of
/// `sdk render` and `tokens`).
pub(crate) fn read_tool_list(input: &Input) -> Result<Vec<SdkTool>, CliError> {
    let entries: Vec<ToolEntry> = serde_json::from_value(input.read_json()?)
        .map_err(|e| CliError::input(input, format!("not a list of tools: {e}")))?;
    Ok(entries
        .into_iter()
        .map(|t| SdkTool {
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            output: t.output,
        })
        .collect())
}

/// The tool set of `tokens` and `search`: a list in `sdk render`'s input form when one is
/// given, else the example tools and those of the `--mcp` servers.
pub(crate) fn tool_set(list: Option<PathBuf>, mcp: &McpFlags) -> Result<Vec<SdkTool>, CliError> {
    match list {
        Some(list) => read_tool_list(&Input::json(Some(list))),
        None => {
            let mut tools = dsh_tools::collected_tools()
                .map_err(|e| CliError::new(format!("cannot collect the tools: {e}")))?;
            tools.extend(with_imported(mcp)?);
            Ok(tools.iter().map(sdk_tool_from).collect())
        }
    }
}

/// Prints the requested text (not JSON: these commands print TypeScript or Python).
pub(super) fn run(args: SdkArgs) -> Result<Report, CliError> {
    let text = match args.command {
        None => {
            let mut tools = dsh_tools::collected_tools()
                .map_err(|e| CliError::new(format!("cannot collect the tools: {e}")))?;
            tools.extend(with_imported(&args.mcp)?);
            let sdk: Vec<SdkTool> = tools.iter().map(sdk_tool_from).collect();
            args.language.render_sdk(&sdk)
        }
        Some(SdkCommand::TsType { schema }) => {
            let input = Input::json(schema);
            json_schema_to_ts(&input.read_json()?, 0)
        }
        Some(SdkCommand::PyType { schema }) => {
            let input = Input::new(schema);
            json_schema_to_py(&input.read_json()?)
        }
        Some(SdkCommand::Render { tools }) => args
            .language
            .render_sdk(&read_tool_list(&Input::json(tools))?),
    };
    Ok(Report {
        output: text,
        passed: true,
        suspended: false,
    })
}
