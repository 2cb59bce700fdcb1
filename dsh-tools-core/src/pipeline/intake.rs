//! A streaming lane's intake: where a Code Mode run's bindings submit sub-calls and the lane's
//! scheduler takes them. Both sides run on the thread that drives the run, in turn; a queue
//! under a lock, with the lane's waker, costs a fraction of a channel's send and receive.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Waker};

use super::CallInput;

/// The intake of one lane (see the module docs).
#[derive(Default)]
pub struct LaneIntake(Mutex<State>);

#[derive(Default)]
struct State {
    queue: VecDeque<CallInput>,
    /// Nothing more is accepted, and what was not started is abandoned: the run is over.
    closed: bool,
    /// The lane's, to wake when an input arrives or the intake closes.
    waker: Option<Waker>,
}

/// What [`LaneIntake::take`] found.
pub(crate) struct Taken {
    /// How many inputs it moved.
    pub(crate) inputs: usize,
    /// Whether the intake is closed: nothing more will come, and the lane abandons every call
    /// it has not started.
    pub(crate) closed: bool,
}

impl LaneIntake {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Submits `input`; `false` when the intake is closed (the input is dropped, and will
    /// never be reported on: the submitter answers for it).
    #[inline]
    pub fn submit(&self, input: CallInput) -> bool {
        let mut state = self.state();
        if state.closed {
            return false;
        }
        state.queue.push_back(input);
        if let Some(waker) = &state.waker {
            waker.wake_by_ref();
        }
        true
    }

    /// Accepts nothing more: the run is over, and the lane abandons what it has not started
    /// (what was submitted is still taken, to be abandoned).
    pub fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        if let Some(waker) = state.waker.take() {
            drop(state);
            waker.wake();
        }
    }

    /// Moves every submitted input to `into`, and registers `cx`'s waker for what comes next.
    pub(crate) fn take(&self, cx: &mut Context<'_>, into: &mut VecDeque<CallInput>) -> Taken {
        let mut state = self.state();
        let inputs = state.queue.len();
        into.append(&mut state.queue);
        if !state
            .waker
            .as_ref()
            .is_some_and(|waker| waker.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Taken {
            inputs,
            closed: state.closed,
        }
    }
}
