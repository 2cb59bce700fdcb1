//! The run context handed to a tool body.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio_util::sync::CancellationToken;

use super::{ExecutionToken, Progress, ProgressObserver, StateMap, ToolExecution};
use crate::content::ContextMessage;

#[derive(Debug)]
struct Shared {
    deferred: Mutex<Vec<ContextMessage>>,
    concludes_turn: AtomicBool,
    /// The body's own token: given at creation ([`ToolRunContext::new`]), or made from `parent`
    /// the first time anyone asks for it ([`ToolRunContext::with_parent_token`]).
    own: OnceLock<CancellationToken>,
    /// The token the body's own follows, when the body's own is made on demand.
    parent: Parent,
}

/// The token a body's own token follows.
#[derive(Debug)]
enum Parent {
    /// None: the body's token was given.
    None,
    /// A token of its own.
    Token(CancellationToken),
    /// A token shared with other calls (no per-call clone of it).
    Shared(Arc<CancellationToken>),
}

impl Parent {
    fn get(&self) -> Option<&CancellationToken> {
        match self {
            Self::None => None,
            Self::Token(token) => Some(token),
            Self::Shared(token) => Some(token),
        }
    }
}

impl Shared {
    fn new(own: OnceLock<CancellationToken>, parent: Parent) -> Self {
        Self {
            deferred: Mutex::default(),
            concludes_turn: AtomicBool::new(false),
            own,
            parent,
        }
    }

    /// The body's own token, made now if it was not yet.
    fn own(&self) -> &CancellationToken {
        self.own.get_or_init(|| match self.parent.get() {
            Some(parent) => parent.child_token(),
            None => CancellationToken::new(),
        })
    }

    /// Whether the body's token is cancelled, without making it: a token not yet made is
    /// cancelled exactly when its parent is.
    fn is_cancelled(&self) -> bool {
        match self.own.get() {
            Some(own) => own.is_cancelled(),
            None => self
                .parent
                .get()
                .is_some_and(CancellationToken::is_cancelled),
        }
    }
}

/// What a tool body can see and do besides its arguments (`docs/CONTRACTS.md`, "Tools and
/// results"): the call's identity, its cancellation token, deferring a context message to after the
/// tool result, and asking the agent loop to conclude the turn.
///
/// A `#[tool]` function receives it by declaring a parameter of type `ToolRunContext` (the model
/// never sees it). Tool bodies can be unit-tested with [`ToolRunContext::detached`].
///
/// ```
/// use dsh_tools::exec::ToolRunContext;
/// let ctx = ToolRunContext::detached("call-7");
/// assert_eq!(ctx.call_id(), "call-7");
/// assert!(!ctx.is_cancelled());
/// ```
#[derive(Debug, Clone)]
pub struct ToolRunContext {
    execution: Arc<ToolExecution>,
    shared: Arc<Shared>,
    /// Host state (`None` until a pipeline provides it: no allocation for tools without state).
    states: Option<Arc<StateMap>>,
    /// Where progress reports go (the execution's observer, unless replaced).
    progress: Option<ProgressObserver>,
}

/// The pipeline's side of a [`ToolRunContext`]: it collects what the body deferred.
#[derive(Debug)]
pub struct RunContextHandle {
    shared: Arc<Shared>,
}

impl ToolRunContext {
    /// Creates a context for `execution` whose cancellation token is `cancel`, and the handle
    /// the pipeline keeps.
    pub fn new(
        execution: Arc<ToolExecution>,
        cancel: CancellationToken,
    ) -> (Self, RunContextHandle) {
        Self::with_shared(execution, Shared::new(OnceLock::from(cancel), Parent::None))
    }

    /// Creates a context for `execution` whose cancellation token is a child of `parent`, and
    /// the handle the pipeline keeps. Cancelling `parent` cancels the body's token; the body
    /// cancelling its own does not reach `parent`. The child is made only when someone asks for
    /// it ([`cancellation`](Self::cancellation), [`RunContextHandle::cancel`]): a body that
    /// never looks at its token costs no token of its own.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_tools::exec::{ToolExecution, ToolRunContext};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let caller = CancellationToken::new();
    /// let exec = Arc::new(ToolExecution::detached("c1", "read", serde_json::json!({})));
    /// let (ctx, handle) = ToolRunContext::with_parent_token(exec, caller.clone());
    /// ctx.cancellation().cancel(); // the body cancels its own token…
    /// assert!(handle.is_cancelled());
    /// assert!(!caller.is_cancelled()); // …not its caller's
    /// ```
    pub fn with_parent_token(
        execution: Arc<ToolExecution>,
        parent: CancellationToken,
    ) -> (Self, RunContextHandle) {
        Self::with_shared(
            execution,
            Shared::new(OnceLock::new(), Parent::Token(parent)),
        )
    }

    /// [`with_parent_token`](Self::with_parent_token) for a parent many calls share (the
    /// sub-calls of one Code Mode run): the context keeps the `Arc`, not a clone of the token.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use dsh_tools::exec::{ToolExecution, ToolRunContext};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let run = Arc::new(CancellationToken::new());
    /// let exec = Arc::new(ToolExecution::detached("c1", "read", serde_json::json!({})));
    /// let (ctx, _handle) = ToolRunContext::with_shared_parent_token(exec, Arc::clone(&run));
    /// run.cancel();
    /// assert!(ctx.is_cancelled() && ctx.cancellation().is_cancelled());
    /// ```
    pub fn with_shared_parent_token(
        execution: Arc<ToolExecution>,
        parent: Arc<CancellationToken>,
    ) -> (Self, RunContextHandle) {
        Self::with_shared(
            execution,
            Shared::new(OnceLock::new(), Parent::Shared(parent)),
        )
    }

    fn with_shared(execution: Arc<ToolExecution>, shared: Shared) -> (Self, RunContextHandle) {
        let shared = Arc::new(shared);
        let handle = RunContextHandle {
            shared: Arc::clone(&shared),
        };
        let progress = execution.progress.clone();
        (
            Self {
                execution,
                shared,
                states: None,
                progress,
            },
            handle,
        )
    }

    /// A context outside any pipeline (fresh token, fresh cancellation token).
    pub fn detached(call_id: &str) -> Self {
        let execution = Arc::new(ToolExecution::detached(
            call_id,
            "",
            serde_json::Value::Null,
        ));
        Self::new(execution, CancellationToken::new()).0
    }

    /// The same context with the host's state map (read by `State<T>` parameters).
    pub fn with_states(mut self, states: Arc<StateMap>) -> Self {
        self.states = (!states.is_empty()).then_some(states);
        self
    }

    /// The same context reporting progress to `observer` (`None`: nowhere).
    pub fn with_progress(mut self, observer: Option<ProgressObserver>) -> Self {
        self.progress = observer;
        self
    }

    /// The observer progress reports go to (Code Mode hands it on to a program's sub-calls).
    pub fn progress_observer(&self) -> Option<&ProgressObserver> {
        self.progress.as_ref()
    }

    /// Reports progress: `done` units of `total` (when known), and what is happening now
    /// (`docs/CONTRACTS.md`, "Progress"). It reaches the caller's observer — an MCP client that
    /// asked for progress, a host, the CLI's progress bar — or nowhere; it never fails.
    ///
    /// ```
    /// use dsh_tools::exec::ToolRunContext;
    /// let ctx = ToolRunContext::detached("c1");
    /// ctx.progress(1.0, Some(3.0), Some("reading a.rs")); // no observer: goes nowhere
    /// ```
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(observer) = &self.progress {
            observer.observe(&self.execution, &Progress::new(done, total, message));
        }
    }

    /// The host state of type `T`, if provided.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.states.as_ref().and_then(|states| states.get::<T>())
    }

    /// The execution this context belongs to.
    pub fn execution(&self) -> &ToolExecution {
        &self.execution
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.execution.call_id
    }

    /// The call's idempotency key: what a side-effecting tool keys its effect by, so that
    /// applying it again for the same call changes nothing (`docs/CONTRACTS.md`, "Durable
    /// runs"). It is the call id: for a sub-call of a durable Code Mode run,
    /// `<run id>:code:<n>` — the same when the call is replayed, retried after its outcome was
    /// unknown, or resumed on another machine; for a top-level call, the caller's call id.
    ///
    /// ```
    /// use dsh_tools::exec::ToolRunContext;
    /// let ctx = ToolRunContext::detached("run-1:code:3");
    /// assert_eq!(ctx.idempotency_key(), "run-1:code:3");
    /// ```
    pub fn idempotency_key(&self) -> &str {
        &self.execution.call_id
    }

    /// The outermost call id.
    pub fn root_call_id(&self) -> &str {
        &self.execution.root_call_id
    }

    /// This execution's token.
    pub fn token(&self) -> ExecutionToken {
        self.execution.token
    }

    /// The enclosing execution, for nested calls.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.execution.parent
    }

    /// The call's cancellation token: long-running tools should watch it.
    pub fn cancellation(&self) -> &CancellationToken {
        self.shared.own()
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.shared.is_cancelled()
    }

    /// Defers a context message: it is attached to the result (before any policy contexts) and
    /// reaches the model after the tool result.
    pub fn defer_context(&self, message: ContextMessage) {
        self.shared
            .deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }

    /// Asks the agent loop to end the turn after this call (only honoured on success).
    pub fn conclude_turn(&self) {
        self.shared.concludes_turn.store(true, Ordering::SeqCst);
    }
}

impl RunContextHandle {
    /// Takes the deferred context messages, in call order.
    pub fn take_deferred(&self) -> Vec<ContextMessage> {
        std::mem::take(
            &mut *self
                .shared
                .deferred
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Whether the body's cancellation token is cancelled (by its parent, the body, or
    /// [`cancel`](Self::cancel)).
    pub fn is_cancelled(&self) -> bool {
        self.shared.is_cancelled()
    }

    /// Cancels the body's token (its parent, if any, is not cancelled).
    pub fn cancel(&self) {
        self.shared.own().cancel();
    }

    /// Whether the body called [`ToolRunContext::conclude_turn`].
    pub fn concludes_turn(&self) -> bool {
        self.shared.concludes_turn.load(Ordering::SeqCst)
    }
}
