use dsh_tools::tool;

#[tool(timeout_ms = 100)]
async fn read_file(
    /// The file to read.
    path: String,
) -> String {
    path
}

fn main() {}
