//! The program side of binding calls: `tools.x(args)` returns a promise, the arguments go to
//! the host as lossless JSON, and the host's reply settles the promise.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::function::Rest;
use rquickjs::{Constructor, Ctx, Exception, Function, Promise, Value};

use crate::record::RunRecord;
use crate::runtime::ErrorClass;
use crate::texts::{ARGS_NOT_LOSSLESS, RESOLUTION_NOT_LOSSLESS};

use super::build::{self, ToJsError};
use super::convert::{self, ToJsonError};
use super::errors;
use super::globals::Env;
use super::schedule::Schedule;
use crate::sandbox::calls::{CallRequest, Calls};
use crate::sandbox::shared::Shared;

/// The names of one namespace (the functions themselves stay on the host side).
#[derive(Debug, Clone)]
pub(crate) struct NamespaceSpec {
    pub(crate) global: String,
    pub(crate) functions: Vec<String>,
    pub(crate) error_class: Option<ErrorClass>,
}

/// A call waiting for its reply.
struct Pending<'js> {
    resolve: Function<'js>,
    reject: Function<'js>,
    namespace: usize,
    function: usize,
    /// The engine's stack when the program made the call, read (for the program's frames) only
    /// if the call fails: a failure's `stack` (it settles later, from the host, where no program
    /// frame is on the stack).
    site: Option<rquickjs::String<'js>>,
}

/// Engine values of a run; dropped (by [`RunState::clear`]) before the context is.
struct Live<'js> {
    env: Rc<Env<'js>>,
    classes: Vec<Option<Constructor<'js>>>,
    call_limit_error: Option<Value<'js>>,
    pending: HashMap<u64, Pending<'js>>,
}

/// The per-run state the binding and console functions share.
pub(crate) struct RunState<'js> {
    pub(crate) namespaces: Vec<NamespaceSpec>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) max_output_bytes: usize,
    pub(crate) max_value_depth: usize,
    max_tool_calls: usize,
    pub(crate) calls: RefCell<Calls>,
    /// When results reach the program (recorded and replayed with a record).
    pub(crate) schedule: RefCell<Schedule>,
    /// The run's record, if it has one (its `Date` and `Math.random` read it).
    pub(crate) record: Option<RunRecord>,
    /// The stripped, wrapped program (to place a call's position on its callee).
    script: String,
    /// Per namespace and function, the start of its only call site in `script`
    /// ([`super::sites`]): such calls keep no engine stack.
    single_sites: Vec<Vec<Option<usize>>>,
    calls_made: Cell<usize>,
    next_id: Cell<u64>,
    live: RefCell<Option<Live<'js>>>,
}

impl<'js> RunState<'js> {
    pub(crate) fn new(
        namespaces: Vec<NamespaceSpec>,
        shared: Arc<Shared>,
        calls: Calls,
        limits: (usize, usize, usize),
        record: Option<RunRecord>,
    ) -> Self {
        let (max_output_bytes, max_value_depth, max_tool_calls) = limits;
        Self {
            namespaces,
            shared,
            max_output_bytes,
            max_value_depth,
            max_tool_calls,
            calls: RefCell::new(calls),
            schedule: RefCell::new(Schedule::new(record.clone())),
            record,
            script: String::new(),
            single_sites: Vec::new(),
            calls_made: Cell::new(0),
            next_id: Cell::new(1),
            live: RefCell::new(None),
        }
    }

    /// The state of a run of `script` (the stripped, wrapped program).
    pub(crate) fn with_script(mut self, script: String) -> Self {
        self.single_sites = super::sites::single_sites(&script, &self.namespaces);
        self.script = script;
        self
    }

    /// Where the only call site of a function in the script starts, if it has exactly one.
    fn single_site(&self, namespace: usize, function: usize) -> Option<usize> {
        *self.single_sites.get(namespace)?.get(function)?
    }

    /// Makes the engine values available to the binding functions.
    pub(crate) fn activate(&self, env: Rc<Env<'js>>, classes: Vec<Option<Constructor<'js>>>) {
        *self.live.borrow_mut() = Some(Live {
            env,
            classes,
            call_limit_error: None,
            pending: HashMap::new(),
        });
    }

    /// The id of the last call the program made (0: none yet).
    pub(crate) fn submitted(&self) -> u64 {
        self.next_id.get() - 1
    }

    /// Drops every engine value the state holds.
    pub(crate) fn clear(&self) {
        let live = self.live.borrow_mut().take();
        drop(live);
    }

    /// The captured intrinsics (`None` before setup or after the run).
    pub(crate) fn env(&self) -> Option<Rc<Env<'js>>> {
        self.live.borrow().as_ref().map(|live| live.env.clone())
    }

    /// Whether `thrown` is this run's call-limit rejection.
    pub(crate) fn is_call_limit_error(&self, thrown: &Value<'js>) -> bool {
        self.live
            .borrow()
            .as_ref()
            .and_then(|live| live.call_limit_error.as_ref())
            .is_some_and(|error| error == thrown)
    }

    /// The message of the call-limit rejection.
    pub(crate) fn call_limit_message(&self) -> String {
        format!(
            "tool call limit reached ({} calls per run)",
            self.max_tool_calls
        )
    }

    fn call_limit_error(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Value<'js>> {
        if let Some(error) = self
            .live
            .borrow()
            .as_ref()
            .and_then(|l| l.call_limit_error.clone())
        {
            return Ok(error);
        }
        let error = Exception::from_message(ctx.clone(), &self.call_limit_message())?.into_value();
        if let Some(live) = self.live.borrow_mut().as_mut() {
            live.call_limit_error = Some(error.clone());
        }
        Ok(error)
    }

    /// The tool a thrown instance of a namespace's error class names (its member property);
    /// `None` for any other value.
    pub(crate) fn tool_of(&self, thrown: &Value<'js>) -> Option<String> {
        let object = thrown.as_object()?;
        let live = self.live.borrow();
        let classes = &live.as_ref()?.classes;
        self.namespaces
            .iter()
            .zip(classes)
            .find_map(|(namespace, class)| {
                let class = class.as_ref()?;
                let proto: rquickjs::Object<'js> = class.get("prototype").ok()?;
                if object.get_prototype().as_ref() != Some(&proto) {
                    return None;
                }
                let member = &namespace.error_class.as_ref()?.member_name_property;
                let tool = object.get::<_, Value<'js>>(member.as_str()).ok()?;
                tool.as_string()?.to_string().ok()
            })
    }

    /// The rejection value of a failed call: an instance of the namespace's error class (member
    /// property = binding name), or a plain `Error`; its stack is `site` (the program's frames
    /// at the call), placed on the callee now that the call failed (successes pay nothing).
    fn failure(
        &self,
        ctx: &Ctx<'js>,
        namespace: usize,
        function: usize,
        message: &str,
        site: Option<&rquickjs::String<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        let class = self
            .live
            .borrow()
            .as_ref()
            .and_then(|l| l.classes.get(namespace).cloned().flatten());
        let name = self.namespaces[namespace].functions[function].as_str();
        let failure: Value<'js> = match class {
            Some(class) => class.construct((message, name))?,
            None => Exception::from_message(ctx.clone(), message)?.into_value(),
        };
        let frames = match site {
            Some(site) => self.env().and_then(|env| program_frames(&env, site)),
            None => self
                .single_site(namespace, function)
                .map(|offset| super::sites::frame_at(&self.script, offset)),
        };
        if let (Some(frames), Some(object)) = (frames, failure.as_object()) {
            object.set("stack", errors::place_call(&frames, &self.script, name))?;
        }
        Ok(failure)
    }
}

/// The JS function behind `<global>.<name>`.
pub(crate) fn binding_function<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState<'js>>,
    namespace: usize,
    function: usize,
) -> rquickjs::Result<Function<'js>> {
    let name = state.namespaces[namespace].functions[function].clone();
    let state = state.clone();
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
        call(&ctx, &state, namespace, function, args.0)
    })?
    .with_name(name)
}

fn call<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    namespace: usize,
    function: usize,
    args: Vec<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, resolve, reject) = ctx.promise()?;
    let Some(env) = state.env() else {
        reject.call::<_, ()>((state.failure(
            ctx,
            namespace,
            function,
            "run_code run is over",
            None,
        )?,))?;
        return Ok(promise);
    };
    let site = match state.single_site(namespace, function) {
        Some(_) => None,
        None => call_site(ctx),
    };
    let root = args
        .into_iter()
        .next()
        .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
    let args = match convert::to_json(ctx, &env, root, state.max_value_depth) {
        Ok(Some(json)) => json,
        Ok(None) | Err(ToJsonError::TooDeep) => {
            let error =
                state.failure(ctx, namespace, function, ARGS_NOT_LOSSLESS, site.as_ref())?;
            reject.call::<_, ()>((error,))?;
            return Ok(promise);
        }
        Err(ToJsonError::Lossy { path, what }) => {
            let message = format!("tool arguments must be lossless JSON: {path} {what}");
            reject.call::<_, ()>((state.failure(
                ctx,
                namespace,
                function,
                &message,
                site.as_ref(),
            )?,))?;
            return Ok(promise);
        }
        Err(ToJsonError::Threw(thrown)) => {
            let message = errors::message_of(&env, thrown);
            let message = format!("tool arguments must be lossless JSON: {message}");
            reject.call::<_, ()>((state.failure(
                ctx,
                namespace,
                function,
                &message,
                site.as_ref(),
            )?,))?;
            return Ok(promise);
        }
        Err(ToJsonError::Fatal(error)) => return Err(error),
    };
    if state.calls_made.get() >= state.max_tool_calls {
        reject.call::<_, ()>((state.call_limit_error(ctx)?,))?;
        return Ok(promise);
    }
    state.calls_made.set(state.calls_made.get() + 1);
    let id = state.next_id.get();
    state.next_id.set(id + 1);
    state.calls.borrow_mut().submit(CallRequest {
        id,
        namespace,
        function,
        args,
    });
    if let Some(live) = state.live.borrow_mut().as_mut() {
        live.pending.insert(
            id,
            Pending {
                resolve,
                reject,
                namespace,
                function,
                site,
            },
        );
    }
    Ok(promise)
}

/// Settles a call with the host's reply.
pub(crate) fn settle<'js>(
    ctx: &Ctx<'js>,
    state: &RunState<'js>,
    id: u64,
    result: Result<serde_json::Value, String>,
) -> rquickjs::Result<()> {
    let pending = state
        .live
        .borrow_mut()
        .as_mut()
        .and_then(|live| live.pending.remove(&id));
    let Some(Pending {
        resolve,
        reject,
        namespace,
        function,
        site,
    }) = pending
    else {
        return Ok(()); // unknown or already settled: dropped
    };
    let message = match result {
        Ok(json) => match build::to_js(ctx, &json, state.max_value_depth) {
            Ok(value) => return resolve.call((value,)),
            Err(ToJsError::Fatal(error)) => return Err(error),
            Err(ToJsError::Lossy | ToJsError::TooDeep) => RESOLUTION_NOT_LOSSLESS.to_owned(),
        },
        Err(message) => message,
    };
    reject.call((state.failure(ctx, namespace, function, &message, site.as_ref())?,))
}

/// The engine's stack at a binding call (of an error made now), kept unread: only a failure
/// reads the program's frames out of it ([`program_frames`]).
fn call_site<'js>(ctx: &Ctx<'js>) -> Option<rquickjs::String<'js>> {
    let probe = Exception::from_message(ctx.clone(), "").ok()?;
    probe.get("stack").ok()
}

/// The program's frames of a stack [`call_site`] kept, `None` when there is none.
fn program_frames<'js>(env: &Env<'js>, stack: &rquickjs::String<'js>) -> Option<String> {
    let stack = super::convert::js_string(env, stack).ok()?;
    let frames: Vec<&str> = stack
        .lines()
        .filter(|line| line.contains(errors::PROGRAM_FILE))
        .collect();
    (!frames.is_empty()).then(|| frames.join("\n"))
}
