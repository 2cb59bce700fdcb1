//! Ctrl-C while a program or a call runs: the run's cancellation fires, so the pipeline cancels
//! the program and its in-flight tools (`bash` kills its command), and the command goes on (the
//! REPL back at its prompt, `run` and `call` printing the cancelled result). A second Ctrl-C
//! before the run has wound down ends the process at once (exit status 130).
//!
//! While the line editor reads (a REPL prompt, an approval prompt) the terminal is in raw mode
//! and Ctrl-C reaches the editor as a key, not as `SIGINT`: the approval prompt turns it into
//! [`raise`].

use std::future::Future;
use std::sync::LazyLock;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Raised by an interactive prompt that read Ctrl-C.
static RAISED: LazyLock<Notify> = LazyLock::new(Notify::new);

/// Interrupts the running command as Ctrl-C outside a prompt does.
pub(crate) fn raise() {
    RAISED.notify_waiters();
}

/// Runs `work` (whose cancellation is `cancel`); Ctrl-C (or [`raise`]) cancels it and waits for
/// it to wind down.
pub(crate) async fn cancellable<F: Future>(cancel: &CancellationToken, work: F) -> F::Output {
    let mut interrupts = Interrupts::listen();
    tokio::pin!(work);
    loop {
        tokio::select! {
            output = &mut work => return output,
            () = interrupts.next() => {
                if cancel.is_cancelled() {
                    crate::progress::Screen::stderr().eprintln("dsh-tools: interrupted again; quitting");
                    std::process::exit(130);
                }
                crate::progress::Screen::stderr()
                    .eprintln("dsh-tools: cancelling (Ctrl-C again to quit)");
                cancel.cancel();
            }
        }
    }
}

/// `SIGINT` and [`raise`], as one stream.
struct Interrupts {
    #[cfg(unix)]
    sigint: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    /// Starts listening now: a Ctrl-C from here on is caught, not fatal.
    fn listen() -> Self {
        Self {
            #[cfg(unix)]
            sigint: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok(),
        }
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        let signal = async {
            match &mut self.sigint {
                Some(sigint) => {
                    sigint.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let signal = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        tokio::select! {
            () = signal => {}
            () = RAISED.notified() => {}
        }
    }
}
