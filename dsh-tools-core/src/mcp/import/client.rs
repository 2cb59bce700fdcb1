//! The client side of an import connection: asks for a re-sync when the server's tool list
//! changes, and passes an older server's questions to the host's input service.
#![allow(
    deprecated,
    reason = "sampling and roots: deprecated by SEP-2577 in later revisions, asked by older servers"
)]

use std::sync::Arc;

use dsh_tools::exec::{HostInput, InputKind, InputRequest};
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, ListRootsResult, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::mcp::progress::ProgressRoutes;
use tokio::sync::Notify;

/// Our `ClientHandler`: it declares the questions (elicitation, sampling, roots) the host's
/// input service answers and passes an older server's requests for them to it;
/// `tools/list_changed` wakes the re-sync worker (several notifications before it runs
/// coalesce into one re-sync).
#[derive(Debug, Clone, Default)]
pub(crate) struct ImportClient {
    pub(crate) list_changed: Arc<Notify>,
    /// Calls waiting for `notifications/progress`.
    pub(crate) progress: ProgressRoutes,
    /// The host's input service when the connection started, if any.
    pub(crate) input: Option<HostInput>,
    /// Kinds declared whatever the host's service answers (the calls' callers answer them).
    pub(crate) declared: Vec<InputKind>,
}

impl ImportClient {
    /// A handler whose questions the host's `input` service answers, declaring those and the
    /// `declared` kinds.
    pub(crate) fn answered_by(input: Option<Arc<HostInput>>, declared: &[InputKind]) -> Self {
        Self {
            input: input.map(|input| (*input).clone()),
            declared: declared.to_vec(),
            ..Self::default()
        }
    }

    /// The capabilities declared: the kinds of question the input service answers and the
    /// declared ones (forms only for elicitation).
    fn capabilities(&self) -> ClientCapabilities {
        let mut declared = Map::new();
        let answers = |kind| {
            self.declared.contains(&kind)
                || self.input.as_ref().is_some_and(|i| i.0.can_answer(kind))
        };
        if answers(InputKind::Elicitation) {
            declared.insert("elicitation".into(), serde_json::json!({"form": {}}));
        }
        for kind in [InputKind::Sampling, InputKind::Roots] {
            if answers(kind) {
                declared.insert(kind.capability().into(), Value::Object(Map::new()));
            }
        }
        serde_json::from_value(Value::Object(declared)).unwrap_or_default()
    }

    /// An older server's request (a server-to-client request during a call), answered by the
    /// input service.
    async fn answer<T: DeserializeOwned>(
        &self,
        kind: InputKind,
        id: String,
        params: Value,
    ) -> Result<T, ErrorData> {
        let Some(input) = &self.input else {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                kind.method(),
                None,
            ));
        };
        let answer = input
            .0
            .ask(&id, InputRequest { kind, params })
            .await
            .map_err(|e| ErrorData::invalid_request(e.to_string(), None))?;
        serde_json::from_value(answer)
            .map_err(|e| ErrorData::internal_error(format!("the answer is malformed: {e}"), None))
    }
}

impl ClientHandler for ImportClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(&params);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(request).unwrap_or_default();
        self.answer(InputKind::Elicitation, context.id.to_string(), params)
            .await
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(request).unwrap_or_default();
        self.answer(InputKind::Sampling, context.id.to_string(), params)
            .await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let params = Value::Object(Map::new());
        self.answer(InputKind::Roots, context.id.to_string(), params)
            .await
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities(),
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(OFFERED_VERSION)
    }
}

/// The version the `initialize` request offers to a server that does not answer
/// `server/discover`: the newest one that has an `initialize` handshake, so a server that
/// speaks it answers with it and an older server answers with its own (`docs/CONTRACTS.md`,
/// "MCP").
pub(crate) const OFFERED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// The newest revision this client speaks: stateless, found by `server/discover`, with the
/// protocol version and capabilities in every request's metadata.
pub(crate) const NEWEST_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// How a connection starts: `server/discover` for [`NEWEST_VERSION`] first; a server that
/// answers it with an error of an older revision (or not at all within rmcp's probe
/// timeout, 10 s) gets the `initialize` handshake with [`OFFERED_VERSION`].
pub(crate) fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![NEWEST_VERSION],
        legacy_version: Some(OFFERED_VERSION),
    }
}

/// Whether the version a server answered is one this client speaks: a known revision no
/// newer than [`NEWEST_VERSION`] (2024-11-05 through 2026-07-28).
pub(crate) fn speaks(version: &ProtocolVersion) -> bool {
    ProtocolVersion::KNOWN_VERSIONS.contains(version) && version.as_str() <= NEWEST_VERSION.as_str()
}
