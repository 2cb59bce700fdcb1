use dsh_tools::ToolSchema;
use serde::Deserialize;

#[derive(Deserialize, ToolSchema)]
pub struct Query {
    #[validate(length(min = 10, max = 2))]
    pub text: String,
}

fn main() {}
