//! A `#[tool_set]` whose methods use every parameter kind.

use std::sync::Arc;

use dsh_tools::{State, ToolRunContext, ToolSet, tool_set};

/// Host state.
pub struct Limits;

/// The workspace.
pub struct Workspace {
    root: String,
}

#[tool_set]
impl Workspace {
    /// Read a file.
    #[dsh_tools::tool(present_call = read_card)]
    async fn read(&self, path: String, _ctx: ToolRunContext, _limits: State<Limits>) -> Result<String, String> {
        Ok(format!("{}/{path}", self.root))
    }

    /// Not a tool.
    pub fn root(&self) -> &str {
        &self.root
    }
}

fn read_card(args: &workspace_tools::ReadArgs) -> Option<dsh_tools::ToolCallView> {
    Some(dsh_tools::ToolCallView::generic(args.path.clone()))
}

fn main() {
    let ws = Arc::new(Workspace { root: "/".into() });
    assert_eq!(ws.root(), "/");
    let tools = ws.tool_definitions().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name(), "read");
}
