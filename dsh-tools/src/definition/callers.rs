//! Who may call a tool: the model directly, a Code Mode program, or both
//! (`docs/CONTRACTS.md`, "Presentation modes", callers).

use serde::{Deserialize, Serialize};

/// Who may call a tool (`#[tool(callers = "...")]`, [`ToolBuilder::callers`](super::ToolBuilder::callers)).
///
/// - [`Callers::Native`]: the model calls it directly. It is on the wire list in every mode
///   (even in a `code` scope, beside `run_code`), never in the Code Mode SDK; a program calling
///   it gets an error saying so.
/// - [`Callers::Code`]: only Code Mode programs call it. It is in the SDK, never on the wire
///   list; a model-direct call fails with `UNKNOWN_TOOL`.
/// - [`Callers::Both`] (the default): as the scope's presentation mode decides.
///
/// ```
/// use dsh_tools::{Callers, ToolDefinition};
///
/// let ask_user = ToolDefinition::builder("ask_user")
///     .description("Ask the user a question.")
///     .callers(Callers::Native)
///     .execute(|_, _| async { Ok(serde_json::Value::Null) })
///     .build()
///     .unwrap();
/// assert_eq!(ask_user.callers(), Callers::Native);
/// assert!(ask_user.callers().model() && !ask_user.callers().code());
/// assert_eq!(serde_json::to_string(&Callers::Code).unwrap(), "\"code\"");
/// assert_eq!("both".parse::<Callers>(), Ok(Callers::Both));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Callers {
    /// The model calls it directly; programs cannot.
    Native,
    /// Only programs call it (it is in the SDK only).
    Code,
    /// Both (the default).
    #[default]
    Both,
}

impl Callers {
    /// Every value, in declaration order.
    pub const ALL: [Callers; 3] = [Callers::Native, Callers::Code, Callers::Both];

    /// The wire name: `native`, `code` or `both`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Code => "code",
            Self::Both => "both",
        }
    }

    /// Whether the model may call the tool directly.
    pub const fn model(self) -> bool {
        !matches!(self, Self::Code)
    }

    /// Whether a Code Mode program may call the tool.
    pub const fn code(self) -> bool {
        !matches!(self, Self::Native)
    }
}

impl std::fmt::Display for Callers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not `native`, `code` or `both`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown callers \"{0}\": expected \"native\", \"code\" or \"both\"")]
pub struct UnknownCallers(pub String);

impl std::str::FromStr for Callers {
    type Err = UnknownCallers;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == name)
            .ok_or_else(|| UnknownCallers(name.to_owned()))
    }
}
