//! The batch state machine: one preparation at a time, overlapping dispatches, one commit at a
//! time — all polled from the task that awaits the batch.

use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use dsh_tools::definition::BoxFuture;
use dsh_tools::exec::{ToolExecutionInput, ToolExecutionMode, ToolExecutionResult};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tracing::Instrument;

use crate::pipeline::{Execution, Prepared};
use crate::registry::ToolRegistry;

/// A prepared call: its execution and its `tool.execute` span.
struct Call {
    execution: Arc<Execution>,
    span: tracing::Span,
    started: Instant,
}

type Preparing = BoxFuture<'static, (usize, Call, Prepared)>;
type Dispatching = BoxFuture<'static, (usize, Prepared)>;

/// Drives one batch to completion (see the module docs of [`crate::batch`]).
pub(super) struct Scheduler {
    registry: ToolRegistry,
    cap: usize,
    /// Calls not yet prepared; the front one has index `next_prepare`.
    inputs: VecDeque<ToolExecutionInput>,
    next_prepare: usize,
    /// The classification of the front input, computed once.
    head_mode: Option<ToolExecutionMode>,
    /// The exclusive call currently running its pipeline alone.
    barrier: Option<usize>,
    preparing: Option<Preparing>,
    /// A prepared call waiting for a dispatch slot.
    ready_to_launch: Option<usize>,
    in_flight: FuturesUnordered<Dispatching>,
    /// Per call: its execution once prepared (taken by the commit).
    calls: Vec<Option<Call>>,
    /// Per call: its post- or final result once known (taken by the commit).
    outcomes: Vec<Option<Prepared>>,
    committing: Option<BoxFuture<'static, ToolExecutionResult>>,
    /// The results committed so far, in call order.
    results: Vec<ToolExecutionResult>,
}

impl Scheduler {
    pub(super) fn new(
        registry: ToolRegistry,
        inputs: Vec<ToolExecutionInput>,
        cap: NonZeroUsize,
    ) -> Self {
        let total = inputs.len();
        Self {
            registry,
            cap: cap.get(),
            inputs: inputs.into(),
            next_prepare: 0,
            head_mode: None,
            barrier: None,
            preparing: None,
            ready_to_launch: None,
            in_flight: FuturesUnordered::new(),
            calls: std::iter::repeat_with(|| None).take(total).collect(),
            outcomes: std::iter::repeat_with(|| None).take(total).collect(),
            committing: None,
            results: Vec::with_capacity(total),
        }
    }

    fn total(&self) -> usize {
        self.calls.len()
    }

    /// The index of the next call to commit.
    fn next_commit(&self) -> usize {
        self.results.len()
    }

    /// Finishes the running commit, or starts the next one once its outcome is known.
    fn poll_commit(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(commit) = &mut self.committing {
            let Poll::Ready(result) = commit.as_mut().poll(cx) else {
                return false;
            };
            self.results.push(result);
            self.committing = None;
            return true;
        }
        let index = self.next_commit();
        let Some(outcome) = self.outcomes.get_mut(index).and_then(Option::take) else {
            return false;
        };
        let Some(call) = self.calls[index].take() else {
            unreachable!("a call with an outcome was prepared");
        };
        self.committing = Some(Box::pin(commit(self.registry.clone(), call, outcome)));
        true
    }

    /// Collects settled dispatches and launches the waiting call when a slot is free.
    fn poll_dispatches(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        while let Poll::Ready(Some((index, prepared))) = self.in_flight.poll_next_unpin(cx) {
            self.outcomes[index] = Some(prepared);
            progressed = true;
        }
        if let Some(index) = self.ready_to_launch
            && self.in_flight.len() < self.cap
        {
            self.ready_to_launch = None;
            let Some(call) = &self.calls[index] else {
                unreachable!("a call ready to launch was prepared");
            };
            let registry = self.registry.clone();
            let execution = Arc::clone(&call.execution);
            let span = call.span.clone();
            self.in_flight.push(Box::pin(async move {
                (index, registry.dispatch(&execution).instrument(span).await)
            }));
            progressed = true;
        }
        progressed
    }

    /// Finishes the running preparation, or starts the next one when the rules allow it.
    fn poll_prepare(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(preparing) = &mut self.preparing {
            let Poll::Ready((index, call, prepared)) = preparing.as_mut().poll(cx) else {
                return false;
            };
            self.preparing = None;
            self.calls[index] = Some(call);
            match prepared {
                Prepared::Dispatch => self.ready_to_launch = Some(index),
                other => self.outcomes[index] = Some(other),
            }
            return true;
        }
        if self.ready_to_launch.is_some() || !self.may_prepare_head() {
            return false;
        }
        let Some(input) = self.inputs.pop_front() else {
            return false;
        };
        let index = self.next_prepare;
        self.next_prepare += 1;
        if self.head_mode.take() == Some(ToolExecutionMode::Exclusive) {
            self.barrier = Some(index);
        }
        self.preparing = Some(Box::pin(prepare(self.registry.clone(), index, input)));
        true
    }

    /// Whether the front input may start preparing: no exclusive call is running, and an
    /// exclusive front input waits for every earlier call to be committed.
    fn may_prepare_head(&mut self) -> bool {
        if self
            .barrier
            .is_some_and(|barrier| self.next_commit() <= barrier)
        {
            return false;
        }
        self.barrier = None;
        let Some(input) = self.inputs.front() else {
            return false;
        };
        let registry = &self.registry;
        let mode = *self
            .head_mode
            .get_or_insert_with(|| registry.execution_mode(input));
        mode == ToolExecutionMode::Parallel || self.next_commit() == self.next_prepare
    }
}

impl Future for Scheduler {
    type Output = Vec<ToolExecutionResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            // Each step registers the waker of whatever it waits on; loop while anything moved
            // so a future started in this poll is polled before returning `Pending`.
            let mut progressed = this.poll_commit(cx);
            progressed |= this.poll_dispatches(cx);
            progressed |= this.poll_prepare(cx);
            if this.next_commit() == this.total() {
                return Poll::Ready(std::mem::take(&mut this.results));
            }
            if !progressed {
                return Poll::Pending;
            }
        }
    }
}

/// Stages 1–9 of one call, under its own `tool.execute` span.
async fn prepare(
    registry: ToolRegistry,
    index: usize,
    input: ToolExecutionInput,
) -> (usize, Call, Prepared) {
    let span = tracing::info_span!(
        "tool.execute",
        tool = %input.name,
        call_id = %input.call_id,
        nested = input.parent.is_some(),
        batch_index = index,
        outcome = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    );
    let started = Instant::now();
    let (mut execution, failed) = registry.create_execution(input);
    let prepared = match failed {
        Some(result) => Prepared::FinalResult(result),
        None => {
            registry
                .prepare(&mut execution)
                .instrument(span.clone())
                .await
        }
    };
    let call = Call {
        execution: Arc::new(execution),
        span,
        started,
    };
    (index, call, prepared)
}

/// Stages 15–21 of one call: post-execute for post-results, then finishing.
async fn commit(registry: ToolRegistry, call: Call, outcome: Prepared) -> ToolExecutionResult {
    let Call {
        execution,
        span,
        started,
    } = call;
    let result = match outcome {
        Prepared::PostResult(result) => {
            registry
                .post_execute(&execution, result)
                .instrument(span.clone())
                .await
        }
        Prepared::FinalResult(result) => result,
        Prepared::Dispatch => ToolExecutionResult::failure(dsh_tools::ToolError::msg(
            "internal error: dispatch did not produce a result",
        )),
    };
    let result = span.in_scope(|| registry.finish(&execution, result));
    span.record("outcome", if result.is_error() { "error" } else { "ok" });
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
    result
}
