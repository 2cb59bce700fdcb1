//! Multi round-trip requests (SEP-2322) on the client: a server of 2026-07-28 that answers a
//! `tools/call` with an input-required result gets its questions answered by whoever answers
//! the calling context's questions, and the call is retried with the answers and the state
//! (`docs/CONTRACTS.md`, "MCP").

use std::time::Duration;

use dsh_tools::ToolError;
use dsh_tools::exec::{AskError, InputKind, InputRequest, ToolRunContext};
use rmcp::model::{InputRequiredResult, InputResponses};
use serde_json::Value;

/// How many input-required results one call answers before it fails.
///
/// Every round with questions normally reaches the user, and a tool that needs more than a
/// handful of questions asks them in one round (`inputRequests` is a map); a server still
/// asking after ten rounds is looping, and the user should not be asked forever. Ten is also
/// what rmcp and the other Tier 1 SDKs use (`DEFAULT_MRTR_MAX_ROUNDS`).
pub(crate) const MAX_ROUNDS: u32 = 10;

/// What the next attempt of a call carries: the answers to the last round's questions and its
/// state, both exactly as the server's last result asked (none on the first attempt).
#[derive(Debug, Clone, Default)]
pub(crate) struct Retry {
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

/// Answers the input-required `result` of round `round` (1-based) of `tools/call "raw"` on
/// `server` through `ctx`'s input channel (the MCP caller's, else the host's input service)
/// and returns what the retry carries.
///
/// A result with only a state (the server sheds load) is retried after a short pause that
/// grows with each such round in a row (`state_only`), 50 ms to 250 ms. The call fails when a
/// question cannot be answered (a kind nobody here answers, a malformed question), naming the
/// question; a question the caller answers in a later round of its own call
/// ([`AskError::InputRequired`]) ends the call the same way, as the registry expects.
pub(crate) async fn answer(
    ctx: &ToolRunContext,
    (server, raw): (&str, &str),
    round: u32,
    result: InputRequiredResult,
    state_only: &mut u32,
) -> Result<Retry, ToolError> {
    let requests = result.input_requests.unwrap_or_default();
    if requests.is_empty() {
        if result.request_state.is_none() {
            return Err(ToolError::msg(format!(
                "mcp-client({server}): tools/call \"{raw}\" returned an input-required result \
                 with neither inputRequests nor requestState"
            )));
        }
        let pause = (50u64 << (*state_only).min(3)).min(250);
        *state_only += 1;
        tokio::time::sleep(Duration::from_millis(pause)).await;
        return Ok(Retry {
            input_responses: None,
            request_state: result.request_state,
        });
    }
    *state_only = 0;
    let mut questions = Vec::with_capacity(requests.len());
    for (key, request) in &requests {
        let question = question(request).map_err(|reason| {
            ToolError::msg(format!(
                "mcp-client({server}): tools/call \"{raw}\" asked an invalid question \
                 \"{key}\": {reason}"
            ))
        })?;
        questions.push((format!("{raw}#{round}.{key}"), question));
    }
    let asked = questions
        .iter()
        .map(|(key, question)| (key.as_str(), question.clone()))
        .collect();
    let answers = tokio::select! {
        biased;
        () = ctx.cancellation().cancelled() => return Err(super::call::aborted()),
        answers = ctx.ask_all(asked) => answers,
    };
    let answers = answers.map_err(|error| match error {
        AskError::InputRequired(_) => ToolError::from(error),
        other => ToolError::msg(format!(
            "mcp-client({server}): tools/call \"{raw}\" asks its caller, who cannot answer: \
             {other}"
        )),
    })?;
    Ok(Retry {
        input_responses: Some(requests.into_keys().zip(answers).collect()),
        request_state: result.request_state,
    })
}

/// One of the server's `inputRequests` as the registry's question.
fn question(request: &rmcp::model::InputRequest) -> Result<InputRequest, String> {
    let wire = serde_json::to_value(request).map_err(|e| e.to_string())?;
    let kind = match wire.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => InputKind::Elicitation,
        Some("sampling/createMessage") => InputKind::Sampling,
        Some("roots/list") => InputKind::Roots,
        other => return Err(format!("unsupported method {other:?}")),
    };
    let params = wire
        .get("params")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    Ok(InputRequest { kind, params })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_server_question_keeps_its_method_and_parameters() {
        let wire = json!({"method": "elicitation/create", "params": {
            "message": "Confirm?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        }});
        let request: rmcp::model::InputRequest = serde_json::from_value(wire.clone()).unwrap();
        let asked = question(&request).unwrap();
        assert_eq!(asked.kind, InputKind::Elicitation);
        assert_eq!(asked.params["message"], "Confirm?");
        let roots: rmcp::model::InputRequest =
            serde_json::from_value(json!({"method": "roots/list"})).unwrap();
        assert_eq!(question(&roots).unwrap(), InputRequest::roots());
    }
}
