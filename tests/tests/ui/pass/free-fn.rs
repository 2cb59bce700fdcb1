//! Every accepted `#[tool]` signature shape, built and checked at run time.

use std::sync::Arc;

use dsh_tools::{ContentBlock, State, ToolCallView, ToolRunContext, ToolSchema, tool};
use serde::{Deserialize, Serialize};

/// A search hit.
#[derive(Debug, Clone, Serialize, Deserialize, ToolSchema)]
pub struct Hit {
    /// The file.
    pub file: String,
}

/// The host configuration.
pub struct Config;

/// Search files.
#[tool(
    name = "search",
    timeout_ms = 1_000u32,
    concurrency_safe = is_parallel,
    present_call = card,
    render = render,
    presentation_meta = meta,
    read_only,
    open_world = false
)]
pub async fn search_files(
    /// The pattern.
    pattern: String,
    /// Whether calls may overlap.
    parallel: Option<bool>,
    _ctx: ToolRunContext,
    _config: State<Config>,
) -> Result<Vec<Hit>, std::io::Error> {
    let _ = parallel;
    Ok(vec![Hit { file: pattern }])
}

fn is_parallel(args: &search_files::Args) -> bool {
    args.parallel.unwrap_or(false)
}

fn card(args: &search_files::Args) -> Option<ToolCallView> {
    Some(ToolCallView::generic(args.pattern.clone()))
}

fn render(_args: &search_files::Args, hits: &[Hit]) -> Vec<ContentBlock> {
    hits.iter().map(|h| ContentBlock::text(h.file.clone())).collect()
}

fn meta(_args: &search_files::Args, hits: &[Hit]) -> serde_json::Value {
    serde_json::json!(hits.len())
}

/// Return content blocks.
#[tool]
pub(crate) async fn blocks() -> Vec<ContentBlock> {
    Vec::new()
}

/// No output at all.
#[tool(description = "Ping.")]
async fn ping(_ctx: &ToolRunContext) {}

/// Raw identifiers become plain argument names.
#[tool]
async fn r#match(r#type: String) -> String {
    r#type
}

fn main() {
    let search = search_files::definition().unwrap();
    assert_eq!(search.name(), "search");
    assert_eq!(search_files::NAME, "search");
    assert_eq!(search.timeout_ms(), Some(1000));
    assert!(blocks::definition().is_ok());
    assert!(ping::definition().is_ok());
    assert_eq!(r#match::definition().unwrap().name(), "match");
    let _args = search_files::Args { pattern: "p".into(), parallel: None };
    let _ = Arc::new(());
}
