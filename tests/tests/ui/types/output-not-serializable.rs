use dsh_tools::tool;

struct Handle {
    fd: i32,
}

/// Open a file.
#[tool]
async fn open(path: String) -> Result<Handle, String> {
    Ok(Handle { fd: path.len() as i32 })
}

fn main() {}
