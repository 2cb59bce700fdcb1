use dsh_tools::tool;

/// Read a file.
#[tool(descripton = "Read a file.", timeout = 5)]
async fn read_file(path: String) -> String {
    path
}

fn main() {}
