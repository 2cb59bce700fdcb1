use dsh_tools::tool;

/// List issues.
#[tool]
async fn list(
    /// Results per page.
    #[schema(rnage(min = 1, max = 100))]
    per_page: u32,
) {
    let _ = per_page;
}

fn main() {}
