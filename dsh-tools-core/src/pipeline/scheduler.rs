//! The batch state machine: one preparation at a time, overlapping dispatches, one commit at a
//! time — all polled from the task that awaits the batch. Each call goes through the pipeline's
//! phases (begin + prepare, dispatch, commit); only dispatch overlaps.
//!
//! The same machine serves two shapes: a fixed batch (all inputs known, results collected in
//! call order) and a stream (a lane: inputs arrive in its intake while their submitter runs —
//! Code Mode's sub-calls — each committed result is reported as it commits, and unstarted calls
//! are abandoned once the submitter is over).

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

use super::first_poll::FirstPoll;
use super::hooks::PreExecuteFn;
use super::intake::LaneIntake;
use super::{Call, CallInput, CommitNow, Host, Prepared, Resolved, call_span, record_outcome};

/// A prepared call and its `tool.execute` span.
struct Started {
    call: Call,
    span: tracing::Span,
    /// When it started (only when the span is recorded: the clock is read for its duration).
    started: Option<Instant>,
}

type Preparing = BoxFuture<'static, (usize, Started, Prepared)>;
/// One call's place in the scheduler.
#[derive(Default)]
struct Slot {
    /// Its execution once prepared.
    started: Option<Started>,
    /// Its post- or final result once known.
    outcome: Option<Prepared>,
}

/// A dispatch in flight: it holds its call, and gives it back with the outcome.
type Dispatching = BoxFuture<'static, (usize, Started, Prepared)>;

/// What the stream shape reports, in call order.
#[derive(Debug)]
pub enum LaneEvent {
    /// The call's final result (after post-execute and finishing).
    Committed(usize, ToolExecutionResult),
    /// The call was never started: the run was over first.
    Abandoned(usize),
}

/// Where inputs come from and results go.
enum Shape {
    /// A fixed batch: results collected in call order.
    Batch(Vec<ToolExecutionResult>),
    /// A stream of inputs; results reported in `events` (taken with
    /// [`Scheduler::take_events`] after each poll). Once the intake closes, unstarted inputs are
    /// abandoned.
    Stream {
        source: Option<Arc<LaneIntake>>,
        /// Whether the submitter checked that arguments are lossless JSON.
        checked: bool,
        events: VecDeque<LaneEvent>,
        committed: usize,
        abandoned: usize,
        on_start: Option<OnStart>,
    },
}

/// Called when a streamed call starts (before its preparation).
pub type OnStart = Arc<dyn Fn(&CallInput) + Send + Sync>;

/// Drives one batch (or one lane) to completion (see the module docs of [`crate::batch`]).
pub(crate) struct Scheduler<H: Host> {
    host: H,
    cap: usize,
    /// Calls not yet prepared; the front one has index `next_prepare`.
    inputs: VecDeque<CallInput>,
    next_prepare: usize,
    /// The classification of the front input, computed once, with the resolution it made
    /// (which the call's creation reuses while the registry is unchanged).
    head_mode: Option<(ToolExecutionMode, Option<Resolved>)>,
    /// The exclusive call currently running its pipeline alone.
    barrier: Option<usize>,
    preparing: Option<Preparing>,
    /// A prepared call waiting for a dispatch slot.
    ready_to_launch: Option<usize>,
    in_flight: FuturesUnordered<Dispatching>,
    /// Per call: its execution once prepared and its post- or final result once known (both
    /// taken by the commit). One vector: a batch makes one allocation for its calls.
    slots: Vec<Slot>,
    committing: Option<BoxFuture<'static, ToolExecutionResult>>,
    shape: Shape,
    /// Stream shape: the span current when the lane was made (a Code Mode run's `tool.execute`),
    /// the parent of its calls' spans, and its subscriber — a lane is polled wherever its owner
    /// polls it (a sandbox thread), outside that span and maybe without that thread's default
    /// subscriber. `None` when no span was current.
    parent: Option<(tracing::Span, tracing::Dispatch)>,
}

impl<H: Host> Scheduler<H> {
    /// A fixed batch: results collected in call order.
    pub(crate) fn batch(host: H, inputs: Vec<ToolExecutionInput>, cap: NonZeroUsize) -> Self {
        let total = inputs.len();
        Self {
            host,
            cap: cap.get(),
            inputs: inputs.into_iter().map(CallInput::from).collect(),
            next_prepare: 0,
            head_mode: None,
            barrier: None,
            preparing: None,
            ready_to_launch: None,
            in_flight: FuturesUnordered::new(),
            slots: std::iter::repeat_with(Slot::default).take(total).collect(),
            committing: None,
            shape: Shape::Batch(Vec::with_capacity(total)),
            parent: None,
        }
    }

    /// A streaming lane: inputs arrive on `source` (`checked`: with arguments already known to
    /// be lossless JSON), results are reported in call order (see [`Scheduler::take_events`]),
    /// and once the intake closes (the run is over) the unstarted inputs are abandoned.
    pub(crate) fn stream(
        host: H,
        source: Arc<LaneIntake>,
        checked: bool,
        cap: NonZeroUsize,
        on_start: Option<OnStart>,
    ) -> Self {
        let mut scheduler = Self::batch(host, Vec::new(), cap);
        scheduler.shape = Shape::Stream {
            source: Some(source),
            checked,
            events: VecDeque::new(),
            committed: 0,
            abandoned: 0,
            on_start,
        };
        let current = tracing::Span::current();
        scheduler.parent = current
            .with_subscriber(|(_, dispatch)| dispatch.clone())
            .map(|dispatch| (current, dispatch));
        scheduler
    }

    /// Stream shape: what happened to the lane's calls since the last time, in order (a
    /// lane's owner takes them after each poll; nothing is reported between polls).
    pub(crate) fn take_events(&mut self) -> impl Iterator<Item = LaneEvent> + '_ {
        let events = match &mut self.shape {
            Shape::Stream { events, .. } => Some(events.drain(..)),
            Shape::Batch(_) => None,
        };
        events.into_iter().flatten()
    }

    fn total(&self) -> usize {
        self.slots.len()
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
                events.push_back(LaneEvent::Committed(*committed, result));
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
            abandoned,
            ..
        } = &mut self.shape
        else {
            return false;
        };
        let Some(intake) = source else {
            return false;
        };
        let taken = intake.take(cx, &mut self.inputs);
        self.slots
            .extend(std::iter::repeat_with(Slot::default).take(taken.inputs));
        if !taken.closed {
            return taken.inputs > 0;
        }
        // No new call starts once the run is over: what is queued is abandoned; started calls
        // run to their commit.
        *source = None;
        while self.inputs.pop_front().is_some() {
            let index = self.next_prepare;
            self.next_prepare += 1;
            self.head_mode = None;
            *abandoned += 1;
            events.push_back(LaneEvent::Abandoned(index));
        }
        true
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

    /// Finishes the running commit, or starts the next one once its outcome is known. A commit
    /// with no post-execute stage to run (the common case) completes right here, without a
    /// future of its own.
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
        let Some(slot) = self.slots.get_mut(index) else {
            return false;
        };
        let Some(outcome) = slot.outcome.take() else {
            return false;
        };
        let Some(started) = slot.started.take() else {
            unreachable!("a call with an outcome was prepared");
        };
        self.commit(started, outcome);
        true
    }

    /// Commits the next call in order: right here when no post-execute stage runs, else as the
    /// running commit.
    #[inline]
    fn commit(&mut self, started: Started, outcome: Prepared) {
        match super::commit_now(&self.host, &started.call, outcome) {
            CommitNow::Finished(result) => {
                record_started(&started, &result);
                self.record(result);
            }
            CommitNow::Post(result) => {
                let host = self.host.clone();
                let post = Prepared::PostResult(result);
                self.committing = Some(Box::pin(commit_call(host, started, post)));
            }
        }
    }

    /// Collects settled dispatches and launches the waiting call when a slot is free.
    fn poll_dispatches(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        // An empty set has nothing to report (and polling it would only re-register the waker).
        while !self.in_flight.is_empty()
            && let Poll::Ready(Some((index, started, prepared))) =
                self.in_flight.poll_next_unpin(cx)
        {
            self.slots[index].started = Some(started);
            self.slots[index].outcome = Some(prepared);
            progressed = true;
        }
        progressed | self.launch(cx)
    }

    /// Launches the call waiting for a dispatch slot, when one is free.
    fn launch(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(index) = self.ready_to_launch else {
            return false;
        };
        if self.in_flight.len() >= self.cap {
            return false;
        }
        self.ready_to_launch = None;
        let Some(started) = self.slots[index].started.take() else {
            unreachable!("a call ready to launch was prepared");
        };
        self.dispatch(index, started, cx);
        true
    }

    /// Dispatches a prepared call (a dispatch slot is free): up to its body's first poll right
    /// here, where a body that completes (the common case for quick tools) needs no future of
    /// its own and its call is committed at once when it is next in order; a dispatch that goes
    /// on joins the set in flight, which polls it again (registering the set's own waker).
    fn dispatch(&mut self, index: usize, started: Started, cx: &mut Context<'_>) {
        let entered = started.span.enter();
        let first = super::first_poll::first_poll(&self.host, &started.call, cx);
        drop(entered);
        let host = &self.host;
        let dispatch: Dispatching = match first {
            FirstPoll::Done(prepared) => {
                if index == self.next_commit() && self.committing.is_none() {
                    self.commit(started, prepared);
                } else {
                    let slot = &mut self.slots[index];
                    slot.started = Some(started);
                    slot.outcome = Some(prepared);
                }
                return;
            }
            FirstPoll::Running(running) => {
                let span = started.span.clone();
                Box::pin(
                    async move {
                        let prepared = running.finish(&started.call).await;
                        (index, started, prepared)
                    }
                    .instrument(span),
                )
            }
            FirstPoll::Async if started.span.is_disabled() => {
                let host = host.clone();
                Box::pin(async move {
                    let prepared = super::dispatch(&host, &started.call).await;
                    (index, started, prepared)
                })
            }
            FirstPoll::Async => {
                let host = host.clone();
                Box::pin(async move {
                    let span = started.span.clone();
                    let prepared = super::dispatch(&host, &started.call).instrument(span).await;
                    (index, started, prepared)
                })
            }
        };
        self.in_flight.push(dispatch);
    }

    /// Finishes the running preparation, or starts the next one when the rules allow it.
    fn poll_prepare(&mut self, cx: &mut Context<'_>) -> bool {
        if let Some(preparing) = &mut self.preparing {
            let Poll::Ready((index, started, prepared)) = preparing.as_mut().poll(cx) else {
                return false;
            };
            self.preparing = None;
            self.slots[index].started = Some(started);
            match prepared {
                Prepared::Dispatch => self.ready_to_launch = Some(index),
                other => self.slots[index].outcome = Some(other),
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
        let (mode, resolved) = self
            .head_mode
            .take()
            .unwrap_or((ToolExecutionMode::Parallel, None));
        if mode == ToolExecutionMode::Exclusive {
            self.barrier = Some(index);
        }
        let checked = matches!(self.shape, Shape::Stream { checked: true, .. });
        // Phases 1–2 in place; only a pre-execute waterfall to await gets a future of its own.
        let span = call_span(
            &input,
            Some(index),
            self.parent.as_ref().map(|(span, _)| span),
        );
        let started = (!span.is_disabled()).then(Instant::now);
        let entered = span.enter();
        let mut call = super::begin_resolved(&self.host, input, checked, resolved);
        let prepared = match call.early_result() {
            Some(result) => Ok(Prepared::FinalResult(result)),
            None => self
                .host
                .pipeline()
                .policy
                .prepare_now(&self.host, &mut call),
        };
        drop(entered);
        match prepared {
            Ok(prepared) => {
                let started = Started {
                    call,
                    span,
                    started,
                };
                match prepared {
                    // Dispatched in this same pass when a dispatch slot is free.
                    Prepared::Dispatch if self.in_flight.len() < self.cap => {
                        self.dispatch(index, started, cx);
                    }
                    Prepared::Dispatch => {
                        self.slots[index].started = Some(started);
                        self.ready_to_launch = Some(index);
                    }
                    other => {
                        let slot = &mut self.slots[index];
                        slot.started = Some(started);
                        slot.outcome = Some(other);
                    }
                }
            }
            Err(chain) => {
                let host = self.host.clone();
                self.preparing = Some(Box::pin(prepare_awaited(
                    host, index, call, chain, span, started,
                )));
            }
        }
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
        let host = &self.host;
        let (mode, _) = self.head_mode.get_or_insert_with(|| {
            let nested = input.parent.is_some();
            let name = input.name.as_str();
            let (mode, resolved) =
                super::classify_resolved(host, name, input.agent, nested, &input.arguments);
            (mode, Some(resolved))
        });
        *mode == ToolExecutionMode::Parallel || self.next_commit() == self.next_prepare
    }
}

impl<H: Host> Future for Scheduler<H> {
    type Output = Vec<ToolExecutionResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match &this.parent {
            // A lane's calls report to the subscriber of the span it was made under.
            Some((_, dispatch)) => {
                let dispatch = dispatch.clone();
                tracing::dispatcher::with_default(&dispatch, || this.poll_calls(cx))
            }
            None => this.poll_calls(cx),
        }
    }
}

impl<H: Host> Scheduler<H> {
    /// One poll of the calls (see [`Future::poll`]).
    fn poll_calls(&mut self, cx: &mut Context<'_>) -> Poll<Vec<ToolExecutionResult>> {
        let this = self;
        // The source is read once per poll: it takes every input already sent, and nothing
        // this poll does sends more (a later send wakes the task).
        let mut progressed = this.poll_source(cx);
        loop {
            // Each step registers the waker of whatever it waits on; loop while anything moved
            // so a future started in this poll is polled before returning `Pending`.
            progressed |= this.poll_commit(cx);
            progressed |= this.poll_dispatches(cx);
            while this.poll_prepare(cx) {
                progressed = true;
                // Straight on to the next call while every call so far is committed (quick
                // calls: nothing else has anything to do).
                if this.next_commit() != this.next_prepare || this.preparing.is_some() {
                    break;
                }
            }
            if this.done() {
                return Poll::Ready(match &mut this.shape {
                    Shape::Batch(results) => std::mem::take(results),
                    Shape::Stream { .. } => Vec::new(),
                });
            }
            if !progressed {
                return Poll::Pending;
            }
            progressed = false;
        }
    }
}

/// Phase 2 of one call whose pre-execute policies must be awaited, under its `tool.execute`
/// span.
async fn prepare_awaited<H: Host>(
    host: H,
    index: usize,
    call: Call,
    chain: Vec<PreExecuteFn>,
    span: tracing::Span,
    started: Option<Instant>,
) -> (usize, Started, Prepared) {
    let policy = &host.pipeline().policy;
    let prepared = if span.is_disabled() {
        policy.prepare_awaited(&host, &call, chain).await
    } else {
        policy
            .prepare_awaited(&host, &call, chain)
            .instrument(span.clone())
            .await
    };
    (
        index,
        Started {
            call,
            span,
            started,
        },
        prepared,
    )
}

/// Phase 4 of one call (post-execute for post-results, then finishing).
async fn commit_call<H: Host>(host: H, started: Started, outcome: Prepared) -> ToolExecutionResult {
    let result = super::commit(&host, &started.call, outcome)
        .instrument(started.span.clone())
        .await;
    record_started(&started, &result);
    result
}

/// Records a committed call's outcome and duration on its span (when the span is recorded).
fn record_started(started: &Started, result: &ToolExecutionResult) {
    if let Some(at) = started.started {
        record_outcome(&started.span, result, at);
    }
}
