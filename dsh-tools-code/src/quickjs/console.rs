//! The captured `console` (`docs/CONTRACTS.md`, "The QuickJS sandbox"): `log`, `info`, `warn`,
//! `error`, `debug`; one log entry per call, arguments joined by one space, strings verbatim, other
//! values rendered approximately like Node's `util.inspect` (single line, depth 4, 100 array items,
//! 10,000 characters per string). Getters are shown as `[Getter]`, never run.

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};

use super::bindings::RunState;
use super::convert::js_string;
use super::inspect::Inspect;
use crate::sandbox::shared::Stop;

/// The `console` object.
pub(crate) fn console<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState<'js>>,
) -> rquickjs::Result<Object<'js>> {
    let console = Object::new(ctx.clone())?;
    for name in ["log", "info", "warn", "error", "debug"] {
        let state = state.clone();
        let method = Function::new(ctx.clone(), move |args: Rest<Value<'js>>| {
            log(&state, args.0)
        })?
        .with_name(name)?;
        console.set(name, method)?;
    }
    Ok(console)
}

fn log<'js>(state: &RunState<'js>, args: Vec<Value<'js>>) -> rquickjs::Result<()> {
    if state.shared.stopped().is_some() {
        return Ok(());
    }
    let Some(env) = state.env() else {
        return Ok(());
    };
    let mut out = Inspect {
        env: &env,
        out: String::new(),
        budget: state.max_output_bytes,
        seen: Vec::new(),
    };
    for (index, arg) in args.iter().enumerate() {
        if index > 0 {
            out.out.push(' ');
        }
        match arg.as_string() {
            Some(s) => out.out.push_str(&js_string(&env, s)?),
            None => out.value(arg, 0)?,
        }
        if out.full() {
            break;
        }
    }
    if !state.shared.ledger().push(out.out) {
        // Over budget: the interrupt handler ends the program at its next poll.
        state.shared.stop(Stop::Output);
    }
    Ok(())
}
