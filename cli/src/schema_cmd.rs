//! `schema check`, `schema validate` and `args validate`: the JSON-Schema subset and validation.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use dsh_tools::HarnessError as _;
use dsh_tools::subset::{self, CompiledSchema, Vocabulary};
use serde_json::json;

use crate::input::two_inputs;
use crate::{CliError, Input, Report};

/// `dsh-tools schema …`
#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Check that a JSON schema lies inside a supported vocabulary (a tool's parameters by
    /// default). Prints `{"ok":true}`, or
    /// `{"ok":false,"code":"UNSUPPORTED_SCHEMA","violations":[…]}` (exit status 1).
    Check(SchemaCheckArgs),
    /// Validate a JSON value against a schema; violation paths start at `value`. Prints
    /// `{"valid":…,"violations":[…]}`.
    Validate(SchemaValidateArgs),
}

/// Arguments of `schema check`.
#[derive(Debug, Args)]
pub struct SchemaCheckArgs {
    /// The schema: JSON text, a file, or `-` / nothing for standard input.
    #[arg(value_name = "SCHEMA")]
    pub file: Option<PathBuf>,
    /// What the schema is judged as: a tool's `parameters` (constraints such as `minimum`,
    /// `pattern` and `format` included), an `output` schema, or the `reference` subset alone.
    #[arg(long, value_enum, default_value_t = SchemaVocabulary::Parameters)]
    pub vocabulary: SchemaVocabulary,
}

/// The vocabularies `schema check` judges by (`docs/CONTRACTS.md`, "Schema vocabulary").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaVocabulary {
    /// A tool's parameter schema: what `#[tool]` parameters and their constraints compile to.
    Parameters,
    /// A tool's output schema: the reference subset, tuples and local references.
    Output,
    /// The reference subset: type/oneOf/properties/required/additionalProperties/items/enum/const.
    Reference,
}

impl From<SchemaVocabulary> for Vocabulary {
    fn from(vocabulary: SchemaVocabulary) -> Self {
        match vocabulary {
            SchemaVocabulary::Parameters => Vocabulary::Parameters,
            SchemaVocabulary::Output => Vocabulary::Output,
            SchemaVocabulary::Reference => Vocabulary::Reference,
        }
    }
}

/// Arguments of `schema validate`.
#[derive(Debug, Args)]
pub struct SchemaValidateArgs {
    /// The schema: JSON text, a file, or `-` for standard input. It must lie inside the
    /// supported subset.
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// The value to validate: JSON text, a file, or `-` / nothing for standard input.
    #[arg(value_name = "VALUE")]
    pub value: Option<PathBuf>,
}

/// `dsh-tools args …`
#[derive(Debug, Subcommand)]
pub enum ArgsCommand {
    /// Validate tool arguments against a parameter schema, as a tool does before its body runs;
    /// violation paths are rooted at the arguments object. Prints `{"valid":…,"violations":[…]}`.
    Validate(ArgsValidateArgs),
}

/// Arguments of `args validate`.
#[derive(Debug, Args)]
pub struct ArgsValidateArgs {
    /// The parameter schema (JSON text, a file, or `-` for standard input): an object schema in
    /// the parameter vocabulary.
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// The arguments to validate: JSON text, a file, or `-` / nothing for standard input.
    #[arg(value_name = "ARGS")]
    pub args: Option<PathBuf>,
}

impl SchemaCommand {
    /// Runs the command.
    pub fn run(self) -> Result<Report, CliError> {
        match self {
            Self::Check(args) => check(args),
            Self::Validate(args) => validate(args),
        }
    }
}

impl ArgsCommand {
    /// Runs the command.
    pub fn run(self) -> Result<Report, CliError> {
        match self {
            Self::Validate(args) => validate_args(args),
        }
    }
}

fn check(args: SchemaCheckArgs) -> Result<Report, CliError> {
    let schema = Input::json(args.file).read_json()?;
    Ok(
        match subset::assert_supported_in(&schema, args.vocabulary.into()) {
            Ok(()) => Report::json(&json!({"ok": true}), true),
            Err(error) => Report::json(
                &json!({
                    "ok": false,
                    "code": error.code().as_str(),
                    "violations": error.violations,
                }),
                false,
            ),
        },
    )
}

fn validate(args: SchemaValidateArgs) -> Result<Report, CliError> {
    let (schema_input, value_input) =
        two_inputs(Input::json(Some(args.schema)), Input::json(args.value))?;
    let schema = schema_input.read_json()?;
    subset::assert_supported(&schema).map_err(|e| CliError::input(&schema_input, e))?;
    let value = value_input.read_json()?;
    Ok(Report::validity(subset::validate_value(
        &schema, &value, "value",
    )))
}

fn validate_args(args: ArgsValidateArgs) -> Result<Report, CliError> {
    let (schema_input, args_input) =
        two_inputs(Input::json(Some(args.schema)), Input::json(args.args))?;
    let schema = schema_input.read_json()?;
    let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters)
        .map_err(|e| CliError::input(&schema_input, e))?;
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(CliError::input(
            &schema_input,
            r#"a parameter schema must be an object schema ("type": "object")"#,
        ));
    }
    let arguments = args_input.read_json()?;
    Ok(Report::validity(
        match dsh_tools::args::validate_args(&compiled, &arguments) {
            Ok(()) => Vec::new(),
            Err(error) => error.violations,
        },
    ))
}
