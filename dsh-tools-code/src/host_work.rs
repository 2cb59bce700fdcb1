//! Host work a run needs polled while its program runs, shareable between the host and the
//! runtime's own thread.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, TryLockError};
use std::task::{Context, Poll};

use dsh_tools::definition::BoxFuture;

/// Work the host needs polled while a program runs — for `run_code`, the sub-call lane: the
/// scheduler that runs each binding call through the pipeline and commits it.
///
/// A runtime that reports [`CodeRuntime::polls_host_work`](super::CodeRuntime::polls_host_work)
/// polls it on its own thread whenever the program waits for its bindings, so a binding call
/// that completes at once costs no cross-thread hand-off. Once the run is over the host takes
/// the unfinished rest back ([`HostWork::take`]) and drives it to the end.
///
/// ```
/// use std::task::{Context, Poll, Waker};
/// use dsh_tools_runtime::code::HostWork;
///
/// let work = HostWork::new(async {});
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(work.poll(&mut cx).is_ready());
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(work.take().await.is_none(), "finished work is gone");
/// # });
/// ```
#[derive(Clone)]
pub struct HostWork(Arc<Mutex<Option<BoxFuture<'static, ()>>>>);

impl fmt::Debug for HostWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostWork").finish_non_exhaustive()
    }
}

impl HostWork {
    /// Wraps `work`.
    pub fn new(work: impl Future<Output = ()> + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(Some(Box::pin(work)))))
    }

    /// Polls the work once. `Ready` when it has finished (or was taken back, or panicked: a
    /// panic is contained and ends the work). `Pending` also when another thread is polling it
    /// right now.
    pub fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut slot = match self.0.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return Poll::Pending,
        };
        let Some(work) = slot.as_mut() else {
            return Poll::Ready(());
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) | Err(_) => {
                *slot = None;
                Poll::Ready(())
            }
        }
    }

    /// Takes the unfinished work back (`None` once it finished), waiting while another thread
    /// is in the middle of polling it.
    pub async fn take(&self) -> Option<BoxFuture<'static, ()>> {
        loop {
            let taken = match self.0.try_lock() {
                Ok(mut slot) => Some(slot.take()),
                Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner().take()),
                Err(TryLockError::WouldBlock) => None,
            };
            match taken {
                Some(work) => return work,
                None => tokio::task::yield_now().await,
            }
        }
    }
}
