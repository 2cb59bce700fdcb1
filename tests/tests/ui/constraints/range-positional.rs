use dsh_tools::tool;

/// List issues.
#[tool]
async fn list(
    /// Results per page.
    #[schema(range(1, 50))]
    per_page: u32,
) {
    let _ = per_page;
}

fn main() {}
