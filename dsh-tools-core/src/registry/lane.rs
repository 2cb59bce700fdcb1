//! A streaming lane over the registry's pipeline: calls submitted one by one (by a running
//! program), each through the whole pipeline, committed in submission order — the stream shape
//! of the pipeline's scheduler with the registry as its host.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::ToolRegistry;
use crate::pipeline::{LaneEvent, LaneIntake, OnStart, Scheduler};

/// A streaming lane (see the module docs of [`extension`](crate::extension)): its owner polls it
/// and, after each poll, takes what it [reported](Lane::take_events). It is over (`Ready`) once
/// its intake is closed and every call it took is reported.
///
/// ```
/// use std::future::{Future, poll_fn};
/// use std::pin::Pin;
/// use std::sync::Arc;
/// use std::task::Poll;
/// use dsh_tools::exec::ToolExecutionInput;
/// use dsh_tools_runtime::ToolRegistry;
/// use dsh_tools_runtime::extension::{Lane, LaneEvent, LaneIntake};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = ToolRegistry::new();
/// let intake = Arc::new(LaneIntake::default());
/// let mut lane = Lane::new(registry, Arc::clone(&intake), false, None);
/// intake.submit(ToolExecutionInput::new("c1", "missing", json!({})).into());
/// // Poll the lane, taking what it reports after each poll.
/// let events: Vec<LaneEvent> = poll_fn(|cx| {
///     let _ = Pin::new(&mut lane).poll(cx);
///     let events: Vec<LaneEvent> = lane.take_events().collect();
///     if events.is_empty() { Poll::Pending } else { Poll::Ready(events) }
/// })
/// .await;
/// assert!(matches!(&events[..], [LaneEvent::Committed(0, result)] if result.is_error()));
/// // The run is over: the lane finishes.
/// intake.close();
/// lane.await;
/// # });
/// ```
pub struct Lane(Scheduler<ToolRegistry>);

impl Lane {
    /// A lane taking its calls from `intake` (`checked`: their arguments are already known to
    /// be lossless JSON), running at most the registry's
    /// [`max_parallel_sub_calls`](crate::RegistryConfig::max_parallel_sub_calls) at once;
    /// `on_start` is told of each call as it starts.
    pub fn new(
        registry: ToolRegistry,
        intake: Arc<LaneIntake>,
        checked: bool,
        on_start: Option<OnStart>,
    ) -> Self {
        let cap = registry.config().max_parallel_sub_calls;
        Self(Scheduler::stream(registry, intake, checked, cap, on_start))
    }

    /// What happened to the lane's calls since the last time, in submission order (nothing is
    /// reported between polls).
    #[inline]
    pub fn take_events(&mut self) -> impl Iterator<Item = LaneEvent> + '_ {
        self.0.take_events()
    }
}

impl Future for Lane {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}
