//! The worker side of [`Isolation::Workers`](super::Isolation::Workers): a process that runs one
//! program at a time for its parent, over the [protocol](super::protocol) on stdin/stdout.

use std::io::{BufRead, BufReader, Stdin, Write};
use std::process::ExitCode;

use serde_json::Value;

use super::pause::Paused;
use super::protocol::{FromWorker, ToWorker, VERSION, WireError, line};
use super::session::{self, Ending, Host};
use crate::runtime::{CodeErrorKind, CodeRunError};

/// The global allocator a worker executable must install: it counts every byte the process
/// allocates, so the memory limit of a run is real, and ends the process with exit status 65
/// when a program goes past it.
///
/// ```no_run
/// #[global_allocator]
/// static ALLOCATOR: dsh_tools_runtime::code::monty::WorkerAllocator =
///     dsh_tools_runtime::code::monty::WorkerAllocator;
///
/// fn main() -> std::process::ExitCode {
///     dsh_tools_runtime::code::monty::serve_worker()
/// }
/// ```
pub use monty_alloc::LimitedAllocator as WorkerAllocator;

/// Serves programs on stdin/stdout until stdin closes. Call it from the `main` of a worker
/// executable whose global allocator is [`WorkerAllocator`] (see there); without it the worker
/// reports that it cannot enforce a memory limit and every run fails with `worker-exit`.
pub fn serve_worker() -> ExitCode {
    let armed = monty_alloc::set_limit(None, false).err().map(str::to_owned);
    if !write(&FromWorker::Ready {
        version: VERSION.to_owned(),
        error: armed.clone(),
    }) {
        return ExitCode::FAILURE;
    }
    let mut input = BufReader::new(std::io::stdin());
    let mut text = String::new();
    loop {
        text.clear();
        match input.read_line(&mut text) {
            Ok(0) => return ExitCode::SUCCESS,
            Ok(_) => {}
            Err(_) => return ExitCode::FAILURE,
        }
        let Ok(ToWorker::Run {
            run,
            program,
            namespaces,
            limits,
            thread_stack_bytes,
            pausable,
            resume,
        }) = serde_json::from_str::<ToWorker>(&text)
        else {
            // A reply for a program that already ended, or junk: not ours to run.
            continue;
        };
        if armed.is_some()
            || monty_alloc::set_limit(Some(limits.memory_limit_bytes), false).is_err()
        {
            return ExitCode::FAILURE;
        }
        // The program runs on a thread with the stack its limits need; the input moves there
        // and back (the buffer may hold lines already read).
        let runner = std::thread::Builder::new()
            .name("dsh-monty-worker".to_owned())
            .stack_size(thread_stack_bytes)
            .spawn(move || {
                let mut host = PipeHost {
                    run,
                    input,
                    closed: false,
                    pausable,
                    pausing: false,
                };
                let ending = match resume.as_ref().map(Paused::from_snapshot) {
                    None => session::run(&program, &namespaces, &limits, &mut host),
                    Some(Ok(paused)) => {
                        session::resume(&program, &paused, &namespaces, &limits, &mut host)
                    }
                    Some(Err(message)) => Ending::Error(CodeRunError {
                        kind: CodeErrorKind::Exception,
                        message,
                    }),
                };
                (host.input, ending)
            });
        let Ok(Ok((back, ending))) = runner.map(std::thread::JoinHandle::join) else {
            return ExitCode::FAILURE;
        };
        input = back;
        let done = match ending {
            Ending::Value(value) => FromWorker::Done {
                run,
                value,
                error: None,
            },
            Ending::Error(error) => FromWorker::Done {
                run,
                value: None,
                error: Some(WireError::from(error)),
            },
            Ending::Paused(paused) => match paused.into_snapshot() {
                Ok(snapshot) => FromWorker::Paused { run, snapshot },
                Err(message) => FromWorker::Done {
                    run,
                    value: None,
                    error: Some(WireError::from(CodeRunError {
                        kind: CodeErrorKind::Exception,
                        message,
                    })),
                },
            },
            // Only when stdin closed: nobody is listening.
            Ending::Stopped => return ExitCode::SUCCESS,
        };
        if !write(&done) {
            return ExitCode::FAILURE;
        }
    }
}

fn write(message: &FromWorker) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(&line(message))
        .and_then(|()| out.flush())
        .is_ok()
}

/// The host of a worker run: calls and lines go to the parent, replies come from it.
struct PipeHost {
    run: u64,
    input: BufReader<Stdin>,
    closed: bool,
    /// The parent may pause this run.
    pausable: bool,
    /// The parent asked for a pause.
    pausing: bool,
}

impl Host for PipeHost {
    fn start(
        &mut self,
        id: u32,
        namespace: usize,
        function: usize,
        args: Value,
    ) -> Result<(), String> {
        // The parent counts the calls and answers over-limit ones with the limit's failure.
        if !write(&FromWorker::Call {
            run: self.run,
            id,
            ns: namespace,
            function,
            args,
        }) {
            self.closed = true;
        }
        Ok(())
    }

    fn wait(&mut self) -> Option<Vec<(u32, Result<Value, String>)>> {
        let mut text = String::new();
        while !self.closed {
            text.clear();
            match self.input.read_line(&mut text) {
                Ok(0) | Err(_) => self.closed = true,
                Ok(_) => match serde_json::from_str(&text) {
                    Ok(ToWorker::Reply { run, id, result }) if run == self.run => {
                        return Some(vec![(id, result)]);
                    }
                    Ok(ToWorker::Pause { run }) if run == self.run && self.pausable => {
                        self.pausing = true;
                        return None;
                    }
                    _ => {}
                },
            }
        }
        None
    }

    fn log(&mut self, line: String) -> bool {
        if !write(&FromWorker::Log {
            run: self.run,
            line,
        }) {
            self.closed = true;
        }
        true
    }

    fn stopped(&self) -> bool {
        self.closed || self.pausing
    }

    fn pausable(&self) -> bool {
        self.pausable
    }

    fn pausing(&self) -> bool {
        self.pausing && !self.closed
    }
}
