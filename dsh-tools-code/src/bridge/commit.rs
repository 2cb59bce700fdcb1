//! Rule 13: a committed sub-call's effects on the outer call, its journal entry and log
//! event, then its binding settles.

use std::sync::PoisonError;

use dsh_tools::exec::{ToolExecutionResult, ToolRunContext};
use dsh_tools::{ContentBlock, ContextMessage};

use super::{Pending, Run};
use crate::dispatch_log::DispatchLogFn;
use crate::events::{CodeDispatchEvent, CodeEventSink, emit};
use dsh_tools_core::extension::LaneEvent;

/// Where settled sub-calls are logged: the event sink and the dispatch-log listeners.
pub(super) type EventLog<'a> = (&'a dyn CodeEventSink, &'a [DispatchLogFn]);

/// Rule 13: a committed sub-call's effects on the outer call, then its binding settles.
pub(super) fn settle(run: &Run, ctx: &ToolRunContext, log: Option<EventLog<'_>>, event: LaneEvent) {
    let (index, result) = match event {
        LaneEvent::Abandoned(index) => {
            let mut replies = run.replies.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(pending) = replies.take(index) {
                let message = format!(
                    "run_code run is over ({}); {} tool call abandoned",
                    run.reason(),
                    pending.name
                );
                replies.answer(index, Err(message));
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
        if let Some(arguments) = &arguments {
            durable.committed(number, &name, arguments, &result, contexts.clone());
        }
    }
    for context in contexts {
        ctx.defer_context(context);
    }
    if let (Some((sink, chain)), Some(arguments)) = (log.filter(|_| logged), arguments) {
        let event = CodeDispatchEvent::settled(ctx.execution(), number, &name, arguments, &result);
        emit(sink, event.shaped(chain));
    }
    let answer = if run.is_over() {
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
    run.replies
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .answer(index, answer);
}

fn take_reply(run: &Run, index: usize) -> Option<Pending> {
    run.replies
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take(index)
}
