//! Recorded runs: `Date` and `Math.random` read the run's record, and a replay of the record
//! gives the program the same clock, the same random numbers and the same delivery rounds.

use std::time::Duration;

use dsh_tools_runtime::code::{CodeRunResult, CodeRuntime, RecordedRun, RunRecord};
use serde_json::{Value, json};

use super::support::*;

/// Reads every recorded source, several times.
const SOURCES: &str = "
const a = Date.now();
const b = new Date().getTime();
const c = Date();
const r = [Math.random(), Math.random(), Math.random()];
return { a, b, c, r };";

async fn run_recorded(
    program: &str,
    bindings: Vec<dsh_tools_runtime::code::BindingNamespace>,
    record: &RunRecord,
) -> CodeRunResult {
    let run = runtime().run(request(program, bindings).with_record(record.clone()));
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run ended")
        .expect("valid bindings")
}

#[tokio::test]
async fn a_replay_reads_the_same_clock_and_random_numbers() {
    let record = RunRecord::new();
    let first = value(&run_recorded(SOURCES, Vec::new(), &record).await).clone();
    let recorded = record.snapshot();
    assert_eq!(recorded.clock.len(), 3, "three clock reads: {recorded:?}");
    assert_eq!(first["a"].as_f64(), Some(recorded.clock[0]));
    assert_eq!(first["b"].as_f64(), Some(recorded.clock[1]));

    // Later, elsewhere: the clock has moved on, the replay has not.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let replay = RunRecord::replaying(recorded.clone());
    let second = value(&run_recorded(SOURCES, Vec::new(), &replay).await).clone();
    assert_eq!(first, second);
    assert_eq!(replay.snapshot(), recorded);

    // Another seed: other numbers.
    let other = RunRecord::with_seed(recorded.seed.wrapping_add(1));
    let third = value(&run_recorded(SOURCES, Vec::new(), &other).await).clone();
    assert_ne!(first["r"], third["r"]);
}

#[tokio::test]
async fn reads_beyond_the_recording_are_live_and_recorded() {
    let recorded = RecordedRun {
        seed: 9,
        clock: vec![1_000.0],
        rounds: Vec::new(),
    };
    let replay = RunRecord::replaying(recorded);
    let result = run_recorded("return [Date.now(), Date.now()];", Vec::new(), &replay).await;
    let reads = value(&result).as_array().expect("an array").clone();
    assert_eq!(reads[0], json!(1000));
    assert!(reads[1].as_f64().expect("a number") > 1_600_000_000_000.0);
    assert_eq!(replay.snapshot().clock.len(), 2);
}

#[tokio::test]
async fn the_recorded_date_is_still_the_date_class() {
    let program = r#"
class Stamp extends Date {}
const s = new Stamp();
return [
  new Date(0).toISOString(),
  Date.UTC(2020, 0, 2),
  new Date() instanceof Date,
  s instanceof Stamp && s instanceof Date,
  s.getTime() === Date.now() - 1 || s.getTime() <= Date.now(),
  Date.prototype.constructor === Date,
  typeof Date(),
  Date.now.name,
  Math.random.name,
  Date.parse("1970-01-01T00:00:01Z"),
];"#;
    let result = run_recorded(program, Vec::new(), &RunRecord::with_seed(1)).await;
    assert_eq!(
        value(&result),
        &json!([
            "1970-01-01T00:00:00.000Z",
            1_577_923_200_000_i64,
            true,
            true,
            true,
            true,
            "string",
            "now",
            "random",
            1000
        ])
    );
}

/// `a` resolves at once, `b` later: `a`'s reactions run to the end before `b` settles. Resolved
/// in one delivery, `b`'s reaction would run between them.
const INTERLEAVED: &str = "
const order: string[] = [];
const pa = tools.a({}).then(async () => { await null; await null; order.push('a'); });
const pb = tools.b({}).then(() => { order.push('b'); });
await Promise.all([pa, pb]);
return order;";

fn interleaving_tools(b_delay: Duration) -> dsh_tools_runtime::code::BindingNamespace {
    tools(vec![
        ("a", binding(|_| async { Ok(json!(1)) })),
        (
            "b",
            binding(move |_| async move {
                if !b_delay.is_zero() {
                    tokio::time::sleep(b_delay).await;
                }
                Ok(json!(2))
            }),
        ),
    ])
}

#[tokio::test]
async fn a_replay_delivers_results_in_the_recorded_rounds() {
    let record = RunRecord::with_seed(0);
    let first = run_recorded(
        INTERLEAVED,
        vec![interleaving_tools(Duration::from_millis(50))],
        &record,
    )
    .await;
    assert_eq!(value(&first), &json!(["a", "b"]));
    assert_eq!(record.snapshot().rounds, [1, 2]);

    // The replay answers both at once (as a journal does), yet the order is the recorded one.
    let replay = RunRecord::replaying(record.snapshot());
    let second = run_recorded(
        INTERLEAVED,
        vec![interleaving_tools(Duration::ZERO)],
        &replay,
    )
    .await;
    assert_eq!(value(&second), &json!(["a", "b"]));

    // Without the recorded rounds, the same answers interleave the other way.
    let unscheduled = run_recorded(
        INTERLEAVED,
        vec![interleaving_tools(Duration::ZERO)],
        &RunRecord::with_seed(0),
    )
    .await;
    assert_eq!(value(&unscheduled), &json!(["b", "a"]));
}

#[tokio::test]
async fn without_a_record_the_sources_are_quickjs_own() {
    let result = run("return [typeof Date.now(), Math.random() < 1, Date.now.name];").await;
    assert_eq!(value(&result), &json!(["number", true, "now"]));
    let _: &Value = value(&result);
}
