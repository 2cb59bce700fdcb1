use dsh_tools::tool;

/// Archive an issue.
#[tool(deferred, pinned)]
async fn archive_issue(id: u64) -> Result<u64, dsh_tools::ToolError> {
    Ok(id)
}

fn main() {}
