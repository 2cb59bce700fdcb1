//! A tool's question as a server-to-client request, in a session that has them (before
//! 2026-07-28): `elicitation/create`, `sampling/createMessage`, `roots/list`.

use dsh_tools::exec::{AskError, InputKind, InputRequest};
use rmcp::service::{Peer, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Sends `request` to the session's client and waits for its result (as MCP writes it).
pub(crate) async fn send(peer: Peer<RoleServer>, request: InputRequest) -> Result<Value, AskError> {
    let kind = request.kind;
    let failed = |reason: String| AskError::Failed { kind, reason };
    match kind {
        InputKind::Elicitation => {
            let params = parse(kind, request.params)?;
            answer(
                peer.create_elicitation(params)
                    .await
                    .map_err(|e| failed(e.to_string()))?,
            )
        }
        InputKind::Sampling => {
            let params = parse(kind, request.params)?;
            #[expect(
                deprecated,
                reason = "deprecated by SEP-2577 for later revisions; the sessions here have it"
            )]
            let result = peer.create_message(params).await;
            answer(result.map_err(|e| failed(e.to_string()))?)
        }
        InputKind::Roots => {
            #[expect(
                deprecated,
                reason = "deprecated by SEP-2577 for later revisions; the sessions here have it"
            )]
            let result = peer.list_roots().await;
            answer(result.map_err(|e| failed(e.to_string()))?)
        }
    }
}

/// The request's parameters as rmcp's type for them.
fn parse<T: DeserializeOwned>(kind: InputKind, params: Value) -> Result<T, AskError> {
    serde_json::from_value(params).map_err(|e| AskError::Failed {
        kind,
        reason: format!("the request's parameters are invalid: {e}"),
    })
}

fn answer(result: impl Serialize) -> Result<Value, AskError> {
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}
