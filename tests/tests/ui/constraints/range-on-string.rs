use dsh_tools::tool;

/// Search.
#[tool]
async fn search(
    /// The query.
    #[schema(range(min = 1))]
    query: String,
) {
    let _ = query;
}

fn main() {
    let _ = search::definition();
}
