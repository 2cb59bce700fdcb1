//! `execute_batch`: overlap of parallel-safe calls, exclusive barriers, the parallelism cap,
//! call-order policies and results.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools_runtime::batch::BatchOptions;
use dsh_tools_runtime::hooks::{post_execute_fn, pre_execute_fn};
use dsh_tools_runtime::{RegistryConfig, ToolRegistry};
use serde_json::json;
use tokio::time::Instant;

/// What tool bodies observe: calls in flight, the maximum seen, and a shared event log.
#[derive(Default)]
struct Tracker {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    exclusive_running: AtomicBool,
    overlapped_exclusive: AtomicBool,
    events: Mutex<Vec<String>>,
}

impl Tracker {
    fn log(&self, event: String) {
        self.events.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    fn position(&self, event: &str) -> usize {
        let events = self.events();
        events
            .iter()
            .position(|e| e == event)
            .unwrap_or_else(|| panic!("no {event:?} in {events:?}"))
    }

    fn enter(&self, exclusive: bool) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        if self.exclusive_running.load(Ordering::SeqCst) || (exclusive && now > 1) {
            self.overlapped_exclusive.store(true, Ordering::SeqCst);
        }
        if exclusive {
            self.exclusive_running.store(true, Ordering::SeqCst);
        }
    }

    fn exit(&self, exclusive: bool) {
        if exclusive {
            self.exclusive_running.store(false, Ordering::SeqCst);
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A tool that works for `args.ms` milliseconds (paused time) and returns `args.id`.
fn worker(name: &str, parallel: bool, tracker: &Arc<Tracker>) -> ToolDefinition {
    let tracker = Arc::clone(tracker);
    ToolDefinition::builder(name)
        .description("Works for a while.")
        .concurrency_safe(parallel)
        .execute(move |args, ctx| {
            let tracker = Arc::clone(&tracker);
            async move {
                tracker.enter(!parallel);
                tracker.log(format!("start:{}", ctx.call_id()));
                let ms = args.get("ms").and_then(|ms| ms.as_u64()).unwrap_or(10);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                tracker.log(format!("end:{}", ctx.call_id()));
                if tracker.in_flight.load(Ordering::SeqCst) > 1 && !parallel {
                    tracker.overlapped_exclusive.store(true, Ordering::SeqCst);
                }
                tracker.exit(!parallel);
                Ok(args.get("id").cloned().unwrap_or(json!(null)))
            }
        })
        .build()
        .unwrap()
}

fn registry(tracker: &Arc<Tracker>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(worker("par", true, tracker))
        .unwrap()
        .keep();
    registry
        .register(worker("excl", false, tracker))
        .unwrap()
        .keep();
    registry
}

fn call(id: &str, name: &str, ms: u64) -> ToolExecutionInput {
    ToolExecutionInput::new(id, name, json!({"id": id, "ms": ms}))
}

fn values(results: &[ToolExecutionResult]) -> Vec<serde_json::Value> {
    results
        .iter()
        .map(|r| {
            r.value()
                .cloned()
                .unwrap_or_else(|| json!(r.content()[0].as_text()))
        })
        .collect()
}

fn cap(n: usize) -> BatchOptions {
    BatchOptions::new(NonZeroUsize::new(n).unwrap())
}

#[tokio::test]
async fn parallel_calls_really_overlap() {
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let registry = ToolRegistry::new();
    let meet = ToolDefinition::builder("meet")
        .description("Waits for its partner.")
        .concurrency_safe(true)
        .execute(move |_, ctx| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok(json!(ctx.call_id()))
            }
        })
        .build()
        .unwrap();
    registry.register(meet).unwrap().keep();
    let calls = vec![
        ToolExecutionInput::new("a", "meet", json!({})),
        ToolExecutionInput::new("b", "meet", json!({})),
    ];
    // Without overlap the first call would wait at the barrier forever.
    let results = tokio::time::timeout(Duration::from_secs(5), registry.execute_batch(calls))
        .await
        .expect("both calls of the batch ran at the same time");
    assert_eq!(values(&results), [json!("a"), json!("b")]);
}

#[tokio::test(start_paused = true)]
async fn an_exclusive_call_never_overlaps_anything() {
    let tracker = Arc::new(Tracker::default());
    let registry = registry(&tracker);
    let calls = vec![
        call("p1", "par", 10),
        call("p2", "par", 10),
        call("x", "excl", 10),
        call("p3", "par", 10),
        call("p4", "par", 10),
    ];
    let results = registry.execute_batch(calls).await;
    assert_eq!(
        values(&results),
        ["p1", "p2", "x", "p3", "p4"].map(|id| json!(id))
    );
    assert!(
        !tracker.overlapped_exclusive.load(Ordering::SeqCst),
        "{:?}",
        tracker.events()
    );
    assert_eq!(
        tracker.max_in_flight.load(Ordering::SeqCst),
        2,
        "the parallel calls did overlap"
    );
    assert!(tracker.position("end:p1") < tracker.position("start:x"));
    assert!(tracker.position("end:p2") < tracker.position("start:x"));
    assert!(tracker.position("end:x") < tracker.position("start:p3"));
}

#[tokio::test(start_paused = true)]
async fn an_exclusive_call_runs_its_whole_pipeline_alone() {
    let tracker = Arc::new(Tracker::default());
    let registry = registry(&tracker);
    let (pre_log, result_log) = (Arc::clone(&tracker), Arc::clone(&tracker));
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            pre_log.log(format!("pre:{}", exec.call_id));
            next.run()
        }))
        .keep();
    registry
        .on_result(move |exec, _| result_log.log(format!("result:{}", exec.call_id)))
        .keep();
    let calls = vec![
        call("p1", "par", 10),
        call("p2", "par", 10),
        call("x", "excl", 10),
        call("p3", "par", 10),
    ];
    registry.execute_batch(calls).await;
    assert!(
        tracker.position("start:p2") < tracker.position("end:p1"),
        "p1 and p2 overlap"
    );
    assert!(
        tracker.position("result:p2") < tracker.position("pre:x"),
        "x waits for every earlier call"
    );
    assert!(
        tracker.position("result:x") < tracker.position("pre:p3"),
        "later calls wait for x"
    );
}

#[tokio::test(start_paused = true)]
async fn the_parallelism_cap_is_honoured() {
    let tracker = Arc::new(Tracker::default());
    let registry = registry(&tracker);
    let calls: Vec<_> = (0..10).map(|i| call(&format!("c{i}"), "par", 10)).collect();
    let started = Instant::now();
    let results = registry.execute_batch_with(calls, cap(3)).await;
    assert_eq!(results.len(), 10);
    assert_eq!(tracker.max_in_flight.load(Ordering::SeqCst), 3);
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(40),
        "4 waves of at most 3 calls"
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_cap_is_the_registry_configuration() {
    let tracker = Arc::new(Tracker::default());
    let config = RegistryConfig {
        max_parallel_sub_calls: NonZeroUsize::new(2).unwrap(),
        ..RegistryConfig::default()
    };
    let registry = ToolRegistry::with_config(config);
    registry
        .register(worker("par", true, &tracker))
        .unwrap()
        .keep();
    let calls: Vec<_> = (0..5).map(|i| call(&format!("c{i}"), "par", 10)).collect();
    registry.execute_batch(calls).await;
    assert_eq!(tracker.max_in_flight.load(Ordering::SeqCst), 2);
    assert_eq!(BatchOptions::from(config), cap(2));
}

#[tokio::test(start_paused = true)]
async fn results_and_policies_follow_call_order_while_dispatch_overlaps() {
    let tracker = Arc::new(Tracker::default());
    let registry = registry(&tracker);
    let pre: Arc<Mutex<Vec<String>>> = Arc::default();
    let post: Arc<Mutex<Vec<String>>> = Arc::default();
    let observed: Arc<Mutex<Vec<String>>> = Arc::default();
    let (pre_log, post_log, observed_log) =
        (Arc::clone(&pre), Arc::clone(&post), Arc::clone(&observed));
    registry
        .on_pre_execute(pre_execute_fn(move |exec, next| {
            pre_log.lock().unwrap().push(exec.call_id.to_string());
            next.run()
        }))
        .keep();
    registry
        .on_post_execute(post_execute_fn(move |exec, _, next| {
            post_log.lock().unwrap().push(exec.call_id.to_string());
            next.run()
        }))
        .keep();
    registry
        .on_result(move |exec, _| observed_log.lock().unwrap().push(exec.call_id.to_string()))
        .keep();

    // The first call takes longest: dispatch completes in reverse order.
    let calls: Vec<_> = (0..4)
        .map(|i| call(&format!("c{i}"), "par", 40 - 10 * i))
        .collect();
    let results = registry.execute_batch(calls).await;

    let in_order = ["c0", "c1", "c2", "c3"];
    assert_eq!(values(&results), in_order.map(|id| json!(id)));
    assert_eq!(*pre.lock().unwrap(), in_order);
    assert_eq!(*post.lock().unwrap(), in_order);
    assert_eq!(
        *observed.lock().unwrap(),
        in_order,
        "exactly one notification per call, in order"
    );
    let ends: Vec<String> = tracker
        .events()
        .into_iter()
        .filter(|e| e.starts_with("end:"))
        .collect();
    assert_eq!(ends, ["end:c3", "end:c2", "end:c1", "end:c0"]);
}

#[tokio::test(start_paused = true)]
async fn a_denied_or_failing_call_does_not_stop_the_others() {
    let tracker = Arc::new(Tracker::default());
    let registry = registry(&tracker);
    registry
        .guard(|exec| (&*exec.call_id == "c1").then(|| "not this one".to_owned()))
        .keep();
    let notified = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&notified);
    registry
        .on_result(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .keep();
    let cancelled = call("c3", "par", 10);
    cancelled.cancel.cancel();
    let calls = vec![
        call("c0", "par", 10),
        call("c1", "par", 10),
        call("c2", "nope", 10),
        cancelled,
        call("c4", "par", 10),
    ];
    let results = registry.execute_batch(calls).await;
    assert_eq!(
        values(&results),
        [
            json!("c0"),
            json!("Error: not this one"),
            json!("Error: unknown tool \"nope\""),
            json!("Error: tool call aborted before dispatch"),
            json!("c4"),
        ]
    );
    assert_eq!(notified.load(Ordering::SeqCst), 5);
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_does_not_hold_up_the_batch() {
    let tracker = Arc::new(Tracker::default());
    let registry = ToolRegistry::new();
    registry
        .register(worker("par", true, &tracker))
        .unwrap()
        .keep();
    let stuck = ToolDefinition::builder("stuck")
        .description("Never finishes.")
        .concurrency_safe(true)
        .timeout_ms(50)
        .execute(|_, _| async {
            std::future::pending::<()>().await;
            Ok(json!(null))
        })
        .build()
        .unwrap();
    registry.register(stuck).unwrap().keep();
    registry.install_timeout_policy().keep();
    let calls = vec![
        ToolExecutionInput::new("s", "stuck", json!({})),
        call("p", "par", 80),
    ];
    let started = Instant::now();
    let results = registry.execute_batch(calls).await;
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(80),
        "the calls overlapped"
    );
    assert_eq!(
        values(&results),
        [json!("Error: tool call timed out after 50ms"), json!("p")]
    );
}

#[tokio::test]
async fn an_empty_batch_returns_no_results() {
    assert!(
        ToolRegistry::new()
            .execute_batch(Vec::new())
            .await
            .is_empty()
    );
}

#[test]
fn the_batch_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let registry = ToolRegistry::new();
    assert_send(&registry.execute_batch(Vec::new()));
}
