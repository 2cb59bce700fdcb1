use dsh_tools::tool;

struct Workspace;

impl Workspace {
    /// Search the workspace.
    #[tool]
    async fn grep(&self, pattern: String) -> Vec<String> {
        vec![pattern]
    }
}

fn main() {}
