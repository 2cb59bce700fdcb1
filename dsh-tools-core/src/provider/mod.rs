//! Provider turns: a model provider's tool calls in, the messages that provider expects next
//! out (`docs/CONTRACTS.md`, "Provider turns").
//!
//! One model turn goes through three steps, each usable alone:
//!
//! 1. **Parse** the calls out of the response body exactly as the API returns it
//!    ([`parse_calls`]), or accumulate them from the streaming events ([`ChatStream`],
//!    [`AnthropicStream`]). Arguments text that is not JSON stays with its call as
//!    [`CallArguments::Malformed`].
//! 2. **Execute** them as one [`ToolRegistry::execute_batch`](crate::ToolRegistry::execute_batch)
//!    (concurrency classes respected, results in call order). Arguments of tools that were sent
//!    in OpenAI strict mode get their strict-mode `null`s removed first
//!    ([`restore_omitted`](crate::dialect::restore_omitted)). A malformed call becomes its own
//!    `INVALID_ARGS` result naming the JSON error's line and column; its body never runs and the
//!    other calls still run.
//! 3. **Render** the results as that provider's next input ([`render_results`]): one tool
//!    message, item, block or part per call, in call order, ids paired; then the calls'
//!    additional contexts as user messages.
//!
//! [`ProviderTurn`] does all three.
//!
//! ```
//! use dsh_tools::ToolDefinition;
//! use dsh_tools_runtime::ToolRegistry;
//! use dsh_tools_runtime::provider::{Provider, ProviderTurn};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = ToolRegistry::new();
//! registry.register(ToolDefinition::builder("shout").description("Upper-case the text.")
//!     .parameters_json(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
//!     .execute(|args, _| async move { Ok(json!(args["text"].as_str().unwrap_or("").to_uppercase())) })
//!     .build().unwrap()).unwrap().keep();
//!
//! let response = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0,
//!     "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [
//!         {"id": "call_a", "type": "function", "function": {"name": "shout", "arguments": "{\"text\":\"hi\"}"}},
//!         {"id": "call_b", "type": "function", "function": {"name": "shout", "arguments": "{\"text\":"}}
//! ]}}]});
//! let turn = ProviderTurn::new(&registry, Provider::OpenAiChat).run_response(&response).await.unwrap();
//! assert_eq!(turn.messages, [
//!     json!({"role": "tool", "tool_call_id": "call_a", "content": "HI"}),
//!     json!({"role": "tool", "tool_call_id": "call_b",
//!            "content": "Error: invalid arguments: arguments are not valid JSON: EOF while parsing a value at line 1 column 8"}),
//! ]);
//! # });
//! ```

#[cfg(feature = "async-openai")]
pub mod async_openai;
mod content;
mod error;
mod parse;
mod render;
mod stream;
mod tools;
mod turn;

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

pub use content::ImageSource;
pub use error::ProviderError;
pub use parse::parse_calls;
pub use render::render_results;
pub use stream::{AnthropicStream, ChatStream};
pub use tools::{ANTHROPIC_TOOL_SEARCH, ANTHROPIC_TOOL_SEARCH_BETA, request_tools};
pub use turn::{ProviderTurn, TurnOutcome};

/// A model provider's API, by the shape of its tool calls and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (`/v1/chat/completions`), and every API compatible with it.
    OpenAiChat,
    /// OpenAI Responses (`/v1/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
}

impl Provider {
    /// Every provider, in the order of their names in messages.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The name: `openai-chat`, `openai-responses`, `anthropic` or `gemini`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The API's name in messages (`OpenAI Chat Completions`, ...).
    pub const fn display_name(self) -> &'static str {
        match self {
            Self::OpenAiChat => "OpenAI Chat Completions",
            Self::OpenAiResponses => "OpenAI Responses",
            Self::Anthropic => "Anthropic Messages",
            Self::Gemini => "Gemini generateContent",
        }
    }

    const fn article(self) -> &'static str {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses | Self::Anthropic => "an",
            Self::Gemini => "a",
        }
    }

    /// Whether the next input is a list of messages (items) rather than one message: the
    /// OpenAI forms send one message (item) per call.
    pub const fn sends_list(self) -> bool {
        matches!(self, Self::OpenAiChat | Self::OpenAiResponses)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses `openai-chat`, `openai-responses`, `anthropic` or `gemini`.
///
/// ```
/// use dsh_tools_runtime::provider::Provider;
/// assert_eq!("gemini".parse::<Provider>().unwrap(), Provider::Gemini);
/// assert_eq!("openai".parse::<Provider>().unwrap_err(),
///     "unknown provider \"openai\": expected openai-chat, openai-responses, anthropic or gemini");
/// ```
impl FromStr for Provider {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| {
            format!(
                "unknown provider \"{s}\": expected openai-chat, openai-responses, anthropic or gemini"
            )
        })
    }
}

/// One tool call of a model turn, as the provider sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderCall {
    /// The call id the provider pairs the result with (`None`: a Gemini call without `id`).
    pub id: Option<String>,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub arguments: CallArguments,
}

/// A call's arguments: JSON, or the text the model wrote that is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum CallArguments {
    /// Parsed arguments.
    Json(Value),
    /// Arguments text that does not parse: the JSON error, naming its line and column.
    Malformed(String),
}

impl CallArguments {
    /// Parses arguments text. Empty (or all-whitespace) text means no arguments (`{}`), which
    /// is what OpenAI-compatible servers send for tools without parameters.
    ///
    /// ```
    /// use dsh_tools_runtime::provider::CallArguments;
    /// use serde_json::json;
    /// assert_eq!(CallArguments::from_text(""), CallArguments::Json(json!({})));
    /// assert_eq!(CallArguments::from_text("{\"a\":1}"), CallArguments::Json(json!({"a": 1})));
    /// assert_eq!(CallArguments::from_text("{\"a\":1,}"),
    ///     CallArguments::Malformed("trailing comma at line 1 column 8".into()));
    /// ```
    pub fn from_text(text: &str) -> Self {
        if text.trim().is_empty() {
            return Self::Json(Value::Object(Map::new()));
        }
        match serde_json::from_str(text) {
            Ok(value) => Self::Json(value),
            Err(error) => Self::Malformed(error.to_string()),
        }
    }
}
