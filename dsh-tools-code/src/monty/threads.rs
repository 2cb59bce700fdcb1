//! The threads in-process runs use: large stacks, started on demand, a few kept idle.
//!
//! A fresh interpreter costs a few microseconds, a thread with a 64 MiB stack tens of them:
//! threads are reused, interpreters never are (each run builds its own). A thread whose run was
//! abandoned after a stop keeps running it until the interpreter's time budget ends it, then
//! rejoins the pool or exits.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Threads of every in-process Monty pool alive right now (see
/// [`live_threads`](super::live_threads)).
pub(crate) static LIVE: AtomicUsize = AtomicUsize::new(0);

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    /// Waiting threads woken for a queued job that have not taken it yet.
    promised: usize,
    closed: bool,
}

struct Inner {
    stack_bytes: usize,
    keep_idle: usize,
    state: Mutex<State>,
    available: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Closes the pool when the last handle goes: idle threads exit.
struct Handle(Arc<Inner>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.available.notify_all();
    }
}

/// The thread pool of one runtime.
#[derive(Clone)]
pub(crate) struct Threads(Arc<Handle>);

impl std::fmt::Debug for Threads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.0.0.lock();
        f.debug_struct("Threads")
            .field("idle", &state.idle)
            .field("queued", &state.jobs.len())
            .finish()
    }
}

impl Threads {
    pub(crate) fn new(stack_bytes: usize, keep_idle: usize) -> Self {
        Self(Arc::new(Handle(Arc::new(Inner {
            stack_bytes,
            keep_idle,
            state: Mutex::default(),
            available: Condvar::new(),
        }))))
    }

    /// Runs `job` on an idle thread, or on a new one.
    pub(crate) fn submit(&self, job: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let inner = &self.0.0;
        let mut state = inner.lock();
        state.jobs.push_back(Box::new(job));
        if state.idle > state.promised {
            state.promised += 1;
            drop(state);
            inner.available.notify_one();
            return Ok(());
        }
        drop(state);
        let for_thread = inner.clone();
        let spawned = std::thread::Builder::new()
            .name("dsh-monty".to_owned())
            .stack_size(inner.stack_bytes)
            .spawn(move || thread_main(&for_thread));
        match spawned {
            Ok(_) => Ok(()),
            Err(error) => {
                // Nobody will run it: drop it (its reply channel closes with it).
                inner.lock().jobs.pop_back();
                Err(error)
            }
        }
    }
}

struct Alive;

impl Alive {
    fn new() -> Self {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Self
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

fn thread_main(inner: &Arc<Inner>) {
    let _alive = Alive::new();
    loop {
        let job = {
            let mut state = inner.lock();
            loop {
                if let Some(job) = state.jobs.pop_front() {
                    break job;
                }
                if state.closed || state.idle >= inner.keep_idle {
                    return;
                }
                state.idle += 1;
                state = inner
                    .available
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.idle -= 1;
                state.promised = state.promised.saturating_sub(1);
            }
        };
        // A panicking job is its own run's failure (its reply channel closes); the thread
        // carries on.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}
