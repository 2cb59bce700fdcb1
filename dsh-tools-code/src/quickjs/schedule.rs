//! When binding results reach the program.
//!
//! Without a record, every result that is ready is delivered at the next poll. With one, each
//! non-empty delivery is a numbered *round* and every delivered call's round is recorded; a
//! replay delivers the recorded calls in their recorded rounds — exactly those calls, together,
//! once all of them are ready — so the program's promise reactions interleave as they did the
//! first time. Results with no recorded round (calls that finished after the recording ended,
//! or calls made after it) wait until the last recorded round has been delivered.
//!
//! If a recorded round cannot form — one of its calls has not even been submitted, and the
//! program, which only runs between deliveries, is waiting — the replay has diverged: the
//! schedule is dropped and everything ready is delivered at once (the host, which knows the
//! journal, reports the divergence).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::record::RunRecord;

/// A binding call's result.
pub(crate) type Settled = (u64, Result<Value, String>);

/// The delivery schedule of one run.
pub(crate) struct Schedule {
    record: Option<RunRecord>,
    /// Ready results waiting for their round, by call id.
    held: BTreeMap<u64, Result<Value, String>>,
    /// Rounds delivered so far.
    round: u32,
    /// The recorded rounds still to replay, by round: their call ids.
    replay: Vec<Vec<u64>>,
}

impl Schedule {
    pub(crate) fn new(record: Option<RunRecord>) -> Self {
        let mut replay: Vec<Vec<u64>> = Vec::new();
        if let Some(record) = &record {
            let recorded = record.snapshot().rounds;
            let rounds = record.replay_rounds() as usize;
            // Every round delivers at least one call: more rounds than calls is no schedule.
            if rounds <= recorded.len() {
                replay = vec![Vec::new(); rounds];
                for (index, round) in recorded.iter().enumerate() {
                    if let Some(due) = (*round as usize)
                        .checked_sub(1)
                        .and_then(|r| replay.get_mut(r))
                    {
                        due.push(index as u64 + 1);
                    }
                }
            }
        }
        Self {
            record,
            held: BTreeMap::new(),
            round: 0,
            replay,
        }
    }

    /// Whether recorded rounds remain to be replayed.
    fn replaying(&self) -> bool {
        (self.round as usize) < self.replay.len()
    }

    /// Moves the results in `polled` into `deliver` (in call order) or holds them;
    /// `submitted` is the highest call id the program has made so far.
    pub(crate) fn release(
        &mut self,
        polled: &mut Vec<Settled>,
        submitted: u64,
        deliver: &mut Vec<Settled>,
    ) {
        let Some(record) = &self.record else {
            deliver.append(polled);
            return;
        };
        self.held.extend(polled.drain(..));
        while self.replaying() && self.replay[self.round as usize].is_empty() {
            self.round += 1;
        }
        if self.replaying() {
            let due = &self.replay[self.round as usize];
            if due.iter().all(|call| self.held.contains_key(call)) {
                for call in due {
                    let result = self.held.remove(call).expect("checked above");
                    deliver.push((*call, result));
                }
                self.round += 1;
                return;
            }
            if due.iter().all(|call| *call <= submitted) {
                return; // a due call is still running: wait for it
            }
            // A due call was never made: the run took another path.
            self.replay.truncate(self.round as usize);
        }
        if self.held.is_empty() {
            return;
        }
        self.round += 1;
        for (call, result) in std::mem::take(&mut self.held) {
            record.delivered(call, self.round);
            deliver.push((call, result));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::RecordedRun;

    fn ok(call: u64) -> Settled {
        (call, Ok(json!(call)))
    }

    fn ids(delivered: &[Settled]) -> Vec<u64> {
        delivered.iter().map(|(id, _)| *id).collect()
    }

    #[test]
    fn without_a_record_everything_ready_is_delivered() {
        let mut schedule = Schedule::new(None);
        let mut deliver = Vec::new();
        schedule.release(&mut vec![ok(2), ok(1)], 2, &mut deliver);
        assert_eq!(ids(&deliver), [2, 1]);
    }

    #[test]
    fn live_rounds_are_recorded() {
        let record = RunRecord::with_seed(0);
        let mut schedule = Schedule::new(Some(record.clone()));
        let mut deliver = Vec::new();
        schedule.release(&mut vec![ok(1), ok(2)], 3, &mut deliver);
        schedule.release(&mut Vec::new(), 3, &mut deliver);
        schedule.release(&mut vec![ok(3)], 3, &mut deliver);
        assert_eq!(ids(&deliver), [1, 2, 3]);
        assert_eq!(record.snapshot().rounds, [1, 1, 2]);
    }

    #[test]
    fn a_replay_delivers_the_recorded_rounds_then_goes_live() {
        let record = RunRecord::replaying(RecordedRun {
            seed: 0,
            clock: Vec::new(),
            rounds: vec![1, 2, 2, 0],
        });
        let mut schedule = Schedule::new(Some(record.clone()));
        let mut deliver = Vec::new();
        // Everything is ready at once, but round 1 is call 1 alone.
        schedule.release(&mut vec![ok(1), ok(2), ok(4)], 2, &mut deliver);
        assert_eq!(ids(&deliver), [1]);
        // Round 2 waits for call 3, which the program has not made yet... then makes.
        deliver.clear();
        schedule.release(&mut Vec::new(), 3, &mut deliver);
        assert!(deliver.is_empty(), "call 3 is running");
        schedule.release(&mut vec![ok(3)], 4, &mut deliver);
        assert_eq!(ids(&deliver), [2, 3]);
        // Call 4 was never delivered the first time: it comes after the replay, live.
        deliver.clear();
        schedule.release(&mut Vec::new(), 4, &mut deliver);
        assert_eq!(ids(&deliver), [4]);
        assert_eq!(record.snapshot().rounds, [1, 2, 2, 3]);
    }

    #[test]
    fn a_round_that_cannot_form_drops_the_schedule() {
        let record = RunRecord::replaying(RecordedRun {
            seed: 0,
            clock: Vec::new(),
            rounds: vec![1, 1],
        });
        let mut schedule = Schedule::new(Some(record));
        let mut deliver = Vec::new();
        // The program waits, having made call 1 only: call 2 will never come.
        schedule.release(&mut vec![ok(1)], 1, &mut deliver);
        assert_eq!(ids(&deliver), [1]);
    }
}
