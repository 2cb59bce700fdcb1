use dsh_tools::tool;

/// Fetch a page.
#[tool]
async fn fetch(
    /// The page.
    #[schema(format = "iri")]
    page: String,
) {
    let _ = page;
}

fn main() {}
