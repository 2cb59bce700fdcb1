//! The `run_code` tool and its dispatch bridge (`docs/CONTRACTS.md`, "The run_code tool" and
//! "Sub-calls"; the rule numbers below are those of "Sub-calls").
//!
//! Every `tools.x(args)` call of a program becomes a sub-call through the complete pipeline,
//! with the outer execution as parent and id `<callId>:code:<n>`. Sub-calls go through one lane
//! per run (the batch scheduler in stream shape): starts in submission order, parallel-safe calls
//! overlapping up to `max_parallel_sub_calls`, exclusive calls as barriers, commits in
//! submission order.

// The readability budget: no function of the bridge over ~100 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;

use dsh_tools::exec::{ToolExecution, ToolRunContext};
use dsh_tools::{ErrorInfo, ToolDefinition, ToolError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod binding;
mod commit;
mod discovery;
mod replies;

use crate::dispatch_log::{DispatchLog, DispatchLogFn};
use crate::durable::{DurableRun, Ending, RunGrants, Suspension};
use crate::events::{CodeDispatchEvent, CodeEventSink, emit};
use crate::host_work::HostWork;
use crate::runtime::{
    CodeRunRequest, CodeRunResult, CodeRuntime, CodeRuntimeError, RunSnapshot, SnapshotSlot,
};
use dsh_tools_core::extension::{CallInput, Lane, LaneIntake, OnStart};
use dsh_tools_core::{PromptError, ToolRegistry};

/// Why a run is over, for the messages of rules 9 and 14.
const SETTLED: &str = "run_code settled";
const CANCELLED: &str = "run_code cancelled";

/// A submitted sub-call waiting for its commit.
struct Pending {
    /// Its sub-call number (`<callId>:code:<number>`).
    number: usize,
    name: Arc<str>,
    /// A copy of the arguments, independent of the dispatched one, kept only when the run logs
    /// dispatch events or journals its calls (a durable run).
    arguments: Option<Value>,
}

/// The sub-call lane's intake: numbering and the submission happen under one lock, so
/// sub-call numbers follow submission order.
struct Intake {
    lane: Option<Arc<LaneIntake>>,
    /// The lane's index of the next submitted call (replayed calls skip the lane).
    lane_index: usize,
}

/// The per-run state shared by the bindings and the commit pump.
struct Run {
    submit: Mutex<Intake>,
    /// Sub-calls numbered so far.
    next: AtomicUsize,
    /// Submitted calls by lane index.
    replies: Mutex<replies::Replies>,
    /// Fires when the run is over (rule 6); the durable side waits on it.
    over: CancellationToken,
    /// Whether `over` fired, read without the token's lock (on every call).
    over_flag: AtomicBool,
    reason: Mutex<&'static str>,
    /// The durable side of a suspendable or resumed run.
    durable: Option<Arc<DurableRun>>,
    /// Whether each call keeps a copy of its arguments (for its dispatch event, or its journal
    /// entry).
    keeps_arguments: bool,
}

impl Run {
    /// Whether the run is over (rule 6).
    fn is_over(&self) -> bool {
        self.over_flag.load(Ordering::Acquire)
    }

    /// The run is over (rule 6).
    fn end(&self) {
        self.over_flag.store(true, Ordering::Release);
        self.over.cancel();
    }

    fn reason(&self) -> &'static str {
        *self.reason.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The durable side of a suspendable or resumed run: the run, where its suspension goes, and
/// the paused program to continue (a runtime that snapshots).
type Durable = (
    Arc<DurableRun>,
    Arc<Mutex<Option<Suspension>>>,
    Option<RunSnapshot>,
);

/// Runs one `run_code` call: validates the description, builds the bindings, runs the program
/// and drains every sub-call before returning (rule 6).
pub(crate) async fn run_code(
    registry: ToolRegistry,
    args: Arc<Value>,
    ctx: ToolRunContext,
) -> Result<Value, ToolError> {
    let description = args["description"].as_str().unwrap_or_default();
    if description.trim().is_empty() {
        return Err(ToolError::msg(
            "invalid description: expected a non-empty string",
        ));
    }
    let runtime = crate::state::code_runtime(&registry).ok_or_else(|| {
        let mode = registry.effective_mode(ctx.execution().agent);
        ToolError::msg(PromptError::missing_runtime(mode).to_string())
    })?;
    let program = args["code"].as_str().unwrap_or_default().to_owned();
    let exec = ctx.execution().clone();
    let tools = binding::callable(&registry, exec.agent);
    static_check(&*runtime, &program, &tools)?;

    let run_cancel = ctx.cancellation().child_token();
    // The program stops with the run, or earlier (a suspension, a divergence) while its
    // sub-calls in flight finish.
    let program_stop = run_cancel.child_token();
    let source = Arc::new(LaneIntake::default());
    let over = CancellationToken::new();
    let sink = crate::state::event_sink(&registry).filter(|_| exec.agent.is_some());
    let grants: RunGrants = Arc::default();
    let mut durable = durable_side(
        &registry,
        &*runtime,
        &ctx,
        &tools,
        sink.as_ref(),
        (&over, &program_stop),
        &grants,
    )?;
    let run = Arc::new(Run {
        submit: Mutex::new(Intake {
            lane: Some(Arc::clone(&source)),
            lane_index: 0,
        }),
        next: AtomicUsize::new(durable.as_ref().map_or(0, |(run, ..)| run.calls_before())),
        replies: Mutex::default(),
        over,
        over_flag: AtomicBool::new(false),
        reason: Mutex::new(SETTLED),
        keeps_arguments: sink.is_some() || durable.is_some(),
        durable: durable.as_ref().map(|(run, ..)| Arc::clone(run)),
    });
    if let (Some(durable), Some(sink)) = (&run.durable, &sink)
        && !durable.decided().is_empty()
    {
        emit(&**sink, CodeDispatchEvent::resumed(&exec, durable));
    }
    let lane = commit_pump(&registry, &ctx, &run, source, sink.as_ref());

    let flavour =
        super::flavour::flavour(runtime.language()).unwrap_or(&super::flavour::TYPESCRIPT);
    let helpers = discovery::bindings(&registry, exec.agent, flavour);
    let bindings = binding::bindings(&tools, helpers, &exec, &run, &run_cancel);
    let clock = crate::state::open_run(&registry, exec.token, run.durable.clone(), grants);
    let request = CodeRunRequest::new(program, vec![bindings])
        .with_cancellation(program_stop)
        .with_clock(clock.clock().clone());
    let (mut request, paused) = durable_request(request, &*runtime, durable.as_mut());
    let handed_over = runtime.polls_host_work();
    if handed_over {
        request = request.with_host_work(lane.clone());
    }
    let driver = drive(
        runtime,
        request,
        &run,
        ctx.cancellation().clone(),
        run_cancel,
    );
    let outcome = if handed_over {
        let outcome = driver.await;
        // Rule 6: in-flight calls are awaited before run_code returns.
        if let Some(rest) = lane.take().await {
            rest.await;
        }
        outcome
    } else {
        let (outcome, ()) = tokio::join!(driver, std::future::poll_fn(|cx| lane.poll(cx)));
        outcome
    };
    drop(clock);
    let result = outcome.map_err(|e| ToolError::msg(e.to_string()))?;
    if let Some(durable) = durable {
        durable_ending(durable, paused, sink.as_ref(), &exec, &result)?;
    }
    run_value(result)
}

/// What is certainly wrong fails the run before any tool runs or any sandbox starts. The check
/// reads TypeScript; a Python program gets the Monty runtime's static check, here with the
/// tools' schemas (its words and its `exception` kind); other languages check their programs
/// themselves.
fn static_check(
    runtime: &dyn CodeRuntime,
    program: &str,
    tools: &[ToolDefinition],
) -> Result<(), ToolError> {
    #[cfg(feature = "python")]
    if runtime.language() == super::flavour::PYTHON.language
        && let Some(message) = crate::monty::check_run(program, tools)
    {
        return Err(run_failed("exception", &message, &[]));
    }
    let findings = if runtime.language() == super::flavour::TYPESCRIPT.language {
        crate::precheck::check(program, tools)
    } else {
        Vec::new()
    };
    if !findings.is_empty() {
        let mut message = format!(
            "the program was not run: {} found before it started:",
            match findings.len() {
                1 => "1 problem".to_owned(),
                n => format!("{n} problems"),
            }
        );
        for finding in &findings {
            message.push_str(&format!("\n{finding}"));
        }
        return Err(run_failed("static-check", &message, &[]));
    }
    Ok(())
}

/// The durable side of this run, when a durable start was registered for it (a suspendable or
/// resumed run); its approvals so far join `grants`. `stops` are the run's `over` token and
/// its program's stop.
fn durable_side(
    registry: &ToolRegistry,
    runtime: &dyn CodeRuntime,
    ctx: &ToolRunContext,
    tools: &[ToolDefinition],
    sink: Option<&Arc<dyn CodeEventSink>>,
    stops: (&CancellationToken, &CancellationToken),
    grants: &RunGrants,
) -> Result<Option<Durable>, ToolError> {
    let exec = ctx.execution();
    let durable = match crate::state::durable_start(registry, &exec.call_id) {
        Some(start) if !runtime.replays() && !runtime.snapshots() => {
            let _ = start;
            return Err(ToolError::msg(
                "this code runtime cannot suspend or resume runs: it neither replays nor snapshots (CodeRuntime::replays, CodeRuntime::snapshots)",
            ));
        }
        Some(start) => {
            grants
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(start.grants.iter().cloned());
            let run = DurableRun::new(
                &start,
                ctx,
                sink.cloned(),
                stops.0.clone(),
                stops.1.clone(),
                Arc::clone(grants),
            );
            #[cfg(feature = "store")]
            if let Some(link) = run.link() {
                link.know_tools(tools);
            }
            #[cfg(not(feature = "store"))]
            let _ = tools;
            Some((Arc::new(run), start.suspension, start.snapshot))
        }
        None => None,
    };
    Ok(durable)
}

/// The run's lane: the scheduler, then rule 13's commits in submission order as it reports
/// them — taken after each of its polls, so a call the scheduler commits settles in the same
/// poll. A runtime that polls it on its own thread saves two cross-thread hand-offs per call;
/// it leaves the unfinished rest for the host to drain once the program is over.
fn commit_pump(
    registry: &ToolRegistry,
    ctx: &ToolRunContext,
    run: &Arc<Run>,
    source: Arc<LaneIntake>,
    sink: Option<&Arc<dyn CodeEventSink>>,
) -> HostWork {
    let exec = ctx.execution();
    let log_chain: Vec<DispatchLogFn> = match sink {
        Some(_) => registry.applicable_hooks::<DispatchLog>(exec),
        None => Vec::new(),
    };
    let on_start: Option<OnStart> = sink.cloned().map(|sink| {
        let parent = Arc::clone(&exec.call_id);
        Arc::new(move |input: &CallInput| {
            emit(&*sink, CodeDispatchEvent::start(input, &parent));
        }) as OnStart
    });
    // The bindings submit only lossless arguments (rule 10): the lane does not check again.
    let scheduler = Lane::new(registry.clone(), source, true, on_start);
    let (run, ctx, sink) = (Arc::clone(run), ctx.clone(), sink.cloned());
    let mut scheduler = Some(scheduler);
    HostWork::new(std::future::poll_fn(move |cx| {
        let Some(lane) = &mut scheduler else {
            return Poll::Ready(());
        };
        let over = std::pin::Pin::new(&mut *lane).poll(cx).is_ready();
        for event in lane.take_events() {
            let log = sink.as_deref().map(|sink| (sink, &log_chain[..]));
            commit::settle(&run, &ctx, log, event);
        }
        if over {
            scheduler = None;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }))
}

/// A durable run is replayed through its record, or paused and continued by the runtime:
/// `request` set up for that, and where the paused program goes (a runtime that snapshots).
fn durable_request(
    mut request: CodeRunRequest,
    runtime: &dyn CodeRuntime,
    durable: Option<&mut Durable>,
) -> (CodeRunRequest, Option<SnapshotSlot>) {
    let paused: Option<SnapshotSlot> = match durable {
        Some((_, _, resume_from)) if runtime.snapshots() => {
            if let Some(snapshot) = resume_from.take() {
                request = request.resuming(snapshot);
            }
            let slot = SnapshotSlot::default();
            request = request.with_snapshot_to(Arc::clone(&slot));
            Some(slot)
        }
        Some((durable, ..)) => {
            request = request.with_record(durable.record().clone());
            None
        }
        None => None,
    };
    (request, paused)
}

/// Runs the program, then ends the run (rule 6): abandons what has not started and stops the
/// rest — a suspended run's calls in flight finish instead, to be journaled.
async fn drive(
    runtime: Arc<dyn CodeRuntime>,
    request: CodeRunRequest,
    run: &Arc<Run>,
    outer: CancellationToken,
    run_cancel: CancellationToken,
) -> Result<CodeRunResult, CodeRuntimeError> {
    let outcome = runtime.run(request).await;
    if outer.is_cancelled() {
        *run.reason.lock().unwrap_or_else(PoisonError::into_inner) = CANCELLED;
    }
    // Rule 6: the run is over — abandon what has not started, stop the rest. A
    // suspended run's calls in flight finish instead, to be journaled.
    let suspended = run.durable.as_ref().is_some_and(|d| d.end_program());
    run.end();
    if !suspended {
        run_cancel.cancel();
    }
    let lane = run
        .submit
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .lane
        .take();
    if let Some(lane) = lane {
        lane.close();
    }
    outcome
}

/// How a durable run ended: completed (the result stands), failed by a divergence, or
/// suspended — its suspension left for the caller to seal, the run's error naming the pending
/// calls.
fn durable_ending(
    (durable, slot, _): Durable,
    paused: Option<SnapshotSlot>,
    sink: Option<&Arc<dyn CodeEventSink>>,
    exec: &ToolExecution,
    result: &CodeRunResult,
) -> Result<(), ToolError> {
    match durable.ending() {
        Ending::Completed => Ok(()),
        Ending::Failed(message) => Err(run_failed("divergence", &message, &[])),
        Ending::Suspended(mut suspension) => {
            if let Some(paused) = paused {
                let snapshot = paused.lock().unwrap_or_else(PoisonError::into_inner).take();
                let Some(snapshot) = snapshot else {
                    let message = "the run could not suspend: the program did not pause (it kept running after its call awaiting a decision)";
                    return Err(run_failed("suspension", message, &result.logs));
                };
                suspension.paused(snapshot);
            }
            if let Some(sink) = sink {
                emit(&**sink, CodeDispatchEvent::suspended(exec, &suspension));
            }
            let message = super::durable::suspended_message(&suspension);
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(suspension);
            Err(ToolError::with_info(
                message,
                ErrorInfo::new("CodeRunSuspendedError", "CODE_RUN_SUSPENDED"),
            ))
        }
    }
}

/// The `run_code` value of a finished run (`{logs, result?}`), or its failure.
fn run_value(result: CodeRunResult) -> Result<Value, ToolError> {
    if let Some(error) = result.error {
        return Err(run_failed(
            error.kind.as_str(),
            &error.message,
            &result.logs,
        ));
    }
    let mut value = json!({"logs": result.logs});
    if let Some(completion) = result.value {
        value["result"] = completion;
    }
    Ok(value)
}

/// The `CODE_RUN_FAILED` error of a run that failed with `kind`.
fn run_failed(kind: &str, message: &str, logs: &[String]) -> ToolError {
    let mut message = format!("code run failed ({kind}): {message}");
    if !logs.is_empty() {
        message.push_str("\nCaptured output:\n");
        message.push_str(&logs.join("\n"));
    }
    ToolError::with_info(
        message,
        ErrorInfo::new("CodeRunFailedError", "CODE_RUN_FAILED"),
    )
}
