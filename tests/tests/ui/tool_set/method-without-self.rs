use dsh_tools::{tool, tool_set};

struct Workspace;

#[tool_set]
impl Workspace {
    /// Search the workspace.
    #[tool]
    async fn grep(pattern: String) -> Vec<String> {
        vec![pattern]
    }
}

fn main() {}
