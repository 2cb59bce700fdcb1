use dsh_tools::tool;

const MAX: u32 = 50;

/// List issues.
#[tool]
async fn list(
    /// Results per page.
    #[schema(range(1..=MAX))]
    per_page: u32,
) {
    let _ = per_page;
}

fn main() {}
