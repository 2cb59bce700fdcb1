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

use super::events::{CodeDispatchEvent, CodeEventSink, emit};
use super::host_work::HostWork;
use super::runtime::{BindingFn, BindingNamespace, CodeRunRequest, ErrorClass};
use crate::RUN_CODE_NAME;
use crate::batch::scheduler::{LaneEvent, OnStart, Scheduler};
use crate::hooks::DispatchLogFn;
use crate::registry::ToolRegistry;

/// Why a run is over, for the messages of rules 10, 13 and 15.
const SETTLED: &str = "run_code settled";
const CANCELLED: &str = "run_code cancelled";

type Reply = oneshot::Sender<Result<Value, String>>;

/// A submitted sub-call waiting for its commit.
struct Pending {
    name: String,
    /// The logged copy of the arguments (independent of the dispatched one).
    arguments: Value,
    reply: Reply,
}

/// The per-run state shared by the bindings and the commit pump.
struct Run {
    /// Submission: numbering and the channel send happen under one lock, so sub-call numbers
    /// follow submission order.
    submit: Mutex<Option<mpsc::UnboundedSender<ToolExecutionInput>>>,
    next: AtomicUsize,
    replies: Mutex<HashMap<usize, Pending>>,
    over: CancellationToken,
    reason: Mutex<&'static str>,
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
    let (submit, source) = mpsc::unbounded_channel();
    let (events, mut committed) = mpsc::unbounded_channel();
    let run = Arc::new(Run {
        submit: Mutex::new(Some(submit)),
        next: AtomicUsize::new(0),
        replies: Mutex::new(HashMap::new()),
        over: CancellationToken::new(),
        reason: Mutex::new(SETTLED),
    });
    let sink = registry.event_sink().filter(|_| exec.agent.is_some());
    let log_chain: Vec<DispatchLogFn> = match sink {
        Some(_) => registry.filtered(&registry.inner.hook_tables().dispatch_log, &exec),
        None => Vec::new(),
    };
    let on_start: Option<OnStart> = sink.clone().map(|sink| {
        let parent = Arc::clone(&exec.call_id);
        Arc::new(move |input: &ToolExecutionInput| {
            emit(&*sink, CodeDispatchEvent::start(input, &parent));
        }) as OnStart
    });
    let scheduler = Scheduler::stream(
        registry.clone(),
        source,
        events,
        run.over.clone(),
        registry.config().max_parallel_sub_calls,
        on_start,
    );

    // Rule 14's commits, in submission order, as the lane reports them.
    let pump = {
        let (run, ctx) = (Arc::clone(&run), ctx.clone());
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
    let clock = registry.open_run_clock(exec.token);
    let mut request = CodeRunRequest::new(program, vec![bindings])
        .with_cancellation(run_cancel.clone())
        .with_clock(clock.clock().clone());
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
            // Rule 6: the run is over — abandon what has not started, stop the rest.
            run.over.cancel();
            run_cancel.cancel();
            run.submit
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
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
    if let Some(error) = result.error {
        let mut message = format!("code run failed ({}): {}", error.kind, error.message);
        if !result.logs.is_empty() {
            message.push_str("\nCaptured output:\n");
            message.push_str(&result.logs.join("\n"));
        }
        return Err(ToolError::with_info(
            message,
            ErrorInfo::new("CodeRunFailedError", "CODE_RUN_FAILED"),
        ));
    }
    let mut value = json!({"logs": result.logs});
    if let Some(completion) = result.value {
        value["result"] = completion;
    }
    Ok(value)
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
    // Sub-calls report progress where the program's own call does (`docs/CONTRACTS.md`,
    // "Progress").
    let progress = exec.progress.clone();
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
        let submitted = {
            let submit = run.submit.lock().unwrap_or_else(PoisonError::into_inner);
            submit.as_ref().map(|submit| {
                let index = run.next.fetch_add(1, Ordering::SeqCst);
                run.replies
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(
                        index,
                        Pending {
                            name: name.clone(),
                            arguments: arguments.clone(),
                            reply,
                        },
                    );
                let mut input = ToolExecutionInput::new(
                    format!("{call_id}:code:{}", index + 1),
                    name.clone(),
                    arguments,
                );
                input.root_call_id = Some(root.to_string());
                input.agent = agent;
                input.parent = Some(parent);
                input.cancel = run_cancel.clone();
                input.progress = progress.clone();
                // A closed lane means the run is over; the reply then says so.
                let _ = submit.send(input);
            })
        };
        let run = Arc::clone(&run);
        Box::pin(async move {
            if submitted.is_none() {
                return Err(format!(
                    "run_code run is over ({}); {name} not dispatched",
                    run.reason()
                ));
            }
            answer.await.unwrap_or_else(|_| {
                Err(format!(
                    "run_code run is over ({}); {name} result discarded",
                    run.reason()
                ))
            })
        })
    })
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
    if let ToolExecutionResult::Success(success) = &result {
        if success
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::Image { .. }))
        {
            ctx.defer_context(ContextMessage {
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
    for context in result.additional_contexts() {
        ctx.defer_context(context.clone());
    }
    let Some(Pending {
        name,
        arguments,
        reply,
    }) = take_reply(run, index)
    else {
        return;
    };
    if let Some((sink, chain)) = log {
        let event = CodeDispatchEvent::settled(ctx.execution(), index, &name, arguments, &result);
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
