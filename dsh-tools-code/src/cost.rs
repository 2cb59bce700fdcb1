//! What a tool set costs in the model's context, in tokens (`docs/CONTRACTS.md`, "Tokens"):
//! the native wire definitions against `run_code` plus the SDK section.
//!
//! The native form of a tool is its compact OpenAI function definition
//! (`{"type":"function","function":{"name","description","parameters"}}`, the description left
//! out when empty, the parameter schema as registered); the Code Mode form is the `run_code`
//! definition in the same shape plus the `tools:sdk` section of the flavour. Counts use
//! [`dsh_tools_core::tokens::count`].
//!
//! ```
//! use dsh_tools_runtime::code::cost::tool_set_cost;
//! use dsh_tools_runtime::code::flavour::TYPESCRIPT;
//! use dsh_tools_runtime::code::sdk::SdkTool;
//! use serde_json::json;
//!
//! let echo = SdkTool {
//!     name: "echo".into(),
//!     description: "Echo the text.".into(),
//!     parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
//!     output: json!({"type": "string"}),
//! };
//! let cost = tool_set_cost(&[echo], &TYPESCRIPT);
//! assert!(cost.native > 0 && cost.sdk > cost.native, "one small tool costs less natively");
//! assert_eq!(cost.ratio(), cost.sdk as f64 / cost.native as f64);
//! ```

use serde_json::{Map, Value, json};

use super::flavour::Flavour;
use super::sdk::SdkTool;
use super::texts::RUN_CODE_NAME;
use super::transport::run_code_parameters_for;
use dsh_tools_core::tokens;

/// The token counts of one tool set in its two presentations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSetCost {
    /// The native wire definitions of the tools.
    pub native: usize,
    /// The `run_code` definition plus the SDK section.
    pub sdk: usize,
}

impl ToolSetCost {
    /// `sdk / native` (0 when `native` is 0).
    pub fn ratio(&self) -> f64 {
        if self.native == 0 {
            0.0
        } else {
            self.sdk as f64 / self.native as f64
        }
    }
}

/// The compact OpenAI function definition of a tool: the native form the costs compare with.
///
/// ```
/// use dsh_tools_runtime::code::cost::native_definition;
/// use serde_json::json;
///
/// let wire = native_definition("ping", "", &json!({"type": "object"}));
/// assert_eq!(wire, r#"{"type":"function","function":{"name":"ping","parameters":{"type":"object"}}}"#);
/// ```
pub fn native_definition(name: &str, description: &str, parameters: &Value) -> String {
    let mut function = Map::new();
    function.insert("name".into(), name.into());
    if !description.is_empty() {
        function.insert("description".into(), description.into());
    }
    function.insert("parameters".into(), parameters.clone());
    json!({"type": "function", "function": function}).to_string()
}

/// The tokens of the tools' native definitions.
pub fn native_tokens(tools: &[SdkTool]) -> usize {
    tools
        .iter()
        .map(|t| tokens::count(&native_definition(&t.name, &t.description, &t.parameters)))
        .sum()
}

/// The tokens of `flavour`'s `run_code` definition (the fixed part of the Code Mode form).
pub fn run_code_tokens(flavour: &Flavour) -> usize {
    tokens::count(&native_definition(
        RUN_CODE_NAME,
        flavour.run_code_description,
        &run_code_parameters_for(flavour.code_parameter_description),
    ))
}

/// The tokens of `tools` presented natively and in Code Mode with `flavour`.
pub fn tool_set_cost(tools: &[SdkTool], flavour: &Flavour) -> ToolSetCost {
    ToolSetCost {
        native: native_tokens(tools),
        sdk: run_code_tokens(flavour) + tokens::count(&(flavour.render_sdk)(tools)),
    }
}
