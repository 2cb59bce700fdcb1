//! A stateful tool set: `#[tool_set]` on an `impl` whose methods share the struct's state.
//!
//! ```sh
//! cargo run -p dsh-tools-examples --example stateful_tool_set
//! ```
//!
//! Every method marked `#[tool]` becomes a tool bound to one shared `Arc<Notes>`; the registry
//! keeps the set alive while its tools are registered.

use std::sync::{Arc, Mutex};

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{tool, tool_set};
use dsh_tools_runtime::ToolRegistry;
use serde_json::json;

/// An in-memory notebook.
#[derive(Default)]
struct Notes {
    entries: Mutex<Vec<String>>,
}

#[tool_set]
impl Notes {
    /// Add a note; returns how many notes there are now.
    #[tool]
    async fn add_note(
        &self,
        /// The note's text.
        text: String,
    ) -> Result<usize, String> {
        if text.trim().is_empty() {
            return Err("a note needs some text".to_owned());
        }
        let mut entries = self.entries.lock().map_err(|_| "notebook unavailable")?;
        entries.push(text);
        Ok(entries.len())
    }

    /// List the notes, oldest first.
    #[tool(concurrency_safe = true, read_only)]
    async fn list_notes(&self) -> Result<Vec<String>, String> {
        let entries = self.entries.lock().map_err(|_| "notebook unavailable")?;
        Ok(entries.clone())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    registry
        .register_set(Arc::new(Notes::default()))
        .expect("registered")
        .keep();
    for (id, name, args) in [
        ("c1", "add_note", json!({"text": "buy milk"})),
        ("c2", "add_note", json!({"text": "call Ana"})),
        ("c3", "add_note", json!({"text": "  "})),
        ("c4", "list_notes", json!({})),
    ] {
        let result = registry
            .execute(ToolExecutionInput::new(id, name, args))
            .await;
        println!(
            "{name}: {}",
            result.content()[0].as_text().unwrap_or_default()
        );
    }
}
