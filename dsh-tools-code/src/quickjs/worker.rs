//! Sandbox threads: a small pool per [`QuickJsRuntime`](super::QuickJsRuntime).
//!
//! A worker thread builds a **fresh** sandbox — QuickJS runtime (memory and stack limits,
//! interrupt handler), context, global setup — *before* it takes a run from the pool's queue,
//! runs exactly one program in it, replies, tears it down, and (if the pool wants more idle
//! workers, or runs are queued) builds the next one. No sandbox ever sees two programs:
//! building ahead only takes construction off the run's critical path. A run is queued for the
//! next worker with a fresh sandbox; a new thread starts only when the waiting and building
//! workers are all spoken for. A worker whose run was abandoned (a native operation the
//! interrupt handler does not reach) counts for nothing until it ends; then it rejoins the pool
//! or exits.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rquickjs::context::intrinsic;
use rquickjs::{Context, Ctx, Runtime};
use tokio::sync::oneshot;

use crate::HostWork;
use crate::record::RunRecord;
use crate::runtime::{BindingNamespace, CodeErrorKind, CodeRunError};
use crate::strip::strip_program;

use super::bindings::{NamespaceSpec, RunState};
use super::config::QuickJsConfig;
use super::drive::{self, Clock, CpuBudget, Watch};
use super::errors::{self, Budgets, UNRENDERABLE};
use super::globals::{self, Env};
use crate::sandbox::calls::{Calls, ThreadWaker};
use crate::sandbox::shared::{Outcome, Shared};
use crate::sandbox::supervise::WallClock;

/// The built-ins of a sandbox context (plus the base objects rquickjs always adds). Not
/// `Performance`, not `DOMException`; `Eval` only so the host can evaluate the program — the
/// program itself gets neither `eval` nor `Function`.
type Intrinsics = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

/// Sandbox threads alive right now (see [`super::live_sandbox_threads`]).
pub(crate) static LIVE_THREADS: AtomicUsize = AtomicUsize::new(0);

struct Alive;

impl Alive {
    fn new() -> Self {
        LIVE_THREADS.fetch_add(1, Ordering::SeqCst);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        LIVE_THREADS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One run for a worker.
pub(crate) struct Job {
    pub(crate) program: String,
    pub(crate) bindings: Vec<BindingNamespace>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) wall: WallClock,
    /// The caller's Tokio runtime: binding futures are polled inside its context.
    pub(crate) tokio: Option<tokio::runtime::Handle>,
    /// The host's work, polled beside the binding futures (left in place at the end).
    pub(crate) host_work: Option<HostWork>,
    /// The run's record of its sources and deliveries.
    pub(crate) record: Option<RunRecord>,
    pub(crate) done: oneshot::Sender<Outcome>,
}

#[derive(Default)]
struct PoolState {
    /// Runs waiting for a worker.
    jobs: VecDeque<Job>,
    /// Workers with a fresh sandbox, waiting for a run.
    waiting: usize,
    /// Workers building a fresh sandbox (they take a run next).
    building: usize,
    /// The runtime is gone: idle workers exit.
    closed: bool,
}

struct PoolInner {
    config: Arc<QuickJsConfig>,
    state: Mutex<PoolState>,
    available: Condvar,
}

impl PoolInner {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Closes the pool when the last runtime handle goes.
struct Handle(Arc<PoolInner>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.available.notify_all();
    }
}

/// The sandbox threads of one runtime.
#[derive(Clone)]
pub(crate) struct Pool(Arc<Handle>);

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.0.0.lock();
        f.debug_struct("Pool")
            .field("waiting", &state.waiting)
            .field("building", &state.building)
            .field("queued", &state.jobs.len())
            .finish()
    }
}

impl Pool {
    pub(crate) fn new(config: Arc<QuickJsConfig>) -> Self {
        let inner = PoolInner {
            config,
            state: Mutex::default(),
            available: Condvar::new(),
        };
        Self(Arc::new(Handle(Arc::new(inner))))
    }

    /// Queues the job for the next worker with a fresh sandbox; starts a worker when the
    /// waiting and building ones are all spoken for.
    pub(crate) fn submit(&self, job: Job) -> std::io::Result<()> {
        let inner = &self.0.0;
        let spawn = {
            let mut state = inner.lock();
            state.jobs.push_back(job);
            let coming = state.waiting + state.building;
            if coming < state.jobs.len() {
                state.building += 1;
                true
            } else {
                false
            }
        };
        if !spawn {
            inner.available.notify_one();
            return Ok(());
        }
        spawn_worker(inner).inspect_err(|_| {
            let mut state = inner.lock();
            state.building -= 1;
            // Nobody will take it: drop it (its reply channel closes with it).
            state.jobs.pop_back();
        })
    }
}

/// Starts a worker already counted as building.
fn spawn_worker(pool: &Arc<PoolInner>) -> std::io::Result<()> {
    let pool_for_thread = pool.clone();
    std::thread::Builder::new()
        .name("dsh-quickjs".to_owned())
        .stack_size(pool.config.thread_stack_bytes)
        .spawn(move || worker_main(&pool_for_thread))
        .map(drop)
}

/// Counts a worker as building until it takes a job. A worker that gives up before (a failed
/// build, a panic) releases its count, and starts a replacement if runs are waiting on it.
struct Building<'a> {
    pool: &'a Arc<PoolInner>,
    counted: std::cell::Cell<bool>,
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        if !self.counted.get() {
            return;
        }
        let mut state = self.pool.lock();
        state.building -= 1;
        if state.closed || state.jobs.len() <= state.waiting + state.building {
            return;
        }
        state.building += 1;
        drop(state);
        if spawn_worker(self.pool).is_err() {
            self.pool.lock().building -= 1;
        }
    }
}

fn worker_main(pool: &Arc<PoolInner>) {
    let _alive = Alive::new();
    let waker = ThreadWaker::current();
    // Spawned by `submit`, the first iteration is already counted as building.
    let mut counted = true;
    loop {
        if !counted {
            let mut state = pool.lock();
            let coming = state.waiting + state.building;
            if state.closed || (coming >= pool.config.warm_sandboxes && coming >= state.jobs.len())
            {
                return;
            }
            state.building += 1;
        }
        counted = false;
        let building = Building {
            pool,
            counted: std::cell::Cell::new(true),
        };
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| sandbox(&building, &waker)));
        drop(building);
        if !matches!(run, Ok(true)) {
            return;
        }
    }
}

/// Moves this worker from building to waiting and takes the next job; `None` when the pool
/// closed.
fn take_job(building: &Building<'_>) -> Option<Job> {
    let pool = building.pool;
    let mut state = pool.lock();
    building.counted.set(false);
    state.building -= 1;
    state.waiting += 1;
    loop {
        if let Some(job) = state.jobs.pop_front() {
            state.waiting -= 1;
            return Some(job);
        }
        if state.closed {
            state.waiting -= 1;
            return None;
        }
        state = pool
            .available
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// Builds one fresh sandbox, takes a job, runs it, replies, tears the sandbox down. `false`
/// when the worker should exit.
fn sandbox(building: &Building<'_>, waker: &Arc<ThreadWaker>) -> bool {
    let config = &*building.pool.config;
    let budgets = Budgets {
        memory_limit_bytes: config.memory_limit_bytes,
        max_stack_bytes: config.max_stack_bytes,
    };
    let watch: Rc<RefCell<Option<Watch>>> = Rc::new(RefCell::new(None));
    let built = Runtime::new().ok().and_then(|runtime| {
        runtime.set_memory_limit(config.memory_limit_bytes);
        runtime.set_max_stack_size(config.max_stack_bytes);
        let watch = watch.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            watch.borrow().as_ref().is_some_and(Watch::over_budget)
        })));
        let context = Context::custom::<Intrinsics>(&runtime).ok()?;
        Some((runtime, context))
    });
    let Some((runtime, context)) = built else {
        // This worker was counted on: serve one run with the failure, then exit.
        if let Some(job) = take_job(building) {
            let _ = job.done.send(Outcome::Error(errors::memory_limit(budgets)));
        }
        return false;
    };
    let ran = context.with(|ctx| {
        let env = globals::setup(&ctx);
        let job = take_job(building)?;
        Some(match env {
            Ok(env) => run(&ctx, env, job, config, &watch, waker, budgets),
            Err(error) => {
                let outcome = Outcome::Error(CodeRunError {
                    kind: CodeErrorKind::WorkerExit,
                    message: format!("could not set up the sandbox: {error}"),
                });
                (outcome, job.done)
            }
        })
    });
    let Some((outcome, done)) = ran else {
        return false;
    };
    // Measured before the context (and its garbage) is freed: out of memory, rendering the
    // thrown value may have failed too. Only then: the measurement walks the whole heap.
    let near_limit = || {
        let usage = runtime.memory_usage().malloc_size.max(0) as usize;
        usage + 256 * 1024 > config.memory_limit_bytes
    };
    let outcome = match outcome {
        Outcome::Error(error) if error.message == UNRENDERABLE && near_limit() => {
            Outcome::Error(errors::memory_limit(budgets))
        }
        outcome => outcome,
    };
    let _ = done.send(outcome);
    drop(context);
    drop(runtime);
    true
}

/// Runs one job in a ready sandbox; returns the outcome and where to send it.
fn run<'js>(
    ctx: &Ctx<'js>,
    env: Env<'js>,
    job: Job,
    config: &QuickJsConfig,
    watch: &Rc<RefCell<Option<Watch>>>,
    waker: &Arc<ThreadWaker>,
    budgets: Budgets,
) -> (Outcome, oneshot::Sender<Outcome>) {
    let Job {
        program,
        bindings,
        shared,
        wall,
        tokio,
        host_work,
        record,
        done,
    } = job;
    shared.set_worker(std::thread::current());
    let _tokio = tokio.as_ref().map(tokio::runtime::Handle::enter);
    let script = match strip_program(&program, &config.source) {
        Ok(script) => script,
        Err(error) => {
            let kind = if error.is_source_limit() {
                CodeErrorKind::SourceLimit
            } else {
                CodeErrorKind::Exception
            };
            return (
                Outcome::Error(CodeRunError {
                    kind,
                    message: error.to_string(),
                }),
                done,
            );
        }
    };
    let namespaces = bindings
        .iter()
        .map(|namespace| NamespaceSpec {
            global: namespace.global.clone(),
            functions: namespace
                .functions
                .iter()
                .map(|(name, _)| name.clone())
                .collect(),
            error_class: namespace.error_class.clone(),
        })
        .collect();
    let calls = Calls::new(
        bindings,
        config.max_calls_in_flight,
        waker.clone().into(),
        host_work,
    );
    let limits = (
        config.max_output_bytes,
        config.max_value_depth,
        config.max_tool_calls,
    );
    let state = Rc::new(
        RunState::new(namespaces, shared.clone(), calls, limits, record)
            .with_script(script.clone()),
    );
    let clock = Rc::new(Clock::default());
    *watch.borrow_mut() = Some(Watch {
        shared,
        clock: clock.clone(),
        cpu: CpuBudget::start(config.cpu_budget),
        wall,
    });
    clock.resume();
    let outcome = match globals::install(ctx, &state) {
        Ok(classes) => {
            state.activate(Rc::new(env), classes);
            let watch = watch.borrow();
            let watch = watch.as_ref().expect("set above");
            drive::drive(ctx, &state, &script, watch, waker, budgets)
        }
        Err(error) => drive::failure(ctx, &state, budgets, error),
    };
    *watch.borrow_mut() = None;
    state.clear();
    // The binding closures and any call still in flight go now, before the reply.
    drop(
        state
            .calls
            .replace(Calls::new(Vec::new(), 1, waker.clone().into(), None)),
    );
    (outcome, done)
}
