use dsh_tools::tool;

/// Read a file.
#[tool(name = "read", name = "read_file")]
async fn read_file(path: String) -> String {
    path
}

fn main() {}
