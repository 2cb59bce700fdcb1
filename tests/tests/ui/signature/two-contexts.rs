use dsh_tools::{ToolRunContext, tool};

/// Report the call id.
#[tool]
async fn whoami(ctx: ToolRunContext, again: ToolRunContext) -> String {
    format!("{} {}", ctx.call_id(), again.call_id())
}

fn main() {}
