//! The batch state machine: one preparation at a time, overlapping dispatches, one commit at a
//! time — all polled from the task that awaits the batch.
//!
//! The same machine serves two shapes: a fixed batch (all inputs known, results collected in
//! call order) and a stream (Code Mode sub-calls: inputs arrive over a channel while the program
//! runs, each committed result is reported as it commits, and unstarted calls are abandoned once
//! the run is over).

#![cfg_attr(
    not(feature = "code-mode"),
    allow(dead_code, reason = "the stream shape serves Code Mode sub-calls")
)]

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
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;
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

/// What the stream shape reports, in call order.
#[derive(Debug)]
pub(crate) enum LaneEvent {
    /// The call's final result (after post-execute and finishing).
    Committed(usize, ToolExecutionResult),
    /// The call was never started: the run was over first.
    Abandoned(usize),
}

/// Where inputs come from and results go.
enum Shape {
    /// A fixed batch: results collected in call order.
    Batch(Vec<ToolExecutionResult>),
    /// A stream of inputs; results reported on `events`. Once `over` fires, unstarted inputs
    /// are abandoned and no new input is accepted.
    Stream {
        source: Option<UnboundedReceiver<ToolExecutionInput>>,
        events: UnboundedSender<LaneEvent>,
        over: CancellationToken,
        committed: usize,
        abandoned: usize,
        on_start: Option<OnStart>,
    },
}

/// Called when a streamed call starts (before its preparation).
pub(crate) type OnStart = Arc<dyn Fn(&ToolExecutionInput) + Send + Sync>;

/// Drives one batch to completion (see the module docs of [`crate::batch`]).
pub(crate) struct Scheduler {
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
    shape: Shape,
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
            shape: Shape::Batch(Vec::with_capacity(total)),
        }
    }

    /// A streaming lane: inputs arrive on `source`, results are reported on `events` in call
    /// order, and once `over` is cancelled the unstarted inputs are abandoned.
    pub(crate) fn stream(
        registry: ToolRegistry,
        source: UnboundedReceiver<ToolExecutionInput>,
        events: UnboundedSender<LaneEvent>,
        over: CancellationToken,
        cap: NonZeroUsize,
        on_start: Option<OnStart>,
    ) -> Self {
        let mut scheduler = Self::new(registry, Vec::new(), cap);
        scheduler.shape = Shape::Stream {
            source: Some(source),
            events,
            over,
            committed: 0,
            abandoned: 0,
            on_start,
        };
        scheduler
    }

    fn total(&self) -> usize {
        self.calls.len()
    }

    /// The index of the next call to commit.
    fn next_commit(&self) -> usize {
        match &self.shape {
            Shape::Batch(results) => results.len(),
            Shape::Stream { committed, .. } => *committed,
        }
    }

    fn record(&mut self, result: ToolExecutionResult) {
        match &mut self.shape {
            Shape::Batch(results) => results.push(result),
            Shape::Stream {
                events, committed, ..
            } => {
                // The receiver may be gone (the bridge stopped listening): nothing to report to.
                let _ = events.send(LaneEvent::Committed(*committed, result));
                *committed += 1;
            }
        }
    }

    /// Stream shape: takes new inputs, and abandons unstarted ones once the run is over.
    /// Returns whether anything changed.
    fn poll_source(&mut self, cx: &mut Context<'_>) -> bool {
        let Shape::Stream {
            source,
            events,
            over,
            abandoned,
            ..
        } = &mut self.shape
        else {
            return false;
        };
        let mut progressed = false;
        if over.is_cancelled() {
            // No new call starts once the run is over: what is queued (here or still in the
            // channel) is abandoned; started calls run to their commit.
            if let Some(mut closed) = source.take() {
                closed.close();
                while let Ok(input) = closed.try_recv() {
                    self.inputs.push_back(input);
                    self.calls.push(None);
                    self.outcomes.push(None);
                }
                progressed = true;
            }
            while self.inputs.pop_front().is_some() {
                let index = self.next_prepare;
                self.next_prepare += 1;
                self.head_mode = None;
                *abandoned += 1;
                let _ = events.send(LaneEvent::Abandoned(index));
                progressed = true;
            }
            return progressed;
        }
        if let Some(receiver) = source {
            loop {
                match receiver.poll_recv(cx) {
                    Poll::Ready(Some(input)) => {
                        self.inputs.push_back(input);
                        self.calls.push(None);
                        self.outcomes.push(None);
                        progressed = true;
                    }
                    Poll::Ready(None) => {
                        *source = None;
                        progressed = true;
                        break;
                    }
                    Poll::Pending => break,
                }
            }
        }
        progressed
    }

    /// Whether every call that will ever exist has been committed (or abandoned).
    fn done(&self) -> bool {
        match &self.shape {
            Shape::Batch(_) => self.next_commit() == self.total(),
            Shape::Stream {
                source,
                committed,
                abandoned,
                ..
            } => {
                source.is_none()
                    && self.inputs.is_empty()
                    && self.preparing.is_none()
                    && self.committing.is_none()
                    && self.in_flight.is_empty()
                    && self.ready_to_launch.is_none()
                    && committed + abandoned == self.next_prepare
            }
        }
    }

    /// Finishes the running commit, or starts the next one once its outcome is known.
    fn poll_commit(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(commit) = &mut self.committing {
            let Poll::Ready(result) = commit.as_mut().poll(cx) else {
                return false;
            };
            self.record(result);
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
        if let Shape::Stream {
            on_start: Some(on_start),
            ..
        } = &self.shape
        {
            on_start(&input);
        }
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
            let mut progressed = this.poll_source(cx);
            progressed |= this.poll_commit(cx);
            progressed |= this.poll_dispatches(cx);
            progressed |= this.poll_prepare(cx);
            if this.done() {
                return Poll::Ready(match &mut this.shape {
                    Shape::Batch(results) => std::mem::take(results),
                    Shape::Stream { .. } => Vec::new(),
                });
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
