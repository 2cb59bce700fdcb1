//! Diagnostics on stderr: a `tracing` subscriber honouring `RUST_LOG`, and a panic hook that
//! never prints a panic's message (it may quote tool arguments).
//!
//! Without `RUST_LOG` only `mcp serve` logs, at `warn` (accept failures, timeouts); with it,
//! `RUST_LOG` decides, except that rmcp stays at `info` unless `RUST_LOG` names it: rmcp's
//! `debug` and `trace` events carry whole JSON-RPC messages, tool arguments included.

use std::panic::PanicHookInfo;

use tracing_subscriber::EnvFilter;

/// Installs the subscriber (`default`: the filter without `RUST_LOG`) and the panic hook.
pub(crate) fn init(default: &str) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(directives) if directives.contains("rmcp") => directives,
        Ok(directives) if !directives.trim().is_empty() => format!("{directives},rmcp=info"),
        _ => default.to_owned(),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    std::panic::set_hook(Box::new(report_panic));
}

/// Where a thread panicked, never what it said: the message of a panic in a tool (or in a
/// library a tool calls, e.g. a pattern compiler) can quote the tool's arguments. The message
/// goes to `tracing` at `debug` (off unless `RUST_LOG` asks for it).
fn report_panic(info: &PanicHookInfo<'_>) {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed>");
    let location = info
        .location()
        .map_or_else(String::new, |at| format!(" at {}:{}", at.file(), at.line()));
    eprintln!("dsh-tools: thread '{name}' panicked{location} (message withheld)");
    if let Some(message) = info.payload_as_str() {
        tracing::debug!(target: "dsh_tools::panic", %message, "panic message");
    }
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        eprintln!("{backtrace}");
    }
}
