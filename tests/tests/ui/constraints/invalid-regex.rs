use dsh_tools::tool;

/// Open a repository.
#[tool]
async fn open(
    /// `owner/name`.
    #[schema(regex(pattern = r"^[\w.-]+/(unclosed$"))]
    repo: String,
) {
    let _ = repo;
}

fn main() {}
