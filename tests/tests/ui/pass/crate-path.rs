//! `#[tool(crate = "...")]` and `#[tool_set(crate = "...")]` with a renamed facade.

extern crate dsh_tools as tools;

use std::sync::Arc;

use tools::ToolSet as _;

/// Echo a message.
#[tools::tool(crate = "tools")]
async fn echo(message: String) -> String {
    message
}

/// A counter.
struct Counter;

#[tools::tool_set(crate = "tools")]
impl Counter {
    /// Count to one.
    #[tools::tool]
    async fn one(&self) -> u8 {
        1
    }
}

fn main() {
    assert_eq!(echo::definition().unwrap().name(), "echo");
    assert_eq!(Arc::new(Counter).tool_definitions().unwrap().len(), 1);
}
