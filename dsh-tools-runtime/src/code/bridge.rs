//! The `run_code` tool and its dispatch bridge (REFERENCE §8.3, §8.6).
//!
//! Every `tools.x(args)` call of a program becomes a sub-call through the complete pipeline,
//! with the outer execution as parent and id `<callId>:code:<n>`. Sub-calls go through one lane
//! per run (the batch scheduler in stream shape): starts in submission order, parallel-safe calls
//! overlapping up to `max_parallel_sub_calls`, exclusive calls as barriers, commits in
//! submission order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_tools::exec::{ToolExecutionInput, ToolExecutionResult, ToolRunContext};
use dsh_tools::json::is_lossless;
use dsh_tools::{ContentBlock, ContextMessage, ErrorInfo, ToolError};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::dispatch_log::{DispatchLog, DispatchLogFn};
use super::durable::{Check, DurableRun, Ending};
use super::events::{CodeDispatchEvent, CodeEventSink, emit};
use super::host_work::HostWork;
use super::runtime::{BindingFn, BindingNamespace, CodeRunRequest, ErrorClass};
use super::transport::RUN_CODE_NAME;
use crate::pipeline::{LaneEvent, OnStart, Scheduler};
use crate::registry::ToolRegistry;

/// Why a run is over, for the messages of rules 10, 13 and 15.
const SETTLED: &str = "run_code settled";
const CANCELLED: &str = "run_code cancelled";

type Reply = oneshot::Sender<Result<Value, String>>;

/// A submitted sub-call waiting for its commit.
struct Pending {
    /// Its sub-call number (`<callId>:code:<number>`).
    number: usize,
    name: String,
    /// The logged copy of the arguments (independent of the dispatched one).
    arguments: Value,
    reply: Reply,
}

/// The sub-call lane's intake: numbering and the channel send happen under one lock, so
/// sub-call numbers follow submission order.
struct Intake {
    sender: Option<mpsc::UnboundedSender<ToolExecutionInput>>,
    /// The lane's index of the next submitted call (replayed calls skip the lane).
    lane_index: usize,
}

/// The per-run state shared by the bindings and the commit pump.
struct Run {
    submit: Mutex<Intake>,
    /// Sub-calls numbered so far.
    next: AtomicUsize,
    /// Submitted calls by lane index.
    replies: Mutex<HashMap<usize, Pending>>,
    over: CancellationToken,
    reason: Mutex<&'static str>,
    /// The durable side of a suspendable or resumed run.
    durable: Option<Arc<DurableRun>>,
}

impl Run {
    fn reason(&self) -> &'static str {
        *self.reason.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

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
    let runtime = registry
        .code_runtime()
        .ok_or_else(|| ToolError::msg(super::missing_runtime_message(registry.config().mode)))?;
    let program = args["code"].as_str().unwrap_or_default().to_owned();
    let exec = ctx.execution().clone();

    let run_cancel = ctx.cancellation().child_token();
    // The program stops with the run, or earlier (a suspension, a divergence) while its
    // sub-calls in flight finish.
    let program_stop = run_cancel.child_token();
    let (submit, source) = mpsc::unbounded_channel();
    let (events, mut committed) = mpsc::unbounded_channel();
    let over = CancellationToken::new();
    let sink = registry.event_sink().filter(|_| exec.agent.is_some());
    let durable = match registry.durable_start(&exec.call_id) {
        Some(start) if !runtime.replays() => {
            let _ = start;
            return Err(ToolError::msg(
                "this code runtime cannot suspend or resume runs: it does not replay (CodeRuntime::replays)",
            ));
        }
        Some(start) => Some((
            Arc::new(DurableRun::new(
                &start,
                &ctx,
                sink.clone(),
                over.clone(),
                program_stop.clone(),
            )),
            start.suspension,
        )),
        None => None,
    };
    let run = Arc::new(Run {
        submit: Mutex::new(Intake {
            sender: Some(submit),
            lane_index: 0,
        }),
        next: AtomicUsize::new(0),
        replies: Mutex::new(HashMap::new()),
        over,
        reason: Mutex::new(SETTLED),
        durable: durable.as_ref().map(|(run, _)| Arc::clone(run)),
    });
    if let (Some(durable), Some(sink)) = (&run.durable, &sink)
        && !durable.decided().is_empty()
    {
        emit(&**sink, CodeDispatchEvent::resumed(&exec, durable));
    }
    let log_chain: Vec<DispatchLogFn> = match sink {
        Some(_) => crate::pipeline::applicable::<DispatchLog, _>(&registry, &exec),
        None => Vec::new(),
    };
    let on_start: Option<OnStart> = sink.clone().map(|sink| {
        let parent = Arc::clone(&exec.call_id);
        Arc::new(move |input: &ToolExecutionInput| {
            emit(&*sink, CodeDispatchEvent::start(input, &parent));
        }) as OnStart
    });
    // The bindings submit only lossless arguments (rule 11): the lane does not check again.
    let scheduler = Scheduler::stream(
        registry.clone(),
        source,
        true,
        events,
        run.over.clone(),
        registry.config().max_parallel_sub_calls,
        on_start,
    );

    // Rule 14's commits, in submission order, as the lane reports them.
    let pump = {
        let (run, ctx, sink) = (Arc::clone(&run), ctx.clone(), sink.clone());
        async move {
            while let Some(event) = committed.recv().await {
                let log = sink.as_deref().map(|sink| (sink, &log_chain[..]));
                settle(&run, &ctx, log, event);
            }
        }
    };
    // The run's lane: the scheduler and its commit pump. A runtime that polls it on its own
    // thread saves two cross-thread hand-offs per call; it leaves the unfinished rest for the
    // host to drain once the program is over.
    let lane = HostWork::new(async move {
        let _ = tokio::join!(scheduler, pump);
    });

    let bindings = bindings(&registry, &exec, &run, &run_cancel);
    let clock = registry.open_run(exec.token, run.durable.clone());
    let mut request = CodeRunRequest::new(program, vec![bindings])
        .with_cancellation(program_stop)
        .with_clock(clock.clock().clone());
    if let Some(durable) = &run.durable {
        request = request.with_record(durable.record().clone());
    }
    let handed_over = runtime.polls_host_work();
    if handed_over {
        request = request.with_host_work(lane.clone());
    }
    let driver = {
        let run = Arc::clone(&run);
        let outer = ctx.cancellation().clone();
        async move {
            let outcome = runtime.run(request).await;
            if outer.is_cancelled() {
                *run.reason.lock().unwrap_or_else(PoisonError::into_inner) = CANCELLED;
            }
            // Rule 6: the run is over — abandon what has not started, stop the rest. A
            // suspended run's calls in flight finish instead, to be journaled.
            let suspended = run.durable.as_ref().is_some_and(|d| d.end_program());
            run.over.cancel();
            if !suspended {
                run_cancel.cancel();
            }
            run.submit
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .sender
                .take();
            outcome
        }
    };
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
    if let Some((durable, slot)) = durable {
        match durable.ending() {
            Ending::Completed => {}
            Ending::Failed(message) => return Err(run_failed("divergence", &message, &[])),
            Ending::Suspended(suspension) => {
                if let Some(sink) = &sink {
                    emit(&**sink, CodeDispatchEvent::suspended(&exec, &suspension));
                }
                let message = super::durable::suspended_message(&suspension);
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(suspension);
                return Err(ToolError::with_info(
                    message,
                    ErrorInfo::new("CodeRunSuspendedError", "CODE_RUN_SUSPENDED"),
                ));
            }
        }
    }
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

/// One binding per visible tool of the calling agent, except `run_code` (rule 4).
fn bindings(
    registry: &ToolRegistry,
    exec: &dsh_tools::exec::ToolExecution,
    run: &Arc<Run>,
    run_cancel: &CancellationToken,
) -> BindingNamespace {
    let functions = registry
        .visible(exec.agent)
        .into_iter()
        .filter(|def| def.name() != RUN_CODE_NAME)
        .map(|def| {
            let name = def.name().to_owned();
            let function = binding(name.clone(), exec, run, run_cancel);
            (name, function)
        })
        .collect();
    BindingNamespace {
        global: "tools".into(),
        functions,
        error_class: Some(ErrorClass {
            name: "ToolCallError".into(),
            member_name_property: "toolName".into(),
        }),
    }
}

fn binding(
    name: String,
    exec: &dsh_tools::exec::ToolExecution,
    run: &Arc<Run>,
    run_cancel: &CancellationToken,
) -> BindingFn {
    let run = Arc::clone(run);
    let run_cancel = run_cancel.clone();
    let (call_id, root, agent, parent) = (
        Arc::clone(&exec.call_id),
        Arc::clone(&exec.root_call_id),
        exec.agent,
        exec.token,
    );
    Arc::new(move |arguments: Value| {
        let name = name.clone();
        // Rule 10: the run is over.
        if run.over.is_cancelled() {
            let message = format!(
                "run_code run is over ({}); {name} not dispatched",
                run.reason()
            );
            return Box::pin(std::future::ready(Err(message)));
        }
        // Rule 11: only lossless JSON is dispatched (the sandbox already refused exotic values).
        if !is_lossless(&arguments) {
            return Box::pin(std::future::ready(Err(
                "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)".to_owned(),
            )));
        }
        let (reply, answer) = oneshot::channel();
        let step = {
            let mut intake = run.submit.lock().unwrap_or_else(PoisonError::into_inner);
            let lane_index = intake.lane_index;
            match &intake.sender {
                None => Step::Over,
                Some(sender) => {
                    let number = run.next.fetch_add(1, Ordering::SeqCst) + 1;
                    let check = match &run.durable {
                        Some(durable) => durable.check(number, &name, &arguments),
                        None => Check::Live,
                    };
                    match check {
                        Check::Replay(entry) => {
                            Step::Replayed(Box::new((number, arguments, entry)))
                        }
                        Check::Diverged(message) => Step::Refused(message),
                        Check::Live => {
                            run.replies
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .insert(
                                    lane_index,
                                    Pending {
                                        number,
                                        name: name.clone(),
                                        arguments: arguments.clone(),
                                        reply,
                                    },
                                );
                            let mut input = ToolExecutionInput::new(
                                format!("{call_id}:code:{number}"),
                                name.clone(),
                                arguments,
                            );
                            input.root_call_id = Some(root.to_string());
                            input.agent = agent;
                            input.parent = Some(parent);
                            input.cancel = match &run.durable {
                                Some(durable) => durable.live_cancel(number, &run_cancel),
                                None => run_cancel.clone(),
                            };
                            // A closed lane means the run is over; the reply then says so.
                            let _ = sender.send(input);
                            intake.lane_index += 1;
                            Step::Submitted
                        }
                    }
                }
            }
        };
        let run = Arc::clone(&run);
        Box::pin(async move {
            match step {
                Step::Over => Err(format!(
                    "run_code run is over ({}); {name} not dispatched",
                    run.reason()
                )),
                Step::Refused(message) => Err(message),
                Step::Replayed(replayed) => {
                    let (number, arguments, entry) = *replayed;
                    if let Some(durable) = &run.durable {
                        durable.replay_effects(number, &arguments, &entry);
                    }
                    entry.settled.answer()
                }
                Step::Submitted => answer.await.unwrap_or_else(|_| {
                    Err(format!(
                        "run_code run is over ({}); {name} result discarded",
                        run.reason()
                    ))
                }),
            }
        })
    })
}

/// What a binding did with one call.
enum Step {
    /// The run is over: nothing submitted.
    Over,
    /// Submitted to the lane: the commit answers.
    Submitted,
    /// Answered from the journal (sub-call number, arguments, entry).
    Replayed(Box<(usize, Value, super::durable::JournalEntry)>),
    /// Refused (a divergence).
    Refused(String),
}

/// Where settled sub-calls are logged: the event sink and the dispatch-log listeners.
type EventLog<'a> = (&'a dyn CodeEventSink, &'a [DispatchLogFn]);

/// Rule 14: a committed sub-call's effects on the outer call, then its binding settles.
fn settle(run: &Run, ctx: &ToolRunContext, log: Option<EventLog<'_>>, event: LaneEvent) {
    let (index, result) = match event {
        LaneEvent::Abandoned(index) => {
            if let Some(pending) = take_reply(run, index) {
                let _ = pending.reply.send(Err(format!(
                    "run_code run is over ({}); {} tool call abandoned",
                    run.reason(),
                    pending.name
                )));
            }
            return;
        }
        LaneEvent::Committed(index, result) => (index, result),
    };
    let mut contexts = Vec::new();
    if let ToolExecutionResult::Success(success) = &result {
        if success
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::Image { .. }))
        {
            contexts.push(ContextMessage {
                content: success.content.clone(),
                source: Some(dsh_tools::content::ContextSource {
                    kind: "plugin".into(),
                    plugin: Some("tools-code-mode".into()),
                }),
            });
        }
        if success.concludes_turn {
            ctx.conclude_turn();
        }
    }
    contexts.extend(result.additional_contexts().iter().cloned());
    let Some(Pending {
        number,
        name,
        arguments,
        reply,
    }) = take_reply(run, index)
    else {
        for context in contexts {
            ctx.defer_context(context);
        }
        return;
    };
    let mut logged = true;
    if let Some(durable) = &run.durable {
        // The call a run suspended on is not journaled, nor logged as settled: it runs when
        // the run resumes.
        logged = !durable.is_suspended_call(number);
        durable.committed(number, &name, &arguments, &result, contexts.clone());
    }
    for context in contexts {
        ctx.defer_context(context);
    }
    if let Some((sink, chain)) = log.filter(|_| logged) {
        let event = CodeDispatchEvent::settled(ctx.execution(), number, &name, arguments, &result);
        emit(sink, event.shaped(chain));
    }
    let answer = if run.over.is_cancelled() {
        Err(format!(
            "run_code run is over ({}); {name} result discarded",
            run.reason()
        ))
    } else {
        match result {
            ToolExecutionResult::Success(success) => Ok(success.value),
            ToolExecutionResult::Failure(failure) => Err(failure.error.message().to_owned()),
        }
    };
    let _ = reply.send(answer);
}

fn take_reply(run: &Run, index: usize) -> Option<Pending> {
    run.replies
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&index)
}
