use dsh_tools::tool;

/// Read a file.
#[tool(max_result_tokens = 0)]
async fn read_file(path: String) -> String {
    path
}

fn main() {}
