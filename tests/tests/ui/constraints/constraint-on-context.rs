use dsh_tools::{ToolRunContext, tool};

/// Ping.
#[tool]
async fn ping(
    /// The host.
    host: String,
    #[schema(length(min = 1))] ctx: ToolRunContext,
) {
    let _ = (host, ctx);
}

fn main() {}
