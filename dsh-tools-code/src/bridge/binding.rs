//! The program's `tools.*` bindings: each call is numbered, answered from the journal of a
//! resumed run, refused (a divergence, a run that is over) or submitted to the run's lane.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use dsh_tools::ToolDefinition;
use dsh_tools::exec::{ExecutionToken, ProgressObserver, ScopeId, ToolExecution};
use dsh_tools::json::is_lossless;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Pending, Run};
use crate::durable::{Check, JournalEntry};
use crate::runtime::{BindingFn, BindingNamespace, ErrorClass};
use crate::texts::{ARGS_NOT_LOSSLESS, RUN_CODE_NAME};
use dsh_tools_core::ToolRegistry;
use dsh_tools_core::extension::{CallInput, CallerCancel, SharedStr};

/// The tools a run's program may call: every visible tool of the calling agent (deferred ones
/// included: they stay executable), except
/// `run_code` (rule 4). A native-only tool keeps its binding (it is not in the SDK): calling it
/// fails with the pipeline's refusal, which says why.
pub(super) fn callable(registry: &ToolRegistry, agent: Option<ScopeId>) -> Vec<ToolDefinition> {
    registry
        .visible(agent)
        .into_iter()
        .filter(|def| def.name() != RUN_CODE_NAME)
        .collect()
}

/// One binding per callable tool, and tool search's `$search` / `$describe` (`helpers`).
pub(super) fn bindings(
    tools: &[ToolDefinition],
    helpers: impl IntoIterator<Item = (String, BindingFn)>,
    exec: &ToolExecution,
    run: &Arc<Run>,
    run_cancel: &CancellationToken,
) -> BindingNamespace {
    let outer = Arc::new(Outer {
        call_id: Arc::clone(&exec.call_id),
        root: Arc::clone(&exec.root_call_id),
        agent: exec.agent,
        parent: exec.token,
        // Sub-calls report progress where the program's own call does (`docs/CONTRACTS.md`,
        // "Progress").
        progress: exec.progress.clone(),
        // One token every sub-call of the run shares (no per-call clone of it).
        run_cancel: Arc::new(run_cancel.clone()),
    });
    let functions = tools
        .iter()
        .map(|def| {
            let name = def.name();
            (name.to_owned(), binding(name.into(), &outer, run))
        })
        .chain(helpers)
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

/// What every sub-call of a run takes from the `run_code` call: its ids, agent and token, where
/// progress goes, and the run's cancellation.
struct Outer {
    call_id: Arc<str>,
    root: Arc<str>,
    agent: Option<ScopeId>,
    parent: ExecutionToken,
    progress: Option<ProgressObserver>,
    run_cancel: Arc<CancellationToken>,
}

fn binding(name: Arc<str>, outer: &Arc<Outer>, run: &Arc<Run>) -> BindingFn {
    let (run, outer) = (Arc::clone(run), Arc::clone(outer));
    Arc::new(move |arguments: Value| {
        let name = name.clone();
        // Rule 9: the run is over.
        if run.is_over() {
            let message = format!(
                "run_code run is over ({}); {name} not dispatched",
                run.reason()
            );
            return Box::pin(std::future::ready(Err(message)));
        }
        // Rule 10: only lossless JSON is dispatched (the sandbox already refused exotic values).
        if !is_lossless(&arguments) {
            return Box::pin(std::future::ready(Err(ARGS_NOT_LOSSLESS.to_owned())));
        }
        let step = step(&run, &outer, &name, arguments);
        Box::pin(answer(Arc::clone(&run), name, step))
    })
}

/// Numbers one call and, under the intake's lock (numbers follow submission order), answers it
/// from the journal, refuses it, or submits it to the lane.
fn step(run: &Run, outer: &Outer, name: &Arc<str>, arguments: Value) -> Step {
    let mut intake = run.submit.lock().unwrap_or_else(PoisonError::into_inner);
    let lane_index = intake.lane_index;
    let Some(lane) = &intake.lane else {
        return Step::Over;
    };
    // A resumed snapshot's awaited calls keep their numbers.
    let number = run
        .durable
        .as_ref()
        .and_then(|durable| durable.renumbered())
        .unwrap_or_else(|| run.next.fetch_add(1, Ordering::SeqCst) + 1);
    let check = match &run.durable {
        Some(durable) => durable.check(number, name, &arguments),
        None => Check::Live,
    };
    match check {
        Check::Replay(entry) => Step::Replayed(Box::new((number, arguments, entry))),
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
                        arguments: run.keeps_arguments.then(|| arguments.clone()),
                    },
                );
            let input = CallInput {
                call_id: SharedStr::Shared(sub_call_id(&outer.call_id, number)),
                root_call_id: Some(SharedStr::Shared(Arc::clone(&outer.root))),
                name: SharedStr::Shared(Arc::clone(name)),
                arguments,
                cancel: match &run.durable {
                    Some(durable) => {
                        CallerCancel::Own(durable.live_cancel(number, &outer.run_cancel))
                    }
                    None => CallerCancel::Shared(Arc::clone(&outer.run_cancel)),
                },
                agent: outer.agent,
                parent: Some(outer.parent),
                progress: outer.progress.clone(),
                // A program's sub-calls ask the host, not the MCP client.
                caller: None,
            };
            let submitted = lane.submit(input);
            intake.lane_index += 1;
            if submitted {
                Step::Submitted(lane_index, number)
            } else {
                // A closed lane: the run is over, and the call never runs.
                run.replies
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take(lane_index);
                Step::Over
            }
        }
    }
}

/// What the program's promise settles to, once the call `step` took has an answer.
async fn answer(run: Arc<Run>, name: Arc<str>, step: Step) -> Result<Value, String> {
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
        Step::Submitted(index, number) => {
            let answer = std::future::poll_fn(|cx| {
                let mut replies = run.replies.lock().unwrap_or_else(PoisonError::into_inner);
                replies.poll_answer(index, cx)
            });
            let answer = answer.await.unwrap_or_else(|| {
                Err(format!(
                    "run_code run is over ({}); {name} result discarded",
                    run.reason()
                ))
            });
            // A run journaled in a store: the entry is written before the program
            // sees the result.
            #[cfg(feature = "store")]
            if let Some(durable) = &run.durable {
                durable.persist(number).await?;
            }
            #[cfg(not(feature = "store"))]
            let _ = number;
            answer
        }
    }
}

/// `<call_id>:code:<number>`, the id of a sub-call (written without the formatting machinery:
/// it is made for every call).
fn sub_call_id(call_id: &str, number: usize) -> Arc<str> {
    const MARK: &str = ":code:";
    /// Ids up to this long are put together on the stack (one allocation: the shared string).
    const ON_STACK: usize = 96;
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    let parts = [call_id.as_bytes(), MARK.as_bytes(), digits];
    let len = parts.iter().map(|part| part.len()).sum::<usize>();
    // Fast path of the `String` route below; held equal by `tests::sub_call_ids_number_the_calls`.
    if len <= ON_STACK {
        let mut id = [0u8; ON_STACK];
        let mut end = 0;
        for part in parts {
            id[end..end + part.len()].copy_from_slice(part);
            end += part.len();
        }
        // A whole `str`, then ASCII: always valid UTF-8 (checked all the same, without a
        // way to fail: a failure would take the general path below).
        if let Ok(id) = std::str::from_utf8(&id[..end]) {
            return Arc::from(id);
        }
    }
    let mut id = String::with_capacity(len);
    id.push_str(call_id);
    id.push_str(MARK);
    id.extend(digits.iter().map(|&digit| char::from(digit)));
    Arc::from(id)
}

/// What a binding did with one call.
enum Step {
    /// The run is over: nothing submitted.
    Over,
    /// Submitted to the lane as its call of this index (sub-call number): the commit answers.
    Submitted(usize, usize),
    /// Answered from the journal (sub-call number, arguments, entry).
    Replayed(Box<(usize, Value, JournalEntry)>),
    /// Refused (a divergence).
    Refused(String),
}

#[cfg(test)]
mod tests {
    use super::sub_call_id;

    #[test]
    fn sub_call_ids_number_the_calls() {
        for number in [0, 1, 9, 10, 42, 1_000_007, usize::MAX] {
            assert_eq!(
                &*sub_call_id("call-1", number),
                format!("call-1:code:{number}")
            );
            // Past the stack buffer: the same id.
            let long = "c".repeat(200);
            assert_eq!(
                &*sub_call_id(&long, number),
                format!("{long}:code:{number}")
            );
        }
    }
}
