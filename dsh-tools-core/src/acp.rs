//! Tool cards as Agent Client Protocol session updates (`docs/CONTRACTS.md`, "Cards over ACP"):
//! a call's card ([`ToolCallView`]) becomes a `tool_call`, its result's card
//! ([`ToolResultView`]) a `tool_call_update`, in the types of the `agent-client-protocol` crate
//! family (re-exported as [`schema`]).
//!
//! - Diff cards become ACP `diff` content; `locations` are forwarded (paths made absolute
//!   against the session's working directory, as ACP wants them).
//! - Terminal cards follow ACP's terminal convention: a `terminal` content item whose id is the
//!   call id, with `_meta.terminal_info` (`terminal_id`, `cwd`) on the call and
//!   `_meta.terminal_output` / `_meta.terminal_exit` on the result. For clients that do not
//!   render terminals ([`AcpCards::terminals`] off) the output is a fenced `console` block.
//! - File cards' titles are made relative to the session's working directory.
//! - A tool without a card gets the generic one: its name as title, the arguments as raw input,
//!   the result content as text.
//!
//! ```
//! use dsh_tools::ToolDefinition;
//! use dsh_tools::exec::ToolExecutionResult;
//! use dsh_tools::present::{ToolCallView, ToolKind};
//! use dsh_tools_runtime::acp::AcpCards;
//! use serde_json::json;
//!
//! let read = ToolDefinition::builder("read_file").description("Read a file.")
//!     .present_call(|args| Some(ToolCallView::Generic {
//!         title: format!("Read {}", args["path"].as_str().unwrap_or("?")),
//!         kind: Some(ToolKind::Read), raw_input: None, content: None, locations: None,
//!     }))
//!     .execute(|_, _| async { Ok(json!("fn main() {}")) }).build().unwrap();
//! let cards = AcpCards::new("/work/project");
//! let call = cards.tool_call("call-1", Some(&read), &json!({"path": "/work/project/src/main.rs"}));
//! assert_eq!(serde_json::to_value(&call).unwrap(), json!({
//!     "toolCallId": "call-1", "title": "Read src/main.rs", "kind": "read",
//!     "rawInput": {"path": "/work/project/src/main.rs"}
//! }));
//! ```

use std::path::{Path, PathBuf};

use dsh_tools::ContentBlock;
use dsh_tools::ToolDefinition;
use dsh_tools::exec::ToolExecutionResult;
use dsh_tools::present::{FileDiff, Location, ToolCallView, ToolKind, ToolResultView};
use serde_json::{Map, Value, json};

/// The ACP types (`agent-client-protocol-schema`, the types crate of the `agent-client-protocol`
/// SDK).
pub use agent_client_protocol_schema as schema;
use agent_client_protocol_schema::v1::{ToolCall, ToolCallUpdate, ToolCallUpdateFields};

/// Maps cards to ACP updates for one session.
#[derive(Debug, Clone)]
pub struct AcpCards {
    cwd: PathBuf,
    terminals: bool,
}

impl AcpCards {
    /// Cards for a session whose working directory is `cwd`; terminals are rendered with ACP's
    /// terminal convention.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            terminals: true,
        }
    }

    /// Whether the client renders terminals (`terminal` content and `_meta.terminal_*`); when
    /// not, terminal output is a fenced `console` text block.
    pub fn terminals(mut self, terminals: bool) -> Self {
        self.terminals = terminals;
        self
    }

    /// The `tool_call` of a call: the tool's call card (or the generic one), status `pending`
    /// (ACP's default, which the wire form leaves out).
    pub fn tool_call(
        &self,
        call_id: &str,
        tool: Option<&ToolDefinition>,
        args: &Value,
    ) -> ToolCall {
        let view = tool.and_then(|t| t.present_call(args));
        let name = tool.map_or("tool", ToolDefinition::name);
        let mut call = Map::new();
        call.insert("toolCallId".into(), call_id.into());
        let mut content = Vec::new();
        let mut meta = None;
        match view {
            None => {
                call.insert("title".into(), name.into());
                call.insert("rawInput".into(), args.clone());
            }
            Some(ToolCallView::Generic {
                title,
                kind,
                raw_input,
                content: blocks,
                locations,
            }) => {
                call.insert("title".into(), self.relative_title(&title).into());
                call.insert("kind".into(), acp_kind(kind.unwrap_or_default()).into());
                call.insert("rawInput".into(), raw_input.unwrap_or_else(|| args.clone()));
                content.extend(blocks.iter().flatten().map(text_content));
                self.insert_locations(&mut call, locations.as_deref().unwrap_or_default());
            }
            Some(ToolCallView::Terminal {
                title,
                description,
                cwd,
            }) => {
                call.insert("title".into(), title.into());
                call.insert("kind".into(), "execute".into());
                call.insert("rawInput".into(), args.clone());
                if let Some(description) = description {
                    content.push(text_content(&ContentBlock::text(description)));
                }
                if self.terminals {
                    content.push(json!({"type": "terminal", "terminalId": call_id}));
                    let cwd = cwd.map_or_else(|| self.cwd.clone(), |c| self.absolute(&c));
                    meta = Some(json!({"terminal_info": {"terminal_id": call_id, "cwd": cwd}}));
                }
            }
            Some(ToolCallView::Diff {
                title,
                diffs,
                locations,
            }) => {
                call.insert("title".into(), self.relative_title(&title).into());
                call.insert("kind".into(), "edit".into());
                call.insert("rawInput".into(), args.clone());
                content.extend(diffs.iter().map(|d| self.diff_content(d)));
                let fallback: Vec<Location> = diffs
                    .iter()
                    .map(|d| Location {
                        path: d.path.clone(),
                        line: None,
                    })
                    .collect();
                self.insert_locations(&mut call, locations.as_deref().unwrap_or(&fallback));
            }
        }
        call.insert("status".into(), "pending".into());
        if !content.is_empty() {
            call.insert("content".into(), content.into());
        }
        if let Some(meta) = meta {
            call.insert("_meta".into(), meta);
        }
        serde_json::from_value(Value::Object(call))
            .unwrap_or_else(|_| ToolCall::new(call_id.to_owned(), name.to_owned()))
    }

    /// The `tool_call_update` of a finished call: status `completed` or `failed`, the result
    /// card's content (or the result content as text), the value (or error) as raw output.
    pub fn tool_call_update(
        &self,
        call_id: &str,
        tool: Option<&ToolDefinition>,
        args: &Value,
        result: &ToolExecutionResult,
    ) -> ToolCallUpdate {
        let durable = result.to_tool_result();
        let view = tool.and_then(|t| t.present_result(args, &durable));
        let mut update = Map::new();
        update.insert("toolCallId".into(), call_id.into());
        let status = if result.is_error() {
            "failed"
        } else {
            "completed"
        };
        update.insert("status".into(), status.into());
        let raw_output = match result {
            ToolExecutionResult::Success(s) => s.value.clone(),
            ToolExecutionResult::Failure(f) => json!({"error": f.error.message()}),
        };
        update.insert("rawOutput".into(), raw_output);
        let plain: Vec<Value> = durable.content.iter().map(text_content).collect();
        let (title, content, meta) = match view {
            None => (None, plain, None),
            Some(ToolResultView::Generic { title, content }) => {
                let content = content.map_or(plain, |c| c.iter().map(text_content).collect());
                (title.map(|t| self.relative_title(&t)), content, None)
            }
            Some(ToolResultView::Diff { title, diffs }) => {
                let content = diffs.iter().map(|d| self.diff_content(d)).collect();
                (title.map(|t| self.relative_title(&t)), content, None)
            }
            Some(ToolResultView::Terminal {
                title,
                output,
                exit_code,
                signal,
            }) => {
                let output = output.unwrap_or_default();
                if self.terminals {
                    let meta = json!({
                        "terminal_output": {"terminal_id": call_id, "data": output},
                        "terminal_exit": {"terminal_id": call_id, "exit_code": exit_code, "signal": signal},
                    });
                    let content = vec![json!({"type": "terminal", "terminalId": call_id})];
                    (title, content, Some(meta))
                } else {
                    let fenced = format!("```console\n{}\n```", output.trim_end_matches('\n'));
                    (title, vec![text_content(&ContentBlock::text(fenced))], None)
                }
            }
            Some(ToolResultView::Read {
                title,
                path,
                offset,
                ..
            }) => {
                let location = Location {
                    path,
                    line: Some(offset),
                };
                self.insert_locations(&mut update, std::slice::from_ref(&location));
                (title.map(|t| self.relative_title(&t)), plain, None)
            }
            // Search and web cards have no ACP counterpart: the result content is the text.
            Some(_) => (None, plain, None),
        };
        if let Some(title) = title {
            update.insert("title".into(), title.into());
        }
        update.insert("content".into(), content.into());
        if let Some(meta) = meta {
            update.insert("_meta".into(), meta);
        }
        serde_json::from_value(Value::Object(update)).unwrap_or_else(|_| {
            ToolCallUpdate::new(call_id.to_owned(), ToolCallUpdateFields::default())
        })
    }

    fn absolute(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// The title with the session's working directory taken off the paths it names.
    fn relative_title(&self, title: &str) -> String {
        let cwd = self.cwd.to_string_lossy();
        let cwd = cwd.trim_end_matches('/');
        if cwd.is_empty() {
            return title.to_owned();
        }
        title.replace(&format!("{cwd}/"), "")
    }

    fn insert_locations(&self, target: &mut Map<String, Value>, locations: &[Location]) {
        if locations.is_empty() {
            return;
        }
        let locations: Vec<Value> = locations
            .iter()
            .map(|l| {
                let mut location = json!({"path": self.absolute(&l.path)});
                if let Some(line) = l.line {
                    location["line"] = line.into();
                }
                location
            })
            .collect();
        target.insert("locations".into(), locations.into());
    }

    fn diff_content(&self, diff: &FileDiff) -> Value {
        json!({
            "type": "diff",
            "path": self.absolute(&diff.path),
            "oldText": diff.old_text,
            "newText": diff.new_text,
        })
    }
}

fn acp_kind(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "execute",
        ToolKind::Fetch => "fetch",
        ToolKind::Other => "other",
    }
}

/// A content block as ACP `content` (text; other blocks as the JSON text of the block).
fn text_content(block: &ContentBlock) -> Value {
    let text = match block {
        ContentBlock::Text { text } | ContentBlock::Reasoning { text } => text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    json!({"type": "content", "content": {"type": "text", "text": text}})
}
