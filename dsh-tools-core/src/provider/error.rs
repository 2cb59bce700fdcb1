//! Why a provider response cannot be turned into tool calls.

use super::Provider;

/// A provider response that is not the named provider's shape, or that breaks the pairing of
/// calls and results (`docs/CONTRACTS.md`, "Provider turns").
///
/// Malformed *arguments* are not an error of this kind: they are the model's mistake and become
/// that call's `INVALID_ARGS` result.
///
/// ```
/// use dsh_tools_runtime::provider::{Provider, parse_calls};
/// use serde_json::json;
/// let call = json!({"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}});
/// let err = parse_calls(Provider::OpenAiChat, &json!({"choices": [{"message": {"tool_calls": [call]}}]})).unwrap_err();
/// assert_eq!(err.to_string(), "not an OpenAI Chat Completions response: choices[0].message.tool_calls[0].id must be a string, got number");
/// assert_eq!(err.code(), "PROVIDER_SHAPE");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// A field is missing or has the wrong JSON type.
    #[error("not {article} {name} response: {path} {problem}", article = provider.article(), name = provider.display_name())]
    Shape {
        /// The provider whose shape was expected.
        provider: Provider,
        /// The JSON path of the field (`choices[0].message.tool_calls[1].function.name`).
        path: String,
        /// What is wrong with it (`must be a string, got number`, `is missing`).
        problem: String,
    },
    /// Two calls of one turn share an id: results could not be paired with their calls.
    #[error("{provider} response has two tool calls with id {quoted_id} ({path}): results could not be paired with their calls", provider = provider.display_name(), quoted_id = quoted(id))]
    DuplicateCallId {
        /// The provider.
        provider: Provider,
        /// The repeated id.
        id: String,
        /// Where the second one is.
        path: String,
    },
    /// A streaming event that does not fit the stream so far.
    #[error("bad {name} stream event: {problem}", name = provider.display_name())]
    Stream {
        /// The provider.
        provider: Provider,
        /// What is wrong (naming the field).
        problem: String,
    },
}

/// A text from the response as a JSON string literal, so that a message quoting it stays one line
/// (`"fu\nction"`, not a line break).
pub(super) fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

impl ProviderError {
    /// The stable code: `PROVIDER_SHAPE`, `DUPLICATE_CALL_ID` or `PROVIDER_STREAM`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Shape { .. } => "PROVIDER_SHAPE",
            Self::DuplicateCallId { .. } => "DUPLICATE_CALL_ID",
            Self::Stream { .. } => "PROVIDER_STREAM",
        }
    }
}
