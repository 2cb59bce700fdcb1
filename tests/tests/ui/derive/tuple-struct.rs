use dsh_tools::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
struct Range(u32, u32);

fn main() {}
