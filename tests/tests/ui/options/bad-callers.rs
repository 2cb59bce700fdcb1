use dsh_tools::tool;

/// Read a file.
#[tool(callers = "nativ")]
async fn read_file(path: String) -> String {
    path
}

fn main() {}
