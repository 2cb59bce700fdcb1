//! Binding calls in flight, polled on the sandbox thread.
//!
//! The futures of the request's [`BindingFn`]s are polled right where the program waits for
//! them (inside the caller's Tokio context when there is one), woken by unparking the sandbox
//! thread: an awaited call costs no cross-thread hand-off. At most `max_in_flight` run at once;
//! later calls wait in submission order. The host's work for the run (the `run_code` lane, see
//! [`HostWork`]) is polled here too.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use dsh_tools::definition::BoxFuture;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;

use crate::HostWork;
use crate::runtime::BindingNamespace;

/// One accepted binding call.
#[derive(Debug)]
pub(crate) struct CallRequest {
    pub(crate) id: u64,
    pub(crate) namespace: usize,
    pub(crate) function: usize,
    pub(crate) args: Value,
}

type CallFuture = BoxFuture<'static, (u64, Result<Value, String>)>;

/// Wakes the sandbox thread.
pub(crate) struct ThreadWaker {
    thread: Thread,
    woken: AtomicBool,
}

impl ThreadWaker {
    pub(crate) fn current() -> Arc<Self> {
        Arc::new(Self {
            thread: std::thread::current(),
            woken: AtomicBool::new(false),
        })
    }

    /// Parks until woken (or spuriously: callers re-check their conditions).
    pub(crate) fn park(&self) {
        if !self.woken.swap(false, Ordering::AcqRel) {
            std::thread::park();
        }
    }
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// The calls of one run.
pub(crate) struct Calls {
    bindings: Vec<BindingNamespace>,
    /// `<global>.<name>` of every binding, for panic messages.
    labels: Vec<Vec<Arc<str>>>,
    in_flight: FuturesUnordered<CallFuture>,
    queue: VecDeque<CallRequest>,
    max_in_flight: usize,
    waker: Waker,
    /// The host's work for this run (the `run_code` lane), polled here before the calls.
    host_work: Option<HostWork>,
}

impl Calls {
    pub(crate) fn new(
        bindings: Vec<BindingNamespace>,
        max_in_flight: usize,
        waker: Waker,
        host_work: Option<HostWork>,
    ) -> Self {
        let labels = bindings
            .iter()
            .map(|namespace| {
                let global = &namespace.global;
                let label = |(name, _): &(String, _)| Arc::from(format!("{global}.{name}"));
                namespace.functions.iter().map(label).collect()
            })
            .collect();
        Self {
            bindings,
            labels,
            in_flight: FuturesUnordered::new(),
            queue: VecDeque::new(),
            max_in_flight,
            waker,
            host_work,
        }
    }

    /// Starts the call, or queues it behind the calls in flight.
    pub(crate) fn submit(&mut self, call: CallRequest) {
        if self.in_flight.len() < self.max_in_flight {
            let future = self.start(call);
            self.in_flight.push(future);
        } else {
            self.queue.push_back(call);
        }
    }

    fn start(&self, call: CallRequest) -> CallFuture {
        let function = self.bindings[call.namespace].functions[call.function]
            .1
            .clone();
        let label = self.labels[call.namespace][call.function].clone();
        let id = call.id;
        let panicked = move |payload: Box<dyn std::any::Any + Send>| {
            Err(format!(
                "binding \"{label}\" panicked: {}",
                dsh_tools_core::extension::panic_message(&*payload)
            ))
        };
        // The binding is invoked right away, as the program makes the call: what it hands to
        // the host (a `run_code` sub-call reaching its lane) is there before the next poll, so
        // a call that completes at once settles in one round of polling.
        match std::panic::catch_unwind(AssertUnwindSafe(|| function(call.args))) {
            Ok(future) => Box::pin(async move {
                let result = AssertUnwindSafe(future)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(panicked);
                (id, result)
            }),
            Err(payload) => Box::pin(std::future::ready((id, panicked(payload)))),
        }
    }

    /// Polls the host's work, then the calls in flight; appends the calls that finished to
    /// `ready` (queued calls take their places).
    ///
    /// The host's work goes first: a call submitted by the program has reached the lane, which
    /// runs it through the pipeline and commits it here, so its binding future is ready when
    /// polled next — no thread hand-off for a call that completes at once.
    pub(crate) fn poll_ready(&mut self, ready: &mut Vec<(u64, Result<Value, String>)>) {
        let waker = self.waker.clone();
        let mut cx = Context::from_waker(&waker);
        if let Some(work) = &self.host_work
            && work.poll(&mut cx).is_ready()
        {
            self.host_work = None;
        }
        while let Poll::Ready(Some(done)) = self.in_flight.poll_next_unpin(&mut cx) {
            ready.push(done);
            if let Some(call) = self.queue.pop_front() {
                let future = self.start(call);
                self.in_flight.push(future);
            }
        }
    }
}
