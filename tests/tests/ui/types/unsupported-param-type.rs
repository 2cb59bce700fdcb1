use dsh_tools::tool;

struct Cursor {
    line: u32,
}

/// Move the cursor.
#[tool]
async fn move_to(cursor: Cursor) -> u32 {
    cursor.line
}

fn main() {}
