//! The wall clock of one program run, as the host sees it: host code pauses it while the program
//! waits on something that is not the program's doing — a person answering an approval prompt —
//! so a slow answer cannot spend the program's time budget (`docs/CONTRACTS.md`, "Stages",
//! stage 5, and "The QuickJS sandbox").

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// A pausable run clock. Clones share one clock.
///
/// Pauses nest: the clock runs again when the last [`ClockPause`] is dropped.
///
/// ```
/// use std::time::{Duration, Instant};
/// use dsh_tools_runtime::code::RunClock;
///
/// let clock = RunClock::new();
/// let start = Instant::now();
/// assert!(!clock.is_paused());
/// {
///     let _waiting_for_a_person = clock.pause();
///     assert!(clock.is_paused());
/// }
/// assert!(!clock.is_paused());
/// // The deadline moved by exactly the paused time.
/// let budget = Duration::from_secs(1);
/// assert_eq!(clock.deadline(start, budget), start + budget + clock.paused());
/// ```
#[derive(Clone, Default)]
pub struct RunClock {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<PauseState>,
    /// Woken on every pause and every resume.
    changed: Notify,
}

#[derive(Default, Clone, Copy)]
struct PauseState {
    /// How many pauses are open.
    open: usize,
    /// When the first open pause began.
    since: Option<Instant>,
    /// Time spent paused by pauses that have ended.
    total: Duration,
}

impl PauseState {
    fn paused(&self, now: Instant) -> Duration {
        self.total + self.since.map_or(Duration::ZERO, |since| now - since)
    }
}

impl std::fmt::Debug for RunClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state();
        f.debug_struct("RunClock")
            .field("paused", &(state.open > 0))
            .field("paused_for", &state.paused(Instant::now()))
            .finish()
    }
}

impl RunClock {
    /// A running clock.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> PauseState {
        *self
            .inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn edit(&self, edit: impl FnOnce(&mut PauseState)) {
        edit(
            &mut self
                .inner
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.inner.changed.notify_waiters();
    }

    /// Stops the clock until the returned guard (and every other open pause) is dropped.
    pub fn pause(&self) -> ClockPause {
        self.edit(|state| {
            if state.open == 0 {
                state.since = Some(Instant::now());
            }
            state.open += 1;
        });
        ClockPause {
            clock: self.clone(),
        }
    }

    /// Whether a pause is open.
    pub fn is_paused(&self) -> bool {
        self.state().open > 0
    }

    /// The time spent paused so far, an open pause included.
    pub fn paused(&self) -> Duration {
        self.state().paused(Instant::now())
    }

    /// When a run that started at `start` with a wall-clock `budget` runs out, given the pauses
    /// so far (an open pause keeps moving it).
    pub fn deadline(&self, start: Instant, budget: Duration) -> Instant {
        start + budget + self.paused()
    }

    /// Whether that deadline has passed. Never while a pause is open.
    pub fn expired(&self, start: Instant, budget: Duration) -> bool {
        let now = Instant::now();
        let state = self.state();
        state.open == 0 && now >= start + budget + state.paused(now)
    }

    /// Completes when the run that started at `start` has used its `budget`, not counting the
    /// time spent paused.
    pub async fn elapsed(&self, start: Instant, budget: Duration) {
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            // Registered before reading the state, so a change in between still wakes us.
            changed.as_mut().enable();
            let state = self.state();
            if state.open > 0 {
                changed.await;
                continue;
            }
            let deadline = start + budget + state.total;
            if Instant::now() >= deadline {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline.into()) => {}
                () = changed => {}
            }
        }
    }
}

/// An open pause of a [`RunClock`]; the clock runs again when every pause is dropped.
#[must_use = "the clock runs again as soon as the pause is dropped"]
#[derive(Debug)]
pub struct ClockPause {
    clock: RunClock,
}

impl Drop for ClockPause {
    fn drop(&mut self) {
        self.clock.edit(|state| {
            state.open -= 1;
            if state.open == 0
                && let Some(since) = state.since.take()
            {
                state.total += since.elapsed();
            }
        });
    }
}
