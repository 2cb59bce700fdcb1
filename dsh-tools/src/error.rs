//! Errors with stable names and codes.
//!
//! Every failure that reaches a model carries a human-readable message and, for the structured
//! failures of the harness, an [`ErrorInfo`] `{name, code}` pair. The codes are part of the public
//! contract: hosts, retry policies and session logs match on them.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The stable error codes of the tool layer.
///
/// ```
/// use dsh_tools::ErrorCode;
/// assert_eq!(ErrorCode::InvalidArgs.as_str(), "INVALID_ARGS");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Model-written arguments violate the tool's parameter schema.
    InvalidArgs,
    /// The named tool is unknown, invisible to the caller, or collapsed behind `run_code`.
    UnknownTool,
    /// A tool (or a policy replacing its value) produced output that violates its output schema.
    InvalidToolOutput,
    /// A JSON schema lies outside the supported subset.
    UnsupportedSchema,
    /// A Code Mode program run failed.
    CodeRunFailed,
    /// The call was cancelled after its body was invoked.
    Aborted,
    /// The call was cancelled before its body was invoked.
    AbortedBeforeDispatch,
    /// The tool's deadline passed.
    ToolTimeout,
}

impl ErrorCode {
    /// The wire form of the code, e.g. `"INVALID_ARGS"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgs => "INVALID_ARGS",
            Self::UnknownTool => "UNKNOWN_TOOL",
            Self::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            Self::UnsupportedSchema => "UNSUPPORTED_SCHEMA",
            Self::CodeRunFailed => "CODE_RUN_FAILED",
            Self::Aborted => "ABORTED",
            Self::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            Self::ToolTimeout => "TOOL_TIMEOUT",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The structured `{name, code}` pair attached to harness failures.
///
/// ```
/// use dsh_tools::ErrorInfo;
/// let info = ErrorInfo::new("ToolArgsError", "INVALID_ARGS");
/// assert_eq!(serde_json::to_string(&info).unwrap(), r#"{"name":"ToolArgsError","code":"INVALID_ARGS"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The concrete error class name, e.g. `ToolArgsError`.
    pub name: Cow<'static, str>,
    /// The stable code, e.g. `INVALID_ARGS`.
    pub code: Cow<'static, str>,
}

impl ErrorInfo {
    /// Builds an info pair from a name and a code.
    pub fn new(name: impl Into<Cow<'static, str>>, code: impl Into<Cow<'static, str>>) -> Self {
        Self {
            name: name.into(),
            code: code.into(),
        }
    }
}

/// A failure of the harness itself (as opposed to a tool's own failure): it has a class name and
/// a stable code, which travel to the model-facing result as [`ErrorInfo`].
pub trait HarnessError: std::error::Error {
    /// The class name, e.g. `ToolArgsError`.
    fn name(&self) -> &'static str;
    /// The stable code.
    fn code(&self) -> ErrorCode;
    /// The `{name, code}` pair.
    fn info(&self) -> ErrorInfo {
        ErrorInfo::new(self.name(), self.code().as_str())
    }
}

fn join(violations: &[String]) -> String {
    violations.join("; ")
}

/// A JSON schema lies outside the supported subset (`UNSUPPORTED_SCHEMA`).
///
/// The message is `unsupported JSON schema: ` followed by every violation, joined by `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported JSON schema: {}", join(.violations))]
pub struct JsonSchemaError {
    /// Every violation, in discovery order.
    pub violations: Vec<String>,
}

impl JsonSchemaError {
    /// Builds the error from its violations.
    pub fn new(violations: Vec<String>) -> Self {
        Self { violations }
    }
}

impl HarnessError for JsonSchemaError {
    fn name(&self) -> &'static str {
        "JsonSchemaError"
    }
    fn code(&self) -> ErrorCode {
        ErrorCode::UnsupportedSchema
    }
}

/// Model-written arguments violate the parameter schema (`INVALID_ARGS`).
///
/// ```
/// use dsh_tools::ToolArgsError;
/// let e = ToolArgsError::new(vec!["\"s\" must be a string".into(), "missing required property \"path\"".into()]);
/// assert_eq!(e.to_string(), "invalid arguments: \"s\" must be a string; missing required property \"path\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments: {}", join(.violations))]
pub struct ToolArgsError {
    /// Every violation, in validation order.
    pub violations: Vec<String>,
}

impl ToolArgsError {
    /// Builds the error from its violations.
    pub fn new(violations: Vec<String>) -> Self {
        Self { violations }
    }
}

impl HarnessError for ToolArgsError {
    fn name(&self) -> &'static str {
        "ToolArgsError"
    }
    fn code(&self) -> ErrorCode {
        ErrorCode::InvalidArgs
    }
}

/// A tool's value violates its output contract (`INVALID_TOOL_OUTPUT`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool \"{tool}\" returned invalid output: {}", join(.violations))]
pub struct ToolOutputError {
    /// The tool's name.
    pub tool: String,
    /// Every violation.
    pub violations: Vec<String>,
}

impl HarnessError for ToolOutputError {
    fn name(&self) -> &'static str {
        "ToolOutputError"
    }
    fn code(&self) -> ErrorCode {
        ErrorCode::InvalidToolOutput
    }
}

/// A tool definition is malformed (caught when the definition is built, before registration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The output (or parameter) schema is outside the supported subset.
    #[error(transparent)]
    Schema(#[from] JsonSchemaError),
    /// `timeout_ms` is zero.
    #[error("defineTool({tool}): timeoutMs must be a positive finite number")]
    NonPositiveTimeout {
        /// The tool's name.
        tool: String,
    },
    /// `max_result_tokens` is zero.
    #[error("tool \"{tool}\": max_result_tokens must be positive")]
    NonPositiveResultBudget {
        /// The tool's name.
        tool: String,
    },
    /// The parameter schema is not object-rooted.
    #[error("tool \"{tool}\" parameters must be an object schema (type \"object\")")]
    ParametersNotObject {
        /// The tool's name.
        tool: String,
    },
    /// The name does not match `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`.
    #[error(
        "tool name {name:?} must match ^[A-Za-z_][A-Za-z0-9_.-]{{0,63}}$ (a letter or `_`, then up to 63 letters, digits, `_`, `.` or `-`)"
    )]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// A required part of the definition was not given to the builder.
    #[error("tool \"{tool}\" is missing its {part}")]
    Missing {
        /// The tool's name.
        tool: String,
        /// What is missing (`description`, `execute`, ...).
        part: &'static str,
    },
}

/// The failure a tool body reports: a model-facing message plus, for harness failures, the
/// structured `{name, code}` info.
///
/// Any `Display` error converts into a plain tool error through [`ToolError::msg`]; the harness
/// errors of this crate convert with their info attached.
///
/// ```
/// use dsh_tools::{ToolError, ToolArgsError};
/// let plain = ToolError::msg("disk full");
/// assert_eq!(plain.message(), "disk full");
/// assert!(plain.info().is_none());
/// let args: ToolError = ToolArgsError::new(vec!["\"x\" must be a number".into()]).into();
/// assert_eq!(args.info().unwrap().code, "INVALID_ARGS");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    info: Option<ErrorInfo>,
}

impl ToolError {
    /// A plain failure with only a message (no `info`).
    pub fn msg(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            info: None,
        }
    }

    /// A structured failure with a message and `{name, code}` info.
    pub fn with_info(message: impl Into<String>, info: ErrorInfo) -> Self {
        Self {
            message: message.into(),
            info: Some(info),
        }
    }

    /// A structured failure built from a harness error.
    pub fn from_harness(error: &dyn HarnessError) -> Self {
        Self::with_info(error.to_string(), error.info())
    }

    /// The model-facing message (without the `Error: ` prefix).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The structured info, present only for harness failures.
    pub fn info(&self) -> Option<&ErrorInfo> {
        self.info.as_ref()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

macro_rules! harness_into_tool_error {
    ($($ty:ty),*) => {$(
        impl From<$ty> for ToolError {
            fn from(error: $ty) -> Self {
                Self::from_harness(&error)
            }
        }
    )*};
}
harness_into_tool_error!(JsonSchemaError, ToolArgsError, ToolOutputError);
