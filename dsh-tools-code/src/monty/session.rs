//! Driving one program through the interpreter's suspensions, whoever the host is (the sandbox
//! thread in this process, or a worker process talking to its parent): tool calls start host
//! calls, awaiting them waits for the host, `print` becomes log lines, and a stop ends the run at
//! the next suspension (uncatchably) or checkpoint.
//!
//! Each binding global (`tools`) is a host-backed class object: `tools.name(args)` suspends as
//! a method call named `name`; `tools(name)` (what `tools[name]` is rewritten to) suspends as
//! its `__call__` and gets back an external function named `tools.name`, whose calls suspend
//! under that name; reading `tools.name` without calling it suspends as an attribute lookup
//! and gets the same function.
//! Every tool call returns a pending future (`resume_pending`), so `asyncio.gather` overlaps
//! them; the interpreter reports which futures it waits for when every task is blocked.

use std::borrow::Cow;
use std::time::Duration;

use monty::{MontyRun, RunProgress};
use monty_types::{
    DictPairs, ExcType, ExtFunctionResult, MontyClassType, MontyException, MontyObject, MontyType,
    MontyUuid, NameLookupResult, PrintWriter, PrintWriterCallback, ResourceLimits, ResourceTracker,
};
use serde_json::Value;

use super::convert::{self, Lossy};
use super::outcome::{self, Context};
use super::pause::{Awaited, DriverState, Paused};
use super::program;
use crate::runtime::{CodeErrorKind, CodeRunError};
use crate::texts::{ARGS_NOT_LOSSLESS, RESOLUTION_NOT_LOSSLESS};

/// The identity of the first namespace's class object (any fixed id: the sandbox sees only
/// the name); the others follow.
const FIRST_NAMESPACE_ID: u128 = 0x6473_682d_746f_6f6c_735f_6e61_6d65_0000;

fn namespace_id(index: usize) -> MontyUuid {
    MontyUuid::from_u128(FIRST_NAMESPACE_ID + index as u128)
}

/// One binding namespace, by name (the functions themselves stay with the host).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Namespace {
    /// The global (`tools`).
    pub(crate) global: String,
    /// The function names.
    pub(crate) functions: Vec<String>,
    /// The error class name (`ToolCallError`), if any.
    pub(crate) error_class: Option<String>,
}

/// What the driver needs from the side that runs tool calls.
pub(crate) trait Host {
    /// Starts call `id` of function `function` of namespace `namespace` with lossless JSON
    /// arguments; `Err(message)` fails it at once (the call limit).
    fn start(
        &mut self,
        id: u32,
        namespace: usize,
        function: usize,
        args: Value,
    ) -> Result<(), String>;
    /// Waits until at least one started call has finished and returns the finished ones;
    /// `None` when the run is being stopped.
    fn wait(&mut self) -> Option<Vec<(u32, Result<Value, String>)>>;
    /// One printed line; `false` when the output budget is spent.
    fn log(&mut self, line: String) -> bool;
    /// Whether the run is being stopped.
    fn stopped(&self) -> bool;
    /// Whether the program's state is kept when it is stopped (a run that may be paused):
    /// the driver then remembers what its awaited calls were.
    fn pausable(&self) -> bool {
        false
    }
    /// Whether the stop underway pauses the program (its state is kept) rather than ending it.
    fn pausing(&self) -> bool {
        false
    }
}

/// The interpreter's limits for one run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Limits {
    pub(crate) cpu_budget: Duration,
    pub(crate) max_recursion_depth: usize,
    pub(crate) max_value_depth: usize,
    pub(crate) max_source_bytes: usize,
    pub(crate) max_tool_calls: usize,
    /// The interpreter's memory limit: the worker's real limit, or in process the cap on one
    /// allocation (nothing else is counted there).
    pub(crate) memory_limit_bytes: usize,
    /// Whether `memory_limit_bytes` is a real limit (a worker process).
    pub(crate) memory_enforced: bool,
}

impl Limits {
    /// The message of the call-limit failure.
    pub(crate) fn call_limit_message(&self) -> String {
        format!(
            "tool call limit reached ({} calls per run)",
            self.max_tool_calls
        )
    }
}

/// How a run ended, as the driver saw it.
#[derive(Debug)]
pub(crate) enum Ending {
    /// The program returned (`None`: nothing, or `None`).
    Value(Option<Value>),
    /// The program failed.
    Error(CodeRunError),
    /// The host stopped the run.
    Stopped,
    /// The host paused the run: its state.
    Paused(Paused),
}

/// The `print` side: complete lines go to the host, one log entry each.
struct Printer<'h> {
    host: &'h mut dyn Host,
    partial: &'h mut String,
}

impl Printer<'_> {
    fn flush_lines(&mut self) -> Result<(), MontyException> {
        while let Some(end) = self.partial.find('\n') {
            let line = self.partial[..end].to_owned();
            self.partial.drain(..=end);
            if !self.host.log(line) {
                self.partial.clear();
                return Err(output_full());
            }
        }
        Ok(())
    }
}

fn output_full() -> MontyException {
    MontyException::new(
        ExcType::MemoryError,
        Some("output limit reached".to_owned()),
    )
}

impl PrintWriterCallback for Printer<'_> {
    fn stdout_write(&mut self, output: Cow<'_, str>) -> Result<(), MontyException> {
        self.partial.push_str(&output);
        if output.contains('\n') {
            self.flush_lines()
        } else {
            Ok(())
        }
    }

    fn stdout_push(&mut self, end: char) -> Result<(), MontyException> {
        self.partial.push(end);
        if end == '\n' {
            self.flush_lines()
        } else {
            Ok(())
        }
    }

    /// The interpreter's periodic checkpoint: a stop raises here (the program may catch it, but
    /// it is raised again at every checkpoint, and the next suspension ends the run for good).
    fn poll_flush(&mut self) -> Result<(), MontyException> {
        // A pause waits for the program's next suspension (its state is kept there).
        if self.host.stopped() && !self.host.pausing() {
            return Err(stop_exception());
        }
        Ok(())
    }
}

fn stop_exception() -> MontyException {
    MontyException::new(
        ExcType::TimeoutError,
        Some("the run was stopped".to_owned()),
    )
}

/// The builtin class a failed tool call raises, bound to `ToolCallError` by the prelude: the
/// interpreter cannot define exception classes, and neither it nor this host raises this one
/// (the sandbox's OS calls are refused with `PermissionError`), so `except ToolCallError`
/// catches tool failures only. An `OSError`, as a failed exchange with the outside is.
pub(crate) const TOOL_CALL_ERROR: ExcType = ExcType::NotADirectoryError;

/// A failed call of `function`: `ToolCallError` with `<function>: <message>`.
fn tool_error(function: &str, message: &str, failures: &mut Vec<String>) -> ExtFunctionResult {
    let message = format!("{function}: {message}");
    failures.push(message.clone());
    ExtFunctionResult::Error(MontyException::new(TOOL_CALL_ERROR, Some(message)))
}

/// The object a binding global names: a host class (`<class 'Tools'>` for `tools`).
fn namespace_object(index: usize, global: &str) -> MontyObject {
    let mut name = global.to_owned();
    if let Some(first) = name.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    MontyObject::Type(MontyType::Instance(Box::new(MontyClassType {
        name,
        id: namespace_id(index),
        host_defined: true,
        is_dataclass: false,
        attrs: DictPairs::default(),
    })))
}

fn function(global: &str, name: &str) -> MontyObject {
    MontyObject::Function {
        name: format!("{global}.{name}"),
        docstring: None,
    }
}

/// Runs `program` to its end.
pub(crate) fn run(
    program: &str,
    namespaces: &[Namespace],
    limits: &Limits,
    host: &mut dyn Host,
) -> Ending {
    let runner = match program::prepare(program, namespaces, limits.max_source_bytes) {
        Ok(runner) => runner,
        Err(error) => return Ending::Error(error),
    };
    Driver {
        program,
        namespaces,
        limits,
        host,
        partial: String::new(),
        failures: Vec::new(),
        awaited: Vec::new(),
        started: Vec::new(),
        calls: 0,
    }
    .drive(runner)
}

/// Continues a paused program (an authenticated snapshot): its awaited calls are started again
/// first, in order, then it carries on where it paused.
pub(crate) fn resume(
    program: &str,
    paused: &Paused,
    namespaces: &[Namespace],
    limits: &Limits,
    host: &mut dyn Host,
) -> Ending {
    let progress = match paused.progress() {
        Ok(progress) => progress,
        Err(message) => {
            return Ending::Error(CodeRunError {
                kind: CodeErrorKind::Exception,
                message,
            });
        }
    };
    let state = paused.driver.clone();
    let mut driver = Driver {
        program,
        namespaces,
        limits,
        host,
        partial: state.partial,
        failures: state.failures,
        awaited: Vec::new(),
        started: Vec::new(),
        calls: state.calls,
    };
    for call in state.awaited {
        let function = namespaces
            .get(call.namespace)
            .and_then(|n| n.functions.iter().position(|f| *f == call.function));
        let Some(function) = function else {
            return Ending::Error(CodeRunError {
                kind: CodeErrorKind::Exception,
                message: format!(
                    "the paused program awaits tools.{}, which this host does not have",
                    call.function
                ),
            });
        };
        let started = driver
            .host
            .start(call.id, call.namespace, function, call.args.clone());
        if let Err(message) = started {
            return Ending::Error(CodeRunError {
                kind: CodeErrorKind::Exception,
                message,
            });
        }
        driver.started.push((call.id, call.function.clone()));
        driver.awaited.push(call);
    }
    driver.drive_from(Ok(progress))
}

struct Driver<'d> {
    /// The model's program, as written.
    program: &'d str,
    namespaces: &'d [Namespace],
    limits: &'d Limits,
    host: &'d mut dyn Host,
    partial: String,
    /// The messages of the tool failures raised into the program.
    failures: Vec<String>,
    /// The started tool calls not yet delivered (kept when the host is pausable).
    awaited: Vec<Awaited>,
    /// The started tool calls not yet delivered: id and function name (a failure names it).
    started: Vec<(u32, String)>,
    /// Tool calls started so far (across resumptions).
    calls: usize,
}

/// One step's writer: a printer over the host, built for each call into the interpreter.
macro_rules! print_to {
    ($driver:expr) => {
        PrintWriter::Callback(&mut Printer {
            host: &mut *$driver.host,
            partial: &mut $driver.partial,
        })
    };
}

impl Driver<'_> {
    fn drive(mut self, runner: MontyRun) -> Ending {
        let mut resource_limits = ResourceLimits::default()
            .max_duration(self.limits.cpu_budget)
            .max_recursion_depth(self.limits.max_recursion_depth)
            .max_memory(self.limits.memory_limit_bytes);
        resource_limits.max_suspensions = usize::MAX;
        let tracker = ResourceTracker::new(resource_limits);
        let inputs = self
            .namespaces
            .iter()
            .enumerate()
            .map(|(i, n)| namespace_object(i, &n.global))
            .collect();
        let progress = runner.start(inputs, tracker, print_to!(self));
        self.drive_from(progress)
    }

    fn drive_from(mut self, mut progress: Result<RunProgress, MontyException>) -> Ending {
        loop {
            let step = match progress {
                Ok(step) => step,
                Err(exc) => return self.failed(exc),
            };
            if self.host.stopped() {
                return self.stop(step);
            }
            progress = match step {
                RunProgress::Complete(value) => return self.complete(&value),
                RunProgress::FunctionCall(call) => {
                    let answer = self.function_call(
                        call.object_id,
                        &call.function_name,
                        call.call_id,
                        &call.args,
                        &call.kwargs,
                    );
                    match answer {
                        Some(result) => call.resume(result, print_to!(self)),
                        None => call.resume_pending(print_to!(self)),
                    }
                }
                RunProgress::NameLookup(lookup) => {
                    let found = lookup
                        .object_id()
                        .and_then(|id| self.namespace_of(id))
                        .filter(|n| self.namespaces[*n].functions.contains(&lookup.name));
                    let answer = match found {
                        Some(n) => NameLookupResult::Value(function(
                            &self.namespaces[n].global,
                            &lookup.name,
                        )),
                        None => NameLookupResult::Undefined,
                    };
                    lookup.resume(answer, print_to!(self))
                }
                RunProgress::OsCall(call) => {
                    let refusal = MontyException::new(
                        ExcType::PermissionError,
                        Some(
                            "no file, network or environment access in the sandbox; use the tools"
                                .to_owned(),
                        ),
                    );
                    call.resume(ExtFunctionResult::Error(refusal), print_to!(self))
                }
                RunProgress::ResolveFutures(state) => {
                    let pending = state.pending_call_ids().to_vec();
                    let results = loop {
                        let Some(finished) = self.host.wait() else {
                            return self.stop(RunProgress::ResolveFutures(state));
                        };
                        let results: Vec<(u32, ExtFunctionResult)> = finished
                            .into_iter()
                            .filter(|(id, _)| pending.contains(id))
                            .map(|(id, result)| (id, self.resolution(id, result)))
                            .collect();
                        if !results.is_empty() {
                            self.awaited
                                .retain(|call| !results.iter().any(|(id, _)| *id == call.id));
                            break results;
                        }
                    };
                    state.resume(results, print_to!(self))
                }
            };
        }
    }

    /// The namespace whose class object has `id`.
    fn namespace_of(&self, id: MontyUuid) -> Option<usize> {
        (0..self.namespaces.len()).find(|i| namespace_id(*i) == id)
    }

    /// The namespace and function a call names: a method of a namespace object, or an external
    /// function handed out as `global.name`.
    fn target(&self, object: Option<MontyUuid>, name: &str) -> Option<(usize, usize)> {
        let (namespace, function) = match object {
            Some(id) => (self.namespace_of(id)?, name),
            None => {
                let (global, function) = name.split_once('.')?;
                (
                    self.namespaces.iter().position(|n| n.global == global)?,
                    function,
                )
            }
        };
        let index = self.namespaces[namespace]
            .functions
            .iter()
            .position(|f| f == function)?;
        Some((namespace, index))
    }

    /// The answer to a function call: `Some` at once, `None` for a pending tool call.
    fn function_call(
        &mut self,
        object: Option<MontyUuid>,
        name: &str,
        id: u32,
        args: &[MontyObject],
        kwargs: &[(MontyObject, MontyObject)],
    ) -> Option<ExtFunctionResult> {
        if let Some(namespace) = object.and_then(|id| self.namespace_of(id))
            && name == "__call__"
        {
            // `tools[name]`.
            let global = &self.namespaces[namespace].global;
            return Some(match (args, kwargs) {
                ([MontyObject::String(tool)], [])
                    if self.namespaces[namespace].functions.contains(tool) =>
                {
                    ExtFunctionResult::Return(function(global, tool))
                }
                ([MontyObject::String(tool)], []) => {
                    let functions = &self.namespaces[namespace].functions;
                    let message = crate::suggest::no_function(global, tool, functions);
                    ExtFunctionResult::Error(MontyException::new(ExcType::KeyError, Some(message)))
                }
                _ => ExtFunctionResult::Error(MontyException::new(
                    ExcType::TypeError,
                    Some(format!("{global}[...] takes one name (a str)")),
                )),
            });
        }
        let Some((namespace, function)) = self.target(object, name) else {
            return Some(ExtFunctionResult::NotFound(name.to_owned()));
        };
        let arguments = match (args, kwargs) {
            ([only], []) => convert::to_json(only, self.limits.max_value_depth),
            _ => Err(Lossy::Value(String::new())),
        };
        let namespaces = self.namespaces;
        let name = &namespaces[namespace].functions[function];
        // Tool search's helpers (`$search`, `$describe`) take a string too; tools take a dict.
        let helper = name.starts_with('$');
        let failures = &mut self.failures;
        let arguments = match arguments {
            Ok(arguments @ Value::Object(_)) => arguments,
            Ok(arguments) if helper => arguments,
            Ok(_) => return Some(tool_error(name, ARGS_NOT_LOSSLESS, failures)),
            Err(Lossy::Value(what)) if !what.is_empty() => {
                let message = format!("tool arguments must be lossless JSON: {what}");
                return Some(tool_error(name, &message, failures));
            }
            Err(Lossy::TooDeep) => {
                let message = format!(
                    "tool arguments must be lossless JSON: nested deeper than {} levels",
                    self.limits.max_value_depth
                );
                return Some(tool_error(name, &message, failures));
            }
            Err(Lossy::Value(_)) => return Some(tool_error(name, ARGS_NOT_LOSSLESS, failures)),
        };
        let kept = self.host.pausable().then(|| arguments.clone());
        match self.host.start(id, namespace, function, arguments) {
            Ok(()) => {
                self.calls += 1;
                self.started.push((id, name.clone()));
                if let Some(args) = kept {
                    self.awaited.push(Awaited {
                        id,
                        ordinal: self.calls,
                        namespace,
                        function: self.namespaces[namespace].functions[function].clone(),
                        args,
                    });
                }
                None
            }
            // The call limit: the program's own doing, not the tool's failure (as in
            // TypeScript, a plain error).
            Err(message) => Some(ExtFunctionResult::Error(MontyException::new(
                ExcType::RuntimeError,
                Some(message),
            ))),
        }
    }

    /// The answer to started call `id`: its value, or `ToolCallError` naming its function.
    fn resolution(&mut self, id: u32, result: Result<Value, String>) -> ExtFunctionResult {
        let position = self.started.iter().position(|(started, _)| *started == id);
        let name = position.map_or_else(String::new, |i| self.started.swap_remove(i).1);
        match result {
            Ok(value) => match convert::from_json(&value, self.limits.max_value_depth) {
                Ok(object) => ExtFunctionResult::Return(object),
                Err(_) => tool_error(&name, RESOLUTION_NOT_LOSSLESS, &mut self.failures),
            },
            Err(message) => tool_error(&name, &message, &mut self.failures),
        }
    }

    fn complete(mut self, value: &MontyObject) -> Ending {
        self.flush_partial();
        if matches!(value, MontyObject::None) {
            return Ending::Value(None);
        }
        match convert::to_json(value, self.limits.max_value_depth) {
            Ok(json) => Ending::Value(Some(json)),
            Err(lossy) => Ending::Error(CodeRunError {
                kind: CodeErrorKind::InvalidOutput,
                message: format!(
                    "program completion must be lossless JSON: {}",
                    lossy.detail(self.limits.max_value_depth)
                ),
            }),
        }
    }

    fn failed(mut self, exc: MontyException) -> Ending {
        self.flush_partial();
        if self.host.stopped() {
            return Ending::Stopped;
        }
        let call_limit = self.limits.call_limit_message();
        let context = Context {
            tool_failures: &self.failures,
            call_limit_message: &call_limit,
            cpu_budget: self.limits.cpu_budget,
            max_recursion_depth: self.limits.max_recursion_depth,
            memory_limit_bytes: self
                .limits
                .memory_enforced
                .then_some(self.limits.memory_limit_bytes),
            source: self.program,
        };
        Ending::Error(outcome::classify(exc, &context))
    }

    /// Ends a stopped run: the program is aborted where it is suspended (its handlers do not
    /// run), the logs so far kept.
    fn stop(mut self, step: RunProgress) -> Ending {
        if self.host.pausing() {
            return self.pause(&step);
        }
        let aborted = match step {
            RunProgress::FunctionCall(call) => call.abort(stop_exception(), PrintWriter::Disabled),
            RunProgress::ResolveFutures(state) => {
                state.abort(stop_exception(), PrintWriter::Disabled)
            }
            RunProgress::NameLookup(lookup) => {
                lookup.abort(stop_exception(), PrintWriter::Disabled)
            }
            RunProgress::OsCall(call) => call.abort(stop_exception(), PrintWriter::Disabled),
            RunProgress::Complete(_) => Ok(RunProgress::Complete(MontyObject::None)),
        };
        drop(aborted);
        self.flush_partial();
        Ending::Stopped
    }

    /// Pauses the run where it is suspended: its state, and what the driver knew.
    fn pause(self, step: &RunProgress) -> Ending {
        let driver = DriverState {
            awaited: self.awaited,
            calls: self.calls,
            failures: self.failures,
            partial: self.partial,
            logs: Vec::new(),
        };
        match Paused::new(driver, step) {
            Ok(paused) => Ending::Paused(paused),
            Err(message) => Ending::Error(CodeRunError {
                kind: CodeErrorKind::Exception,
                message,
            }),
        }
    }

    /// A last line without its newline is a log entry too.
    fn flush_partial(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.host.log(line);
        }
    }
}
