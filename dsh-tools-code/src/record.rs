//! What a program run consumes that does not come from its tools — the seed of `Math.random`,
//! every `Date` read — and the order in which binding results reached it, recorded as the run
//! goes and replayed when a suspended run resumes (see `code::durable`).
//!
//! A runtime that [replays](super::CodeRuntime::replays) reads these sources through the
//! request's [`RunRecord`] and delivers binding results in the recorded rounds; together with
//! the journal of tool results, that makes a re-run of the same program take the same path.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The recorded inputs of one run (serialisable: it travels in a continuation).
///
/// ```
/// use dsh_tools_runtime::code::{RecordedRun, RunRecord};
/// let live = RunRecord::with_seed(7);
/// let first = live.now_ms();
/// live.delivered(1, 1);
/// let recorded = live.snapshot();
/// assert_eq!(recorded, RecordedRun { seed: 7, clock: vec![first], rounds: vec![1] });
///
/// // A replay answers the recorded reads first, then reads the live clock again.
/// let replay = RunRecord::replaying(recorded);
/// assert_eq!(replay.now_ms(), first);
/// assert_eq!(replay.recorded_round(1), Some(1));
/// assert_eq!(replay.replay_rounds(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedRun {
    /// The seed of the run's `Math.random` generator.
    pub seed: u64,
    /// Every `Date` read (`Date.now()`, `new Date()`, `Date()`), in milliseconds since the Unix
    /// epoch, in the order the program made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clock: Vec<f64>,
    /// Per binding call (index = the call's number − 1, in submission order): the delivery
    /// round in which its result reached the program (1-based), or 0 when it never did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<u32>,
}

/// The live record of one run, shared by the host and the runtime (clones share it).
#[derive(Debug, Clone)]
pub struct RunRecord(Arc<Mutex<State>>);

#[derive(Debug)]
struct State {
    recorded: RecordedRun,
    /// The next recorded clock read to answer (reads beyond the recording are live).
    clock_cursor: usize,
    /// How many clock reads the replay answers from the recording.
    replay_clock: usize,
    /// The last round the replay delivers as recorded.
    replay_rounds: u32,
}

impl RunRecord {
    /// A fresh record whose `Math.random` seed comes from the operating system.
    pub fn new() -> Self {
        let mut seed = [0u8; 8];
        // Without OS randomness the run still works: its seed is the clock's nanoseconds.
        if getrandom::fill(&mut seed).is_err() {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            seed = (nanos as u64).to_le_bytes();
        }
        Self::with_seed(u64::from_le_bytes(seed))
    }

    /// A fresh record with this seed.
    pub fn with_seed(seed: u64) -> Self {
        Self::replaying(RecordedRun {
            seed,
            ..RecordedRun::default()
        })
    }

    /// A record that replays `recorded`: its clock reads come back in order, its rounds are
    /// the schedule of the first deliveries; what comes after is live and recorded.
    pub fn replaying(recorded: RecordedRun) -> Self {
        let replay_clock = recorded.clock.len();
        let replay_rounds = recorded.rounds.iter().copied().max().unwrap_or(0);
        Self(Arc::new(Mutex::new(State {
            recorded,
            clock_cursor: 0,
            replay_clock,
            replay_rounds,
        })))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The seed of the run's `Math.random` generator.
    pub fn seed(&self) -> u64 {
        self.state().recorded.seed
    }

    /// The next `Date` read: the recorded one while the replay lasts, then the system clock
    /// (whole milliseconds), recorded.
    pub fn now_ms(&self) -> f64 {
        let mut state = self.state();
        let cursor = state.clock_cursor;
        state.clock_cursor += 1;
        if cursor < state.replay_clock {
            return state.recorded.clock[cursor];
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_millis() as f64);
        state.recorded.clock.push(now);
        now
    }

    /// The recorded delivery round of binding call `call` (1-based, in submission order), if
    /// the recording has one.
    pub fn recorded_round(&self, call: u64) -> Option<u32> {
        let state = self.state();
        let index = usize::try_from(call.checked_sub(1)?).ok()?;
        state
            .recorded
            .rounds
            .get(index)
            .copied()
            .filter(|round| *round > 0 && *round <= state.replay_rounds)
    }

    /// The last round the replay delivers as recorded (0: nothing to replay).
    pub fn replay_rounds(&self) -> u32 {
        self.state().replay_rounds
    }

    /// Records that binding call `call` was delivered in `round`.
    pub fn delivered(&self, call: u64, round: u32) {
        let Some(index) = call.checked_sub(1).and_then(|i| usize::try_from(i).ok()) else {
            return;
        };
        let mut state = self.state();
        let rounds = &mut state.recorded.rounds;
        if rounds.len() <= index {
            rounds.resize(index + 1, 0);
        }
        rounds[index] = round;
    }

    /// What was recorded so far (the replayed part included).
    pub fn snapshot(&self) -> RecordedRun {
        let state = self.state();
        let mut recorded = state.recorded.clone();
        // Recorded reads the replay never reached are not part of this run.
        recorded.clock.truncate(state.clock_cursor);
        recorded
    }
}

impl Default for RunRecord {
    fn default() -> Self {
        Self::new()
    }
}

/// The `Math.random` generator of a recorded run: SplitMix64, 53 random bits per number.
///
/// ```
/// use dsh_tools_runtime::code::SeededRandom;
/// let mut a = SeededRandom::new(42);
/// let mut b = SeededRandom::new(42);
/// let x = a.next_f64();
/// assert!((0.0..1.0).contains(&x));
/// assert_eq!(x, b.next_f64());
/// ```
#[derive(Debug, Clone)]
pub struct SeededRandom(u64);

impl SeededRandom {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next number in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_that_stops_early_keeps_only_the_reads_it_made() {
        let live = RunRecord::with_seed(1);
        let reads: Vec<f64> = (0..3).map(|_| live.now_ms()).collect();
        let replay = RunRecord::replaying(live.snapshot());
        assert_eq!(replay.now_ms(), reads[0]);
        assert_eq!(replay.snapshot().clock, reads[..1]);
    }

    #[test]
    fn rounds_beyond_the_replay_are_live() {
        let record = RunRecord::replaying(RecordedRun {
            seed: 0,
            clock: Vec::new(),
            rounds: vec![1, 2, 0],
        });
        assert_eq!(record.replay_rounds(), 2);
        assert_eq!(record.recorded_round(2), Some(2));
        assert_eq!(record.recorded_round(3), None, "never delivered");
        assert_eq!(record.recorded_round(9), None);
        record.delivered(3, 3);
        assert_eq!(record.snapshot().rounds, [1, 2, 3]);
    }

    #[test]
    fn random_numbers_spread_over_the_unit_interval() {
        let mut random = SeededRandom::new(3);
        let draws: Vec<f64> = (0..1000).map(|_| random.next_f64()).collect();
        assert!(draws.iter().all(|x| (0.0..1.0).contains(x)));
        let low = draws.iter().filter(|x| **x < 0.5).count();
        assert!((400..600).contains(&low), "{low} of 1000 below 0.5");
    }
}
