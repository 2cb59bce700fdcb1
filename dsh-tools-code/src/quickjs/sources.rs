//! Recorded sources: in a run with a [`RunRecord`], `Date.now()`, `new Date()` (no arguments),
//! `Date()` and `Math.random()` read the record instead of the system — the clock reads are
//! recorded (and replayed), and `Math.random` is a generator seeded from the record.
//!
//! `Date` becomes a proxy of the original constructor: with arguments it constructs exactly as
//! before (subclasses included), `Date.prototype` and every static method are the original
//! ones, and `Date.prototype.constructor` is the proxy. The natives hold no JS value.

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::context::EvalOptions;
use rquickjs::{Ctx, Function, Object, Value};

use crate::record::{RunRecord, SeededRandom};

use super::globals::SETUP_FILE;

/// Builds the proxy and installs the natives: `(OriginalDate, now, random, Math) => Date`.
const SHIM: &str = r#"(function (D, now, random, M) {
  "use strict";
  const construct = Reflect.construct, define = Object.defineProperty;
  const P = new Proxy(D, {
    construct(target, args, newTarget) {
      return construct(target, args.length === 0 ? [now()] : args, newTarget);
    },
    apply(target) {
      return construct(target, [now()]).toString();
    },
  });
  define(D, "now", { value: now, writable: true, configurable: true });
  define(D.prototype, "constructor", { value: P, writable: true, configurable: true });
  define(M, "random", { value: random, writable: true, configurable: true });
  return P;
})"#;

/// Routes the context's `Date` and `Math.random` through `record`.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, record: &RunRecord) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let date: Value<'js> = globals.get("Date")?;
    let math: Object<'js> = globals.get("Math")?;
    let clock = record.clone();
    let now = Function::new(ctx.clone(), move || clock.now_ms())?.with_name("now")?;
    let generator = Rc::new(RefCell::new(SeededRandom::new(record.seed())));
    let random = Function::new(ctx.clone(), move || generator.borrow_mut().next_f64())?
        .with_name("random")?;
    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(SETUP_FILE.to_owned());
    let shim: Function<'js> = ctx.eval_with_options(SHIM, options)?;
    let proxy: Value<'js> = shim.call((date, now, random, math))?;
    globals.set("Date", proxy)
}
