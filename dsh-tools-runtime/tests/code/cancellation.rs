//! Cancellation of a Code Mode run while tool calls are in flight and the program spins.
//!
//! - Through the registry (`run_code`): the outer call's token is cancelled while nine or more
//!   tool bodies wait and the program runs `while (true) {}`. The run ends within 1 s; every
//!   tool future that was running is polled exactly once more (it sees its token) and dropped
//!   (drop probes); every started sub-call has exactly one terminal settle event, abandoned
//!   ones none; and the registry runs a new program afterwards.
//! - In the sandbox alone: binding futures that ignore cancellation are dropped, unpolled, before
//!   the run's result is delivered.
//!
//! Existing tests cover the neighbours: `sandbox/limits.rs` (a CPU-bound program cancelled
//! before any call; dropping the run future), `code_bridge.rs` (the outer result of a cancelled
//! run is `ABORTED`, against a scripted runtime).
#![cfg(feature = "code-mode")]
#![allow(missing_docs, unreachable_pub, reason = "test helpers")]

use crate::sandbox_support as support;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use dsh_tools::exec::ToolExecutionInput;
use dsh_tools::{ToolDefinition, ToolError};
use dsh_tools_runtime::code::CodeMode;
use dsh_tools_runtime::code::CodeModeExt;
use dsh_tools_runtime::code::quickjs::{QuickJsConfig, QuickJsRuntime};
use dsh_tools_runtime::code::{CodeDispatchEvent, CodeErrorKind, CodeEventSink, CodeRuntime};
use dsh_tools_runtime::{PresentationMode, RegistryConfig, ToolRegistry};
use serde_json::{Value, json};
use support::{Probe, binding, failure, request, runtime_with, tools};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// Budgets far beyond the test: only cancellation can end the spinning programs.
fn patient() -> QuickJsConfig {
    QuickJsConfig {
        cpu_budget: Duration::from_secs(60),
        wall_clock: Duration::from_secs(60),
        ..QuickJsConfig::default()
    }
}

/// A future that waits for its token, holding a drop probe, and counts its polls after the
/// token fired.
struct Held {
    wait: Pin<Box<WaitForCancellationFutureOwned>>,
    token: CancellationToken,
    polls_after_cancel: Arc<AtomicUsize>,
    _probe: Probe,
}

impl Future for Held {
    type Output = Result<Value, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.token.is_cancelled() {
            self.polls_after_cancel.fetch_add(1, Ordering::SeqCst);
        }
        self.wait
            .as_mut()
            .poll(cx)
            .map(|()| Err(ToolError::msg("stopped: the run was cancelled")))
    }
}

/// What the `hold` tool records.
struct Holds {
    live: Arc<AtomicUsize>,
    entered: AtomicUsize,
    polls_after_cancel: Arc<AtomicUsize>,
    /// One message per body entered.
    started: mpsc::UnboundedSender<()>,
}

/// `hold` waits for its call's cancellation; `tick` answers at once. Both parallel-safe.
fn tools_of(holds: &Arc<Holds>) -> [ToolDefinition; 2] {
    let record = Arc::clone(holds);
    let hold = ToolDefinition::builder("hold")
        .description("Waits until cancelled.")
        .concurrency_safe(true)
        .execute(move |_, ctx| {
            let token = ctx.cancellation().clone();
            let held = Held {
                wait: Box::pin(token.clone().cancelled_owned()),
                token,
                polls_after_cancel: Arc::clone(&record.polls_after_cancel),
                _probe: Probe::new(&record.live),
            };
            record.entered.fetch_add(1, Ordering::SeqCst);
            let _ = record.started.send(());
            held
        })
        .build()
        .expect("the tool builds");
    let tick = ToolDefinition::builder("tick")
        .description("Answers at once.")
        .concurrency_safe(true)
        .execute(|_, _| async { Ok(json!("tick")) })
        .build()
        .expect("the tool builds");
    [hold, tick]
}

#[derive(Default)]
struct Events(Mutex<Vec<CodeDispatchEvent>>);

impl CodeEventSink for Events {
    fn append(&self, event: CodeDispatchEvent) {
        self.0.lock().expect("the event log").push(event);
    }
}

impl Events {
    /// Per sub-call id: `(start events, settle events)`.
    fn per_call(&self) -> BTreeMap<String, (usize, usize)> {
        let mut calls: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for event in self.0.lock().expect("the event log").iter() {
            match event {
                CodeDispatchEvent::Start { sub_call_id, .. } => {
                    calls.entry(sub_call_id.clone()).or_default().0 += 1;
                }
                CodeDispatchEvent::Settled { sub_call_id, .. } => {
                    calls.entry(sub_call_id.clone()).or_default().1 += 1;
                }
                // Durable runs only.
                _ => {}
            }
        }
        calls
    }
}

fn run_code(id: &str, code: &str, agent: dsh_tools::exec::ScopeId) -> ToolExecutionInput {
    let mut input = ToolExecutionInput::new(
        id,
        "run_code",
        json!({"code": code, "description": "Hold the tools"}),
    );
    input.agent = Some(agent);
    input
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_mid_call_drops_the_tool_futures_and_settles_each_call_once() {
    let registry = ToolRegistry::with_config(RegistryConfig {
        mode: PresentationMode::Code,
        ..RegistryConfig::default()
    });
    let (started, mut entered) = mpsc::unbounded_channel();
    let holds = Arc::new(Holds {
        live: Arc::default(),
        entered: AtomicUsize::new(0),
        polls_after_cancel: Arc::default(),
        started,
    });
    for tool in tools_of(&holds) {
        registry.register(tool).expect("registers").keep();
    }
    CodeMode::new(Arc::new(QuickJsRuntime::new(patient()).expect("valid")))
        .install(&registry)
        .unwrap();
    let events = Arc::new(Events::default());
    registry.set_code_event_sink(Arc::clone(&events) as Arc<dyn CodeEventSink>);
    let agent = registry.new_scope();

    // `tick` resolves first (it commits first); the holds stay in flight while the program
    // spins. Ten parallel calls at most: some holds are still queued when the run ends.
    let program = "const first = tools.tick({});\n\
                   const held = Array.from({ length: 12 }, (_, i) => tools.hold({ i }));\n\
                   await first;\n\
                   while (true) {}";
    let input = run_code("c1", program, agent.id());
    let cancel = input.cancel.clone();
    let running = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(input).await }
    });
    let nine = async {
        for _ in 0..9 {
            entered.recv().await.expect("the tool is registered");
        }
    };
    tokio::time::timeout(Duration::from_secs(30), nine)
        .await
        .expect("nine holds started");

    let cancelled = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the run ended")
        .expect("the run task");
    let ended = cancelled.elapsed();
    assert!(
        ended <= Duration::from_secs(1),
        "ended {ended:?} after cancel"
    );
    // The run's own failure stands (`docs/CONTRACTS.md`, "Stages", stage 10e: a body failure is
    // kept under cancellation).
    assert_eq!(
        result.error().map(dsh_tools::ToolError::message),
        Some("code run failed (abort): run cancelled"),
        "{result:?}"
    );

    let entered = holds.entered.load(Ordering::SeqCst);
    assert_eq!(holds.live.load(Ordering::SeqCst), 0, "tool futures alive");
    assert_eq!(
        holds.polls_after_cancel.load(Ordering::SeqCst),
        entered,
        "each running tool future is polled once after the cancel, then dropped"
    );
    let calls = events.per_call();
    for (id, (starts, settles)) in &calls {
        assert_eq!(
            (*starts, *settles),
            (1, 1),
            "{id}: starts and terminal events"
        );
    }
    assert!(calls.len() > entered, "tick and every entered hold started");

    // The runtime accepts a new program.
    let again = registry
        .execute(run_code("c2", "return await tools.tick({});", agent.id()))
        .await;
    assert_eq!(again.value().map(|v| &v["result"]), Some(&json!("tick")));

    dsh_tools_tests::record_figure(
        env!("CARGO_TARGET_TMPDIR"),
        "cancellation",
        &format!(
            "cancellation: a spinning run_code with {entered} tool futures in flight ended {} ms \
             after cancel (bound 1000 ms); {entered} futures polled once each after the cancel \
             and dropped; {} started sub-calls, each with exactly 1 terminal event",
            ended.as_millis(),
            calls.len(),
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_drops_binding_futures_that_ignore_it_before_the_result() {
    let live = Arc::new(AtomicUsize::new(0));
    let polls_after_cancel = Arc::new(AtomicUsize::new(0));
    let (started, mut entered) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let hold = {
        let (live, polls, cancel) = (
            Arc::clone(&live),
            Arc::clone(&polls_after_cancel),
            cancel.clone(),
        );
        binding(move |_| {
            let probe = Probe::new(&live);
            let _ = started.send(());
            let (polls, cancel) = (Arc::clone(&polls), cancel.clone());
            std::future::poll_fn(move |_| {
                let _held = &probe;
                if cancel.is_cancelled() {
                    polls.fetch_add(1, Ordering::SeqCst);
                }
                Poll::<Result<Value, String>>::Pending
            })
        })
    };
    let tick = binding(|_| async { Ok(json!("tick")) });
    let runtime = runtime_with(patient());
    let program = "const first = tools.tick({});\ntools.hold({});\ntools.hold({});\nawait first;\nwhile (true) {}";
    let request = request(program, vec![tools(vec![("hold", hold), ("tick", tick)])])
        .with_cancellation(cancel.clone());
    let running = tokio::spawn(CodeRuntime::run(&runtime, request));
    for _ in 0..2 {
        tokio::time::timeout(Duration::from_secs(30), entered.recv())
            .await
            .expect("a hold started");
    }
    assert_eq!(live.load(Ordering::SeqCst), 2);
    let cancelled = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the run ended")
        .expect("the run task")
        .expect("valid bindings");
    assert!(cancelled.elapsed() <= Duration::from_secs(1));
    assert_eq!(failure(&result), (CodeErrorKind::Abort, "run cancelled"));
    assert_eq!(live.load(Ordering::SeqCst), 0, "binding futures alive");
    // A hold's first poll may come just after the cancel; none is polled again.
    assert!(
        polls_after_cancel.load(Ordering::SeqCst) <= 2,
        "polled after the cancel"
    );
    assert_eq!(
        support::value(&support::run_on(&runtime, "return 1;", vec![]).await),
        &json!(1)
    );
}
