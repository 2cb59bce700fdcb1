//! Driving one program: evaluate the stripped wrapper, then loop — run the pending jobs; if the
//! program's promise settled, convert its completion; else poll the binding calls in flight;
//! when nothing can make progress, park until a call's waker or a stop wakes the thread.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Ctx, Value};

use crate::runtime::{CodeErrorKind, CodeRunError};

use super::bindings::{self, RunState};
use super::convert::{self, ToJsonError};
use super::cpu;
use super::errors::{self, Budgets, PROGRAM_FILE};
use crate::sandbox::calls::ThreadWaker;
use crate::sandbox::shared::{Outcome, Shared, Stop};
use crate::sandbox::supervise::WallClock;

/// Busy time: time spent running JavaScript, not time spent waiting for the host.
#[derive(Default)]
pub(crate) struct Clock {
    busy: Cell<Duration>,
    since: Cell<Option<Instant>>,
}

impl Clock {
    fn busy(&self, now: Instant) -> Duration {
        self.busy.get() + self.since.get().map_or(Duration::ZERO, |since| now - since)
    }

    pub(crate) fn pause(&self) {
        if let Some(since) = self.since.take() {
            self.busy.set(self.busy.get() + since.elapsed());
        }
    }

    pub(crate) fn resume(&self) {
        self.since.set(Some(Instant::now()));
    }
}

/// What the interrupt handler checks during a run.
pub(crate) struct Watch {
    pub(crate) shared: Arc<Shared>,
    pub(crate) clock: Rc<Clock>,
    pub(crate) cpu: CpuBudget,
    pub(crate) wall: WallClock,
}

/// The compute budget: CPU time of the sandbox thread since the run started (see [`cpu`]).
pub(crate) struct CpuBudget {
    budget: Duration,
    /// The thread's CPU time when the run started (`None`: not measurable here, busy wall time
    /// is the measure).
    start: Option<Duration>,
    /// Busy wall time below which the budget cannot be spent yet.
    next_check: Cell<Duration>,
    /// Time this thread spent polling host work (tool calls run through the pipeline): not
    /// the program's. Wall time, so a preemption inside a poll is excluded too (lenient).
    host: Cell<Duration>,
}

impl CpuBudget {
    /// A budget starting now, on the sandbox thread.
    pub(crate) fn start(budget: Duration) -> Self {
        Self {
            budget,
            start: cpu::thread_time(),
            next_check: Cell::new(budget),
            host: Cell::new(Duration::ZERO),
        }
    }

    /// Excludes `spent` (time spent running host work on this thread) from the program's use.
    pub(crate) fn exclude(&self, spent: Duration) {
        self.host.set(self.host.get() + spent);
    }

    /// Whether the program has used its budget, given its busy wall time so far.
    fn spent(&self, busy: Duration) -> bool {
        if busy <= self.next_check.get() {
            return false;
        }
        let used = match (self.start, cpu::thread_time()) {
            (Some(start), Some(now)) => now.saturating_sub(start).saturating_sub(self.host.get()),
            _ => busy,
        };
        if used > self.budget {
            return true;
        }
        // CPU time cannot grow faster than busy wall time.
        self.next_check.set(busy + (self.budget - used));
        false
    }
}

impl Watch {
    /// Whether the run must stop now (and records why).
    pub(crate) fn over_budget(&self) -> bool {
        if self.shared.stopped().is_some() {
            return true;
        }
        if self.cpu.spent(self.clock.busy(Instant::now())) {
            self.shared.stop(Stop::Cpu);
            return true;
        }
        if self.wall.expired() {
            self.shared.stop(Stop::Wall);
            return true;
        }
        false
    }
}

/// An engine operation failed: a program exception, a stop, or an allocation failure.
pub(crate) fn failure<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    budgets: Budgets,
    error: rquickjs::Error,
) -> Outcome {
    if state.shared.stopped().is_some() {
        let _ = ctx.catch();
        return Outcome::Stopped;
    }
    match error {
        rquickjs::Error::Exception => {
            let thrown = ctx.catch();
            if state.shared.stopped().is_some() {
                return Outcome::Stopped;
            }
            Outcome::Error(errors::classify(ctx, state, budgets, thrown))
        }
        rquickjs::Error::Allocation => Outcome::Error(errors::memory_limit(budgets)),
        other => Outcome::Error(CodeRunError {
            kind: CodeErrorKind::WorkerExit,
            message: format!("sandbox failure: {other}"),
        }),
    }
}

fn completion<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    budgets: Budgets,
    value: Value<'js>,
) -> Outcome {
    let Some(env) = state.env() else {
        return Outcome::Stopped;
    };
    let invalid = |message: String| {
        Outcome::Error(CodeRunError {
            kind: CodeErrorKind::InvalidOutput,
            message,
        })
    };
    match convert::to_json(ctx, &env, value, state.max_value_depth) {
        Ok(value) => Outcome::Value(value),
        Err(ToJsonError::Lossy { .. } | ToJsonError::TooDeep) => {
            invalid("program completion must be lossless JSON".to_owned())
        }
        Err(ToJsonError::Threw(thrown)) => invalid(format!(
            "program completion must be lossless JSON: {}",
            errors::message_of(&env, thrown)
        )),
        Err(ToJsonError::Fatal(error)) => failure(ctx, state, budgets, error),
    }
}

/// Runs the stripped script to completion (the globals are installed).
pub(crate) fn drive<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    script: &str,
    watch: &Watch,
    waker: &ThreadWaker,
    budgets: Budgets,
) -> Outcome {
    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(PROGRAM_FILE.to_owned());
    let main: Value<'js> = match ctx.eval_with_options(script, options) {
        Ok(main) => main,
        Err(error) => return failure(ctx, state, budgets, error),
    };
    let Some(main) = main.into_function() else {
        return Outcome::Error(CodeRunError {
            kind: CodeErrorKind::Exception,
            message: "program must be the body of an async function".to_owned(),
        });
    };
    let promise = match main.call::<_, Value<'js>>(()) {
        Ok(result) => match result.into_promise() {
            Some(promise) => promise,
            None => return Outcome::Value(None),
        },
        Err(error) => return failure(ctx, state, budgets, error),
    };
    let (mut polled, mut ready) = (Vec::new(), Vec::new());
    loop {
        let mut jobs = 0u32;
        loop {
            if state.shared.stopped().is_some() {
                return Outcome::Stopped;
            }
            if !ctx.execute_pending_job() {
                break;
            }
            jobs = jobs.wrapping_add(1);
            if jobs.is_multiple_of(64) && watch.over_budget() {
                return Outcome::Stopped;
            }
        }
        match promise.state() {
            PromiseState::Resolved => {
                return match promise.result::<Value<'js>>() {
                    Some(Ok(value)) => completion(ctx, state, budgets, value),
                    Some(Err(error)) => failure(ctx, state, budgets, error),
                    None => Outcome::Stopped,
                };
            }
            PromiseState::Rejected => {
                let error = match promise.result::<Value<'js>>() {
                    Some(Err(error)) => error,
                    _ => rquickjs::Error::Unknown,
                };
                return failure(ctx, state, budgets, error);
            }
            PromiseState::Pending => {}
        }
        // Host code (binding futures, the host's work): charged to neither the program's busy
        // time nor its CPU budget.
        watch.clock.pause();
        let polling = Instant::now();
        state.calls.borrow_mut().poll_ready(&mut polled);
        state
            .schedule
            .borrow_mut()
            .release(&mut polled, state.submitted(), &mut ready);
        watch.cpu.exclude(polling.elapsed());
        if ready.is_empty() {
            if state.shared.stopped().is_some() {
                return Outcome::Stopped;
            }
            waker.park();
        }
        watch.clock.resume();
        for (id, result) in ready.drain(..) {
            if let Err(error) = bindings::settle(ctx, state, id, result) {
                return failure(ctx, state, budgets, error);
            }
        }
        if watch.over_budget() {
            return Outcome::Stopped;
        }
    }
}
