//! Tool calls out of a complete provider response, exactly as each API returns it.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::error::quoted;
use super::{CallArguments, Provider, ProviderCall, ProviderError};

/// The tool calls of one model turn, in the order the response lists them.
///
/// - OpenAI Chat Completions: `choices[0].message.tool_calls[]` (`function.arguments` is JSON
///   text); the other choices are alternatives of the same turn and are not read.
/// - OpenAI Responses: the `output[]` items of type `function_call` (`arguments` is JSON text).
/// - Anthropic Messages: the `content[]` blocks of type `tool_use` (`input` is an object).
/// - Gemini `generateContent`: `candidates[0].content.parts[].functionCall` (`args` is an
///   object, `id` is optional).
///
/// A field of the wrong type is a [`ProviderError::Shape`] naming its path; two calls sharing an
/// id are [`ProviderError::DuplicateCallId`]. Arguments text that is not JSON is *not* an
/// error here: the call carries [`CallArguments::Malformed`] and becomes that call's
/// `INVALID_ARGS` result.
///
/// ```
/// use dsh_tools_runtime::provider::{CallArguments, Provider, parse_calls};
/// use serde_json::json;
///
/// let response = json!({"content": [
///     {"type": "text", "text": "Let me look."},
///     {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.rs"}}
/// ]});
/// let calls = parse_calls(Provider::Anthropic, &response).unwrap();
/// assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
/// assert_eq!(calls[0].arguments, CallArguments::Json(json!({"path": "a.rs"})));
///
/// let chat = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
///     {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}
/// ]}}]});
/// let calls = parse_calls(Provider::OpenAiChat, &chat).unwrap();
/// let CallArguments::Malformed(error) = &calls[0].arguments else { panic!() };
/// assert_eq!(error, "EOF while parsing a value at line 1 column 9");
/// ```
pub fn parse_calls(
    provider: Provider,
    response: &Value,
) -> Result<Vec<ProviderCall>, ProviderError> {
    let root = At::root(provider, response);
    let calls = match provider {
        Provider::OpenAiChat => chat(root)?,
        Provider::OpenAiResponses => responses(root)?,
        Provider::Anthropic => anthropic(root)?,
        Provider::Gemini => gemini(root)?,
    };
    check_unique(provider, &calls)?;
    Ok(calls.into_iter().map(|(_, call)| call).collect())
}

/// Refuses two calls with one id (`paths` name where each call is).
pub(super) fn check_unique(
    provider: Provider,
    calls: &[(String, ProviderCall)],
) -> Result<(), ProviderError> {
    let mut seen = HashSet::new();
    for (path, call) in calls {
        if let Some(id) = &call.id
            && !seen.insert(id.as_str())
        {
            return Err(ProviderError::DuplicateCallId {
                provider,
                id: id.clone(),
                path: path.clone(),
            });
        }
    }
    Ok(())
}

fn chat(root: At<'_>) -> Result<Vec<(String, ProviderCall)>, ProviderError> {
    let choices = root.field("choices")?.array()?;
    let Some(first) = choices.first() else {
        return Err(root.field("choices")?.problem("is empty"));
    };
    let message = first.field("message")?;
    message.object()?;
    let Some(tool_calls) = message.optional("tool_calls")? else {
        return Ok(Vec::new());
    };
    let mut calls = Vec::new();
    for call in tool_calls.array()? {
        let kind = call.field("type")?.string()?;
        if kind != "function" {
            return Err(call.field("type")?.problem(&format!(
                "is {}: only \"function\" tool calls can run",
                quoted(kind)
            )));
        }
        let function = call.field("function")?;
        calls.push((
            call.path(),
            ProviderCall {
                id: Some(call.field("id")?.string()?.to_owned()),
                name: function.field("name")?.string()?.to_owned(),
                arguments: CallArguments::from_text(function.field("arguments")?.string()?),
            },
        ));
    }
    Ok(calls)
}

fn responses(root: At<'_>) -> Result<Vec<(String, ProviderCall)>, ProviderError> {
    let mut calls = Vec::new();
    for item in root.field("output")?.array()? {
        if item.field("type")?.string()? != "function_call" {
            continue;
        }
        calls.push((
            item.path(),
            ProviderCall {
                id: Some(item.field("call_id")?.string()?.to_owned()),
                name: item.field("name")?.string()?.to_owned(),
                arguments: CallArguments::from_text(item.field("arguments")?.string()?),
            },
        ));
    }
    Ok(calls)
}

fn anthropic(root: At<'_>) -> Result<Vec<(String, ProviderCall)>, ProviderError> {
    let mut calls = Vec::new();
    for block in root.field("content")?.array()? {
        if block.field("type")?.string()? != "tool_use" {
            continue;
        }
        let input = block.field("input")?;
        input.object()?;
        calls.push((
            block.path(),
            ProviderCall {
                id: Some(block.field("id")?.string()?.to_owned()),
                name: block.field("name")?.string()?.to_owned(),
                arguments: CallArguments::Json(input.value().clone()),
            },
        ));
    }
    Ok(calls)
}

fn gemini(root: At<'_>) -> Result<Vec<(String, ProviderCall)>, ProviderError> {
    let candidates = root.field("candidates")?.array()?;
    // A response blocked before any candidate (promptFeedback) has no calls.
    let Some(first) = candidates.first() else {
        return Ok(Vec::new());
    };
    // A candidate stopped by a safety filter may have no content.
    let Some(content) = first.optional("content")? else {
        return Ok(Vec::new());
    };
    let Some(parts) = content.optional("parts")? else {
        return Ok(Vec::new());
    };
    let mut calls = Vec::new();
    for part in parts.array()? {
        part.object()?;
        let Some(call) = part.optional("functionCall")? else {
            continue;
        };
        let arguments = match call.optional("args")? {
            Some(args) => {
                args.object()?;
                args.value().clone()
            }
            None => Value::Object(Map::new()),
        };
        let id = match call.optional("id")? {
            Some(id) => Some(id.string()?.to_owned()),
            None => None,
        };
        calls.push((
            call.path(),
            ProviderCall {
                id,
                name: call.field("name")?.string()?.to_owned(),
                arguments: CallArguments::Json(arguments),
            },
        ));
    }
    Ok(calls)
}

static NULL: Value = Value::Null;

/// A value and its path in the response, for errors that name the field.
#[derive(Clone)]
pub(super) struct At<'a> {
    provider: Provider,
    value: &'a Value,
    path: String,
}

impl<'a> At<'a> {
    pub(super) fn root(provider: Provider, value: &'a Value) -> Self {
        Self {
            provider,
            value,
            path: String::new(),
        }
    }

    pub(super) fn value(&self) -> &'a Value {
        self.value
    }

    pub(super) fn path(&self) -> String {
        if self.path.is_empty() {
            "the body".to_owned()
        } else {
            self.path.clone()
        }
    }

    pub(super) fn problem(&self, problem: &str) -> ProviderError {
        ProviderError::Shape {
            provider: self.provider,
            path: self.path(),
            problem: problem.to_owned(),
        }
    }

    fn wrong(&self, expected: &str) -> ProviderError {
        self.problem(&format!("must be {expected}, got {}", kind(self.value)))
    }

    pub(super) fn object(&self) -> Result<&'a Map<String, Value>, ProviderError> {
        self.value
            .as_object()
            .ok_or_else(|| self.wrong("an object"))
    }

    pub(super) fn string(&self) -> Result<&'a str, ProviderError> {
        self.value.as_str().ok_or_else(|| self.wrong("a string"))
    }

    /// A required field.
    pub(super) fn field(&self, key: &str) -> Result<At<'a>, ProviderError> {
        match self.object()?.get(key) {
            Some(value) => Ok(self.key(value, key)),
            None => Err(self.key(&NULL, key).problem("is missing")),
        }
    }

    /// An optional field (absent and `null` are both `None`).
    pub(super) fn optional(&self, key: &str) -> Result<Option<At<'a>>, ProviderError> {
        Ok(match self.object()?.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => Some(self.key(value, key)),
        })
    }

    pub(super) fn array(&self) -> Result<Vec<At<'a>>, ProviderError> {
        let items = self
            .value
            .as_array()
            .ok_or_else(|| self.wrong("an array"))?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, value)| At {
                provider: self.provider,
                value,
                path: format!("{}[{i}]", self.path),
            })
            .collect())
    }

    fn key(&self, value: &'a Value, key: &str) -> At<'a> {
        let path = if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        };
        At {
            provider: self.provider,
            value,
            path,
        }
    }
}

/// The JSON kind of a value, for messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
