//! What the sandbox thread and the host side of a run share: the stop flag and the ledger.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;

use serde_json::Value;

use crate::runtime::CodeRunError;

use super::ledger::Ledger;

/// Why a run is being stopped from outside the program's own control flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stop {
    /// The request's cancellation token fired (or the run future was dropped).
    Cancel = 1,
    /// The wall-clock ceiling passed.
    Wall = 2,
    /// The busy-time budget ran out.
    Cpu = 3,
    /// The logs exceeded the output budget.
    Output = 4,
}

/// State shared by the two sides of one run.
#[derive(Debug)]
pub(crate) struct Shared {
    stop: AtomicU8,
    pub(crate) ledger: Mutex<Ledger>,
    /// The sandbox thread running the program, once it picked the run up.
    worker: OnceLock<Thread>,
}

impl Shared {
    pub(crate) fn new(max_output_bytes: usize) -> Self {
        Self {
            stop: AtomicU8::new(0),
            ledger: Mutex::new(Ledger::new(max_output_bytes)),
            worker: OnceLock::new(),
        }
    }

    /// Records the sandbox thread running the program (so a stop can wake it).
    pub(crate) fn set_worker(&self, thread: Thread) {
        let _ = self.worker.set(thread);
    }

    /// Requests a stop and wakes the sandbox thread if it is waiting.
    pub(crate) fn stop_and_wake(&self, reason: Stop) {
        self.stop(reason);
        if let Some(thread) = self.worker.get() {
            thread.unpark();
        }
    }

    /// Requests a stop; the first reason wins.
    pub(crate) fn stop(&self, reason: Stop) {
        let _ = self
            .stop
            .compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The stop reason, if any.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        match self.stop.load(Ordering::Acquire) {
            1 => Some(Stop::Cancel),
            2 => Some(Stop::Wall),
            3 => Some(Stop::Cpu),
            4 => Some(Stop::Output),
            _ => None,
        }
    }

    /// Locks the ledger (a poisoned lock is still usable: the ledger has no invariants a panic
    /// can break halfway).
    pub(crate) fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How the program ended, as the sandbox thread saw it.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The program's promise resolved (`None`: to `undefined`).
    Value(Option<Value>),
    /// The program failed.
    Error(CodeRunError),
    /// The run was stopped ([`Shared::stopped`] says why).
    Stopped,
}
