//! Durable Code Mode: a run that needs a person's approval suspends, and resumes later — in this
//! process or another — by deterministic replay.

#[allow(
    dead_code,
    reason = "the journal is recorded and replayed by the suspension and resume steps"
)]
mod journal;
