//! The outcome of one execution (`docs/CONTRACTS.md`, "Tools and results").

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::content::{ContentBlock, ContextMessage, ToolResult};
use crate::error::{ErrorInfo, ToolError};

/// A successful call: the canonical value and its model-facing content.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSuccess {
    /// The canonical value, valid against the tool's output schema.
    pub value: Value,
    /// The model-facing content rendered from the value.
    pub content: Vec<ContentBlock>,
    /// Presentation payload (top-level calls only).
    pub meta: Option<Value>,
    /// Context messages attached by the tool or by policies.
    pub additional_contexts: Vec<ContextMessage>,
    /// Whether the tool asked to conclude the turn.
    pub concludes_turn: bool,
}

/// A failed call: the error and the content the model sees (usually `Error: <message>`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolFailure {
    /// The error message and structured info.
    pub error: ToolError,
    /// The model-facing content.
    pub content: Vec<ContentBlock>,
    /// Presentation payload.
    pub meta: Option<Value>,
    /// Context messages attached by the tool or by policies.
    pub additional_contexts: Vec<ContextMessage>,
}

/// The outcome of one execution. A failure never has a value; only a success can conclude the
/// turn.
///
/// The wire form is the reference's:
/// ```
/// use dsh_tools::exec::ToolExecutionResult;
/// use dsh_tools::ToolError;
/// let failed = ToolExecutionResult::failure(ToolError::msg("kaboom"));
/// assert_eq!(
///     serde_json::to_string(&failed).unwrap(),
///     r#"{"isError":true,"error":{"message":"kaboom"},"content":[{"type":"text","text":"Error: kaboom"}]}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum ToolExecutionResult {
    /// The call succeeded.
    Success(ToolSuccess),
    /// The call failed.
    Failure(ToolFailure),
}

impl ToolExecutionResult {
    /// A failure whose content is `Error: <message>` (`docs/CONTRACTS.md`, "Tools and results").
    pub fn failure(error: ToolError) -> Self {
        let content = vec![ContentBlock::text(format!("Error: {}", error.message()))];
        Self::Failure(ToolFailure {
            error,
            content,
            meta: None,
            additional_contexts: Vec::new(),
        })
    }

    /// Whether this is a failure.
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Failure(_))
    }

    /// The model-facing content.
    pub fn content(&self) -> &[ContentBlock] {
        match self {
            Self::Success(s) => &s.content,
            Self::Failure(f) => &f.content,
        }
    }

    /// The canonical value of a success.
    pub fn value(&self) -> Option<&Value> {
        match self {
            Self::Success(s) => Some(&s.value),
            Self::Failure(_) => None,
        }
    }

    /// The error of a failure.
    pub fn error(&self) -> Option<&ToolError> {
        match self {
            Self::Success(_) => None,
            Self::Failure(f) => Some(&f.error),
        }
    }

    /// The presentation payload.
    pub fn meta(&self) -> Option<&Value> {
        match self {
            Self::Success(s) => s.meta.as_ref(),
            Self::Failure(f) => f.meta.as_ref(),
        }
    }

    /// The attached context messages.
    pub fn additional_contexts(&self) -> &[ContextMessage] {
        match self {
            Self::Success(s) => &s.additional_contexts,
            Self::Failure(f) => &f.additional_contexts,
        }
    }

    /// The durable presenter input `{content, isError, meta?}`.
    pub fn to_tool_result(&self) -> ToolResult {
        ToolResult {
            content: self.content().to_vec(),
            is_error: self.is_error(),
            meta: self.meta().cloned(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireError {
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    info: Option<ErrorInfo>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<WireError>,
    content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    additional_contexts: Vec<ContextMessage>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    concludes_turn: bool,
}

impl Serialize for ToolExecutionResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            Self::Success(s) => Wire {
                is_error: false,
                value: Some(s.value.clone()),
                error: None,
                content: s.content.clone(),
                meta: s.meta.clone(),
                additional_contexts: s.additional_contexts.clone(),
                concludes_turn: s.concludes_turn,
            },
            Self::Failure(f) => Wire {
                is_error: true,
                value: None,
                error: Some(WireError {
                    message: f.error.message().to_owned(),
                    info: f.error.info().cloned(),
                }),
                content: f.content.clone(),
                meta: f.meta.clone(),
                additional_contexts: f.additional_contexts.clone(),
                concludes_turn: false,
            },
        };
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolExecutionResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `value` may legitimately be JSON null, so read it from the raw object.
        let raw = serde_json::Map::<String, Value>::deserialize(deserializer)?;
        let value = raw.get("value").cloned();
        let wire: Wire = serde_json::from_value(Value::Object(raw)).map_err(D::Error::custom)?;
        if wire.is_error {
            let error = wire
                .error
                .ok_or_else(|| D::Error::custom("a failed tool result needs an `error`"))?;
            let error = match error.info {
                Some(info) => ToolError::with_info(error.message, info),
                None => ToolError::msg(error.message),
            };
            Ok(Self::Failure(ToolFailure {
                error,
                content: wire.content,
                meta: wire.meta,
                additional_contexts: wire.additional_contexts,
            }))
        } else {
            let value = value
                .ok_or_else(|| D::Error::custom("a successful tool result needs a `value`"))?;
            Ok(Self::Success(ToolSuccess {
                value,
                content: wire.content,
                meta: wire.meta,
                additional_contexts: wire.additional_contexts,
                concludes_turn: wire.concludes_turn,
            }))
        }
    }
}
