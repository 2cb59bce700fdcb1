use dsh_tools::{ToolSchema, tool};
use serde::Deserialize;

/// The user's own `Args`.
#[derive(Deserialize, ToolSchema)]
struct Args {
    verbose: bool,
}

/// Run with options.
#[tool]
async fn run(args: Args) -> bool {
    args.verbose
}

fn main() {}
