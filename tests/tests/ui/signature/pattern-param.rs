use dsh_tools::tool;

/// Add a pair.
#[tool]
async fn add((a, b): (u8, u8)) -> u16 {
    u16::from(a) + u16::from(b)
}

fn main() {}
