//! The parent side of [`Isolation::Workers`](super::Isolation::Workers): a pool of worker
//! processes started ahead, one program at a time each, and the run loop that serves a
//! program's tool calls, counts its output and stops it — by killing its worker.
//!
//! Each worker has three threads of its own (stdout reader, stdin writer, stderr tail), so a
//! worker can serve runs from any Tokio runtime: nothing of it is bound to one. A worker goes
//! back to the pool only after a program that ended within every limit; after a stop, a limit,
//! a crash or a message out of protocol it is killed, and a fresh one is started.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::panic::AssertUnwindSafe;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use dsh_tools::definition::BoxFuture;
use dsh_tools::json::is_lossless;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc as tokio_mpsc;

use super::config::{MontyConfig, WorkerConfig};
use super::inproc;
use super::outcome;
use super::pause::Paused;
use super::protocol::{FromWorker, ToWorker, VERSION, line};
use crate::runtime::{
    BindingNamespace, CodeErrorKind, CodeRunError, CodeRunRequest, CodeRunResult,
};
use crate::sandbox::shared::{Outcome, Shared, Stop};
use crate::sandbox::supervise::{self, STOP_GRACE, WallClock};

/// Exit status of a worker that went past its memory limit (the allocator's).
const OOM_EXIT_CODE: i32 = monty_types::OOM_EXIT_CODE;

/// What a worker's reader thread reports.
enum Event {
    Message(FromWorker),
    Invalid(String),
    Exited(Option<ExitStatus>),
}

/// One worker process.
struct Worker {
    child: Arc<Mutex<Child>>,
    to_worker: mpsc::Sender<Vec<u8>>,
    events: tokio_mpsc::UnboundedReceiver<Event>,
    stderr: Arc<Mutex<String>>,
    ready: bool,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .kill();
    }
}

/// How much of a worker's stderr is kept for the message of its death.
const STDERR_TAIL: usize = 4096;

impl Worker {
    fn spawn(config: &WorkerConfig) -> std::io::Result<Self> {
        let mut child = Command::new(&config.command)
            .args(&config.args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(std::io::Error::other("the worker's pipes are missing"));
        };
        let child = Arc::new(Mutex::new(child));
        let (to_worker, outgoing) = mpsc::channel::<Vec<u8>>();
        let (incoming, events) = tokio_mpsc::unbounded_channel();
        let tail = Arc::new(Mutex::new(String::new()));
        spawn_thread("dsh-monty-stdin", move || write_loop(stdin, &outgoing))?;
        let stderr_tail = tail.clone();
        spawn_thread("dsh-monty-stderr", move || {
            stderr_loop(stderr, &stderr_tail)
        })?;
        let reaped = child.clone();
        spawn_thread("dsh-monty-stdout", move || {
            read_loop(stdout, &incoming, &reaped)
        })?;
        Ok(Self {
            child,
            to_worker,
            events,
            stderr: tail,
            ready: false,
        })
    }

    fn send(&self, message: &ToWorker) {
        let _ = self.to_worker.send(line(message));
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

fn spawn_thread(name: &str, body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(256 * 1024)
        .spawn(body)
        .map(drop)
}

fn write_loop(mut stdin: ChildStdin, outgoing: &mpsc::Receiver<Vec<u8>>) {
    while let Ok(bytes) = outgoing.recv() {
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

fn stderr_loop(mut stderr: impl Read, tail: &Mutex<String>) {
    let mut buffer = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buffer) {
        if n == 0 {
            return;
        }
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if tail.len() > STDERR_TAIL {
            let mut cut = tail.len() - STDERR_TAIL;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.drain(..cut);
        }
    }
}

fn read_loop(
    stdout: impl Read,
    incoming: &tokio_mpsc::UnboundedSender<Event>,
    child: &Mutex<Child>,
) {
    let mut reader = BufReader::new(stdout);
    let mut text = String::new();
    loop {
        text.clear();
        match reader.read_line(&mut text) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let event = match serde_json::from_str::<FromWorker>(&text) {
                    Ok(message) => Event::Message(message),
                    Err(error) => {
                        let mut shown: String = text.chars().take(200).collect();
                        shown = shown.trim_end().to_owned();
                        Event::Invalid(format!("{error}: {shown}"))
                    }
                };
                if incoming.send(event).is_err() {
                    break;
                }
            }
        }
    }
    // Stdout closed: the worker is exiting (or was killed). Reap it; a worker that lingers
    // with its stdout closed is killed.
    let deadline = Instant::now() + Duration::from_secs(2);
    let status = loop {
        let mut child = child.lock().unwrap_or_else(PoisonError::into_inner);
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => {}
            Ok(None) => {
                let _ = child.kill();
                break child.wait().ok();
            }
            Err(_) => break None,
        }
        drop(child);
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = incoming.send(Event::Exited(status));
}

/// The worker processes of one runtime.
pub(crate) struct WorkerPool {
    config: WorkerConfig,
    idle: Mutex<Vec<Worker>>,
    next_run: AtomicU64,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("command", &self.config.command)
            .field(
                "idle",
                &self
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .len(),
            )
            .finish()
    }
}

impl WorkerPool {
    /// A pool with its workers started (a worker that cannot start is retried at the first run,
    /// which then reports why).
    pub(crate) fn new(config: WorkerConfig) -> Arc<Self> {
        let pool = Arc::new(Self {
            idle: Mutex::new(Vec::new()),
            config,
            next_run: AtomicU64::new(1),
        });
        for _ in 0..pool.config.workers {
            if let Ok(worker) = Worker::spawn(&pool.config) {
                pool.idle().push(worker);
            }
        }
        pool
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Worker>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle worker, or a new one; a replacement starts in the background.
    fn take(self: &Arc<Self>) -> std::io::Result<Worker> {
        let taken = self.idle().pop();
        let worker = match taken {
            Some(worker) => worker,
            None => Worker::spawn(&self.config)?,
        };
        let pool = Arc::downgrade(self);
        let _ = spawn_thread("dsh-monty-spawn", move || {
            let Some(pool) = pool.upgrade() else { return };
            if pool.idle().len() < pool.config.workers
                && let Ok(worker) = Worker::spawn(&pool.config)
            {
                pool.give_back(worker);
            }
        });
        Ok(worker)
    }

    fn give_back(&self, worker: Worker) {
        let mut idle = self.idle();
        if idle.len() < self.config.workers {
            idle.push(worker);
        }
    }

    /// Workers idle right now.
    pub(crate) fn idle_workers(&self) -> usize {
        self.idle().len()
    }
}

type CallFuture = BoxFuture<'static, (u32, Result<Value, String>)>;

/// Starts binding call `id`, panics contained (as in the in-process runtime).
fn start_call(
    bindings: &[BindingNamespace],
    id: u32,
    namespace: usize,
    function: usize,
    args: Value,
) -> CallFuture {
    let binding = &bindings[namespace];
    let (name, function) = &binding.functions[function];
    let label = format!("{}.{name}", binding.global);
    let function = function.clone();
    let panicked = move |payload: Box<dyn std::any::Any + Send>| {
        Err(format!(
            "binding \"{label}\" panicked: {}",
            dsh_tools_core::extension::panic_message(&*payload)
        ))
    };
    Box::pin(async move {
        let result = match std::panic::catch_unwind(AssertUnwindSafe(|| function(args))) {
            Ok(future) => AssertUnwindSafe(future)
                .catch_unwind()
                .await
                .unwrap_or_else(panicked),
            Err(payload) => panicked(payload),
        };
        (id, result)
    })
}

/// How a run in a worker ended, and whether the worker may serve another.
struct Ended {
    outcome: Outcome,
    reusable: bool,
}

/// Runs one program in a worker (the bindings are validated).
pub(crate) async fn run(
    pool: Arc<WorkerPool>,
    config: Arc<MontyConfig>,
    request: CodeRunRequest,
) -> CodeRunResult {
    let shared = Shared::new(config.max_output_bytes);
    if request.cancel.is_cancelled() {
        shared.stop(Stop::Cancel);
        return supervise::finish(&inproc::stop_limits(&config), &shared, Outcome::Stopped);
    }
    let mut worker = match pool.take() {
        Ok(worker) => worker,
        Err(error) => {
            let error = CodeRunError {
                kind: CodeErrorKind::WorkerExit,
                message: format!(
                    "could not start a worker process ({}): {error}",
                    pool.config.command.display()
                ),
            };
            return supervise::finish(
                &inproc::stop_limits(&config),
                &shared,
                Outcome::Error(error),
            );
        }
    };
    let ended = serve(&pool, &config, &shared, &mut worker, request).await;
    if ended.reusable {
        pool.give_back(worker);
    }
    supervise::finish(&inproc::stop_limits(&config), &shared, ended.outcome)
}

async fn serve(
    pool: &WorkerPool,
    config: &MontyConfig,
    shared: &Shared,
    worker: &mut Worker,
    request: CodeRunRequest,
) -> Ended {
    let run = pool.next_run.fetch_add(1, Ordering::Relaxed);
    let memory = pool.config.memory_limit_bytes;
    let limits = inproc::limits(config, Some(memory));
    let call_limit = limits.call_limit_message();
    // A resumed run: the output captured before the pause comes first; its calls count.
    let mut made = 0usize;
    if let Some(snapshot) = &request.resume_from {
        match Paused::from_snapshot(snapshot) {
            Ok(paused) => {
                for line in paused.driver.logs {
                    shared.ledger().push(line);
                }
                made = paused
                    .driver
                    .calls
                    .saturating_sub(paused.driver.awaited.len());
            }
            Err(message) => {
                return Ended {
                    outcome: Outcome::Error(CodeRunError {
                        kind: CodeErrorKind::Exception,
                        message,
                    }),
                    reusable: true,
                };
            }
        }
    }
    let snapshot_to = request.snapshot_to;
    worker.send(&ToWorker::Run {
        run,
        program: request.program,
        namespaces: inproc::namespaces(&request.bindings),
        limits,
        thread_stack_bytes: config.thread_stack_bytes,
        pausable: snapshot_to.is_some(),
        resume: request.resume_from,
    });
    let bindings = request.bindings;
    let wall = WallClock {
        start: Instant::now(),
        budget: config.wall_clock,
        clock: request.clock,
    };
    let elapsed = wall.elapsed();
    tokio::pin!(elapsed);
    let cancel = request.cancel;
    let mut in_flight: FuturesUnordered<CallFuture> = FuturesUnordered::new();
    let mut queue: VecDeque<(u32, usize, usize, Value)> = VecDeque::new();
    // Asked to pause (a durable run's suspension): the worker has this long to answer.
    let mut pausing: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    let stop = |reason: Stop| {
        shared.stop(reason);
        Ended {
            outcome: Outcome::Stopped,
            reusable: false,
        }
    };
    let failed = |kind: CodeErrorKind, message: String| Ended {
        outcome: Outcome::Error(CodeRunError { kind, message }),
        reusable: false,
    };
    loop {
        tokio::select! {
            biased;
            () = cancel.cancelled(), if pausing.is_none() => {
                if snapshot_to.is_none() {
                    return stop(Stop::Cancel);
                }
                worker.send(&ToWorker::Pause { run });
                pausing = Some(Box::pin(tokio::time::sleep(STOP_GRACE)));
            }
            () = async { pausing.as_mut().expect("checked").await }, if pausing.is_some() => {
                return stop(Stop::Cancel);
            }
            () = &mut elapsed => return stop(Stop::Wall),
            event = worker.events.recv() => match event {
                Some(Event::Message(FromWorker::Ready { version, error })) if !worker.ready => {
                    if version != VERSION {
                        return failed(CodeErrorKind::WorkerExit, format!(
                            "the worker process is version {version}, this runtime {VERSION}"
                        ));
                    }
                    if let Some(error) = error {
                        return failed(CodeErrorKind::WorkerExit, format!(
                            "the worker process cannot enforce a memory limit: {error}"
                        ));
                    }
                    worker.ready = true;
                }
                Some(Event::Message(FromWorker::Call { run: r, id, ns, function, args })) if r == run && worker.ready => {
                    let known = bindings.get(ns).is_some_and(|b| function < b.functions.len());
                    if !known || !is_lossless(&args) {
                        return failed(CodeErrorKind::WorkerExit, "the worker process asked for a call out of protocol".to_owned());
                    }
                    if made >= config.max_tool_calls {
                        worker.send(&ToWorker::Reply { run, id, result: Err(call_limit.clone()) });
                    } else if in_flight.len() < config.max_calls_in_flight {
                        made += 1;
                        in_flight.push(start_call(&bindings, id, ns, function, args));
                    } else {
                        made += 1;
                        queue.push_back((id, ns, function, args));
                    }
                }
                Some(Event::Message(FromWorker::Log { run: r, line })) if r == run && worker.ready => {
                    if !shared.ledger().push(line) {
                        return stop(Stop::Output);
                    }
                }
                Some(Event::Message(FromWorker::Paused { run: r, snapshot })) if r == run && worker.ready && pausing.is_some() => {
                    let Some(slot) = &snapshot_to else {
                        return stop(Stop::Cancel);
                    };
                    // The captured output travels with the state.
                    let paused = Paused::from_snapshot(&snapshot).and_then(|mut paused| {
                        paused.driver.logs = shared.ledger().logs().to_vec();
                        paused.into_snapshot()
                    });
                    let Ok(snapshot) = paused else {
                        return failed(CodeErrorKind::WorkerExit, "the worker process sent a paused state out of protocol".to_owned());
                    };
                    *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(snapshot);
                    shared.stop(Stop::Cancel);
                    return Ended { outcome: Outcome::Stopped, reusable: true };
                }
                Some(Event::Message(FromWorker::Done { run: r, value, error })) if r == run && worker.ready => {
                    return match error {
                        None if value.as_ref().is_some_and(|v| !is_lossless(v)) => failed(
                            CodeErrorKind::WorkerExit,
                            "the worker process sent a completion out of protocol".to_owned(),
                        ),
                        None => Ended { outcome: Outcome::Value(value), reusable: true },
                        Some(error) => {
                            let error = error.into_error();
                            let reusable = matches!(
                                error.kind,
                                CodeErrorKind::Exception
                                    | CodeErrorKind::InvalidOutput
                                    | CodeErrorKind::CallLimit
                                    | CodeErrorKind::SourceLimit
                            );
                            Ended { outcome: Outcome::Error(error), reusable }
                        }
                    };
                }
                Some(Event::Message(other)) => {
                    return failed(CodeErrorKind::WorkerExit, format!("the worker process sent a message out of protocol: {other:?}"));
                }
                Some(Event::Invalid(text)) => {
                    return failed(CodeErrorKind::WorkerExit, format!("the worker process sent an invalid message: {text}"));
                }
                Some(Event::Exited(status)) => return died(status, &worker.stderr(), memory),
                None => return died(None, &worker.stderr(), memory),
            },
            Some((id, result)) = in_flight.next(), if !in_flight.is_empty() => {
                worker.send(&ToWorker::Reply { run, id, result });
                if let Some((id, ns, function, args)) = queue.pop_front() {
                    in_flight.push(start_call(&bindings, id, ns, function, args));
                }
            }
        }
    }
}

/// The outcome of a worker that died during a run.
fn died(status: Option<ExitStatus>, stderr: &str, memory: usize) -> Ended {
    let (kind, message) = if status.and_then(|s| s.code()) == Some(OOM_EXIT_CODE) {
        (
            CodeErrorKind::MemoryLimit,
            outcome::memory_message(Some(memory)),
        )
    } else if stderr.contains("has overflowed its stack") {
        (
            CodeErrorKind::StackOverflow,
            "the worker's native stack overflowed (the worker was replaced)".to_owned(),
        )
    } else {
        let how = match status {
            Some(status) => describe(status),
            None => "ended".to_owned(),
        };
        let last = stderr.trim().lines().last().unwrap_or_default();
        let message = if last.is_empty() {
            format!("the worker process {how}")
        } else {
            format!("the worker process {how}: {last}")
        };
        (CodeErrorKind::WorkerExit, message)
    };
    Ended {
        outcome: Outcome::Error(CodeRunError { kind, message }),
        reusable: false,
    }
}

fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_owned(),
    }
}
