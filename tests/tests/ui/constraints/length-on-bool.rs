use dsh_tools::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub struct Flags {
    #[schema(length(max = 3))]
    pub verbose: bool,
}

fn main() {
    let _ = <Flags as ToolSchema>::SCHEMA;
}
