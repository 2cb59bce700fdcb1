//! The stdio transport owns the process's stdout.
//!
//! Over stdio, stdout carries the protocol's frames; a line that anything else in the process
//! prints there (a tool's `println!`, a host's debug output, a dependency's banner) would
//! corrupt the stream and the client would drop the session. So serving over stdio first moves
//! the protocol to a duplicate of stdout's descriptor and points descriptor 1 at stderr:
//! whatever else prints to stdout from then on appears on stderr, and the frames stay whole.
//! (Unix; elsewhere the frames go to stdout as it is.)

use tokio::io::AsyncWrite;

/// Takes the process's stdout for the protocol (see the module docs).
#[cfg(unix)]
pub(super) fn claim_stdout() -> std::io::Result<impl AsyncWrite + Send + Unpin + 'static> {
    use std::io::Write as _;
    use std::os::fd::AsFd as _;
    // What was printed before the claim still goes to the real stdout, ahead of any frame.
    std::io::stdout().lock().flush()?;
    let protocol = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}

/// Takes the process's stdout for the protocol (see the module docs).
#[cfg(not(unix))]
pub(super) fn claim_stdout() -> std::io::Result<impl AsyncWrite + Send + Unpin + 'static> {
    Ok(tokio::io::stdout())
}
