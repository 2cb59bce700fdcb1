//! The program's global surface: an allow-list (see [`GLOBAL_ALLOW_LIST`]).
//!
//! A fresh context gets the standard built-ins only (no `std`/`os`, no module loader, no timers,
//! no `performance`, no `DOMException`). Before any program runs, [`setup`]:
//! - makes the `constructor` of `Function.prototype`, `AsyncFunction.prototype`,
//!   `GeneratorFunction.prototype` and `AsyncGeneratorFunction.prototype` a non-writable,
//!   non-configurable function that throws `EvalError` — together with deleting `eval` and
//!   `Function`, no code can be compiled from a string;
//! - deletes every global not in the allow-list (`eval`, `Function`, `queueMicrotask`,
//!   `InternalError`…);
//! - captures the intrinsics the host uses, before the program can touch them.
//!
//! Then [`install`] adds `console`, the binding namespaces and the error classes. Only a tiny
//! script is compiled (to reach the async and generator function prototypes); the rest is
//! native, so building a sandbox costs little more than QuickJS's own context. No native
//! function keeps a JS value alive: nothing can form a cycle the engine's GC cannot see.

use std::rc::Rc;

use rquickjs::context::EvalOptions;
use rquickjs::function::{Rest, This};
use rquickjs::object::{Filter, Property};
use rquickjs::{Atom, Coerced, Constructor, Ctx, Exception, Function, Object, Value};

use super::GLOBAL_ALLOW_LIST;
use super::bindings::{self, RunState};
use super::console;

/// File name of the setup script in stack traces.
pub(crate) const SETUP_FILE: &str = "<sandbox>";

/// The message of the `EvalError` the blocked constructors throw.
pub(crate) const BLOCKED_MESSAGE: &str = "code generation from strings is disabled in this sandbox";

/// The intrinsics the host uses, captured before the program runs.
#[derive(Clone)]
pub(crate) struct Env<'js> {
    pub(crate) object_proto: Object<'js>,
    pub(crate) array_proto: Object<'js>,
    pub(crate) get_own_property_descriptor: Function<'js>,
    pub(crate) get_prototype_of: Function<'js>,
    pub(crate) string: Function<'js>,
    pub(crate) to_well_formed: Function<'js>,
    pub(crate) date_proto: Object<'js>,
    pub(crate) date_to_iso: Function<'js>,
    pub(crate) map_proto: Object<'js>,
    pub(crate) set_proto: Object<'js>,
    pub(crate) array_from: Function<'js>,
    pub(crate) map_entries: Function<'js>,
    pub(crate) set_values: Function<'js>,
    pub(crate) async_function_proto: Object<'js>,
    pub(crate) regexp_proto: Object<'js>,
    pub(crate) regexp_to_string: Function<'js>,
    pub(crate) own_keys: Function<'js>,
}

/// What every reachable function constructor becomes.
fn blocked<'js>(ctx: Ctx<'js>) -> rquickjs::Result<()> {
    // Looked up when called, not captured: a native function holding a JS value could form a
    // cycle through `Function.prototype` that outlives the context.
    match ctx.globals().get::<_, Constructor<'js>>("EvalError") {
        Ok(eval_error) => {
            let error: Value<'js> = eval_error.construct((BLOCKED_MESSAGE,))?;
            Err(ctx.throw(error))
        }
        Err(_) => Err(Exception::throw_type(&ctx, BLOCKED_MESSAGE)),
    }
}

/// Redefines `proto.constructor` as `value`: non-writable, non-enumerable, non-configurable.
fn lock_constructor<'js>(proto: &Object<'js>, value: &Function<'js>) -> rquickjs::Result<()> {
    proto.remove("constructor")?;
    proto.prop("constructor", Property::from(value.clone()))
}

/// Locks down the fresh context and captures the intrinsics.
pub(crate) fn setup<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Env<'js>> {
    let globals = ctx.globals();
    let object: Object<'js> = globals.get("Object")?;
    let array: Object<'js> = globals.get("Array")?;
    let string: Function<'js> = globals.get("String")?;
    let string_proto: Object<'js> = string.get("prototype")?;
    let proto = |name: &str| -> rquickjs::Result<Object<'js>> {
        globals.get::<_, Object<'js>>(name)?.get("prototype")
    };
    let (date_proto, map_proto, set_proto, regexp_proto) = (
        proto("Date")?,
        proto("Map")?,
        proto("Set")?,
        proto("RegExp")?,
    );
    let reflect: Object<'js> = globals.get("Reflect")?;

    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(SETUP_FILE.to_owned());
    let functions: rquickjs::Array<'js> = ctx.eval_with_options(
        "[async function () {}, function* () {}, async function* () {}]",
        options,
    )?;
    let prototype_of = |index: usize| -> rquickjs::Result<Object<'js>> {
        functions
            .get::<Object<'js>>(index)?
            .get_prototype()
            .ok_or(rquickjs::Error::Unknown)
    };
    let async_function_proto = prototype_of(0)?;
    let stub = Function::new(ctx.clone(), blocked)?.with_name("Function")?;
    for proto in [
        Function::prototype(ctx.clone()),
        async_function_proto.clone(),
        prototype_of(1)?,
        prototype_of(2)?,
    ] {
        lock_constructor(&proto, &stub)?;
    }
    let names: Vec<Atom<'js>> = globals
        .own_keys(Filter::new().string())
        .collect::<rquickjs::Result<_>>()?;
    for name in names {
        if !GLOBAL_ALLOW_LIST.contains(&name.to_string()?.as_str()) {
            globals.remove(name)?;
        }
    }
    Ok(Env {
        get_own_property_descriptor: object.get("getOwnPropertyDescriptor")?,
        get_prototype_of: object.get("getPrototypeOf")?,
        object_proto: object.get("prototype")?,
        array_proto: array.get("prototype")?,
        array_from: array.get("from")?,
        to_well_formed: string_proto.get("toWellFormed")?,
        string,
        date_to_iso: date_proto.get("toISOString")?,
        date_proto,
        map_entries: map_proto.get("entries")?,
        map_proto,
        set_values: set_proto.get("values")?,
        set_proto,
        regexp_to_string: regexp_proto.get("toString")?,
        regexp_proto,
        async_function_proto,
        own_keys: reflect.get("ownKeys")?,
    })
}

/// An error class that behaves like `class <name> extends Error`: its instances are `Error`
/// objects (`instanceof` works, they carry a stack) with `name` = `name` (on the prototype) and
/// the own property `member` = the second argument; the constructor's own prototype is `Error`.
fn error_class<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    member: &str,
) -> rquickjs::Result<Constructor<'js>> {
    let error: Object<'js> = ctx.globals().get("Error")?;
    let proto = Object::new(ctx.clone())?;
    proto.set_prototype(Some(&error.get::<_, Object<'js>>("prototype")?))?;
    let (class_name, member) = (name.to_owned(), member.to_owned());
    let constructor = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, this: This<Value<'js>>, args: Rest<Value<'js>>| {
            // Constructed, `this` is `new.target`; its `prototype` is the instances' prototype
            // (read, not captured: see `blocked`).
            let Some(target) = this.0.as_function() else {
                let message =
                    format!("Class constructor {class_name} cannot be invoked without 'new'");
                return Err(Exception::throw_type(&ctx, &message));
            };
            let proto: Object<'js> = target.get("prototype")?;
            let mut args = args.0.into_iter();
            let message = match args.next() {
                Some(v) if !v.is_undefined() => v.get::<Coerced<String>>()?.0,
                _ => String::new(),
            };
            let instance = Exception::from_message(ctx.clone(), &message)?.into_object();
            instance.set_prototype(Some(&proto))?;
            let value = args
                .next()
                .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
            instance.prop(
                member.as_str(),
                Property::from(value).writable().enumerable().configurable(),
            )?;
            Ok(instance.into_value())
        },
    )?
    .with_name(name)?;
    constructor.set_constructor(true);
    // `class ToolCallError extends Error`: the constructor inherits from `Error` too.
    constructor.set_prototype(Some(&error))?;
    constructor.prop("prototype", Property::from(proto.clone()))?;
    proto.prop(
        "constructor",
        Property::from(constructor.clone())
            .writable()
            .configurable(),
    )?;
    proto.prop("name", Property::from(name).writable().configurable())?;
    constructor.into_value().get()
}

/// Wraps a namespace object so that reading a name it lacks throws (as Python's `KeyError`):
/// `<global> has no function named '<name>'; did you mean <global>["<near>"]?`. Symbols and the
/// names the engine and JSON probe (`then`, `toJSON`, `constructor`, `toString`, `valueOf`)
/// stay `undefined`; `in`, `Object.keys` and own-property reads see the object as it is.
const GUARD: &str = r#"(function (target, missing) {
  "use strict";
  const quiet = ["then", "toJSON", "constructor", "toString", "valueOf"];
  return new Proxy(target, {
    get(t, key) {
      if (typeof key === "string" && !(key in t) && !quiet.includes(key)) {
        throw new TypeError(missing(key));
      }
      return t[key];
    },
  });
})"#;

/// The namespace `object` behind its guard (see [`GUARD`]).
fn guarded<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState<'js>>,
    index: usize,
    object: Object<'js>,
) -> rquickjs::Result<Value<'js>> {
    let namespace = &state.namespaces[index];
    let (global, functions) = (namespace.global.clone(), namespace.functions.clone());
    let missing = Function::new(ctx.clone(), move |name: String| {
        crate::suggest::no_function(&global, &name, &functions)
    })?;
    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(SETUP_FILE.to_owned());
    let guard: Function<'js> = ctx.eval_with_options(GUARD, options)?;
    guard.call((object, missing))
}

/// Adds `console`, the namespaces and the error classes; returns the classes by namespace.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState<'js>>,
) -> rquickjs::Result<Vec<Option<Constructor<'js>>>> {
    let globals = ctx.globals();
    globals.set("console", console::console(ctx, state)?)?;
    if let Some(record) = &state.record {
        super::sources::install(ctx, record)?;
    }
    let mut classes = Vec::with_capacity(state.namespaces.len());
    for (index, namespace) in state.namespaces.iter().enumerate() {
        let object = Object::new(ctx.clone())?;
        object.set_prototype(None)?;
        for (function, name) in namespace.functions.iter().enumerate() {
            let f = bindings::binding_function(ctx, state, index, function)?;
            object.prop(
                name.as_str(),
                rquickjs::object::Property::from(f)
                    .writable()
                    .enumerable()
                    .configurable(),
            )?;
        }
        globals.set(
            namespace.global.as_str(),
            guarded(ctx, state, index, object)?,
        )?;
        let class = match &namespace.error_class {
            Some(class) => {
                let constructor = error_class(ctx, &class.name, &class.member_name_property)?;
                globals.set(class.name.as_str(), constructor.clone())?;
                Some(constructor)
            }
            None => None,
        };
        classes.push(class);
    }
    Ok(classes)
}
