//! JS ↔ JSON by the lossless rules (`docs/CONTRACTS.md`, "Lossless JSON"), iteratively (no
//! recursion on the host stack, whatever the depth).
//!
//! JS → JSON reads each property once (a getter runs once) and rejects what a JSON round trip
//! would not reproduce: `undefined` (root, property or element), functions, symbols, BigInt,
//! `NaN`, `±Infinity`, `-0`, arrays that are not plain dense undecorated arrays, objects whose
//! prototype is neither `null` nor `Object.prototype` (class instances, `Date`, `Map`, boxed
//! primitives…), symbol or non-enumerable own keys, cycles. A `__proto__` key is ordinary data.
//! Strings with lone surrogates are made well-formed (U+FFFD), as Rust strings must be.

use rquickjs::object::Filter;
use rquickjs::{Atom, Ctx, Object, Type, Value};
use serde_json::{Map, Number, Value as Json};

use super::globals::Env;

/// A value that is not lossless JSON, not yet placed (see [`ToJsonError::Lossy`]).
fn lossy<'js>(what: &'static str) -> ToJsonError<'js> {
    ToJsonError::Lossy {
        path: String::new(),
        what,
    }
}

/// Places an unplaced [`ToJsonError::Lossy`] at the child being read in `stack`.
fn placed<'js>(error: ToJsonError<'js>, stack: &[Open<'js>]) -> ToJsonError<'js> {
    let ToJsonError::Lossy { path, what } = error else {
        return error;
    };
    if !path.is_empty() {
        return ToJsonError::Lossy { path, what };
    }
    let mut path = String::from("arguments");
    for open in stack {
        match open {
            Open::Array { next, .. } => path.push_str(&format!("[{}]", next.saturating_sub(1))),
            Open::Object { keys, next, .. } => {
                let key = keys
                    .get(next.saturating_sub(1))
                    .map_or("", |k| k.1.as_str());
                if is_identifier(key) {
                    path.push('.');
                    path.push_str(key);
                } else {
                    path.push('[');
                    path.push_str(&Json::String(key.to_owned()).to_string());
                    path.push(']');
                }
            }
        }
    }
    ToJsonError::Lossy { path, what }
}

/// Whether `key` reads as a property access (`a.key`) in a program.
fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// What a double that is not a JSON number is.
fn not_a_number(x: f64) -> &'static str {
    if x.is_nan() {
        "is NaN"
    } else if x == f64::INFINITY {
        "is Infinity"
    } else if x == f64::NEG_INFINITY {
        "is -Infinity"
    } else {
        "is -0"
    }
}

/// Integers beyond ±(2^53 − 1) lose precision in a double.
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why a JS value is not lossless JSON.
pub(crate) enum ToJsonError<'js> {
    /// Not representable: where (`arguments.opts.limit`; empty until [`to_json`] places it)
    /// and what the value is (`is undefined`).
    Lossy {
        /// The value's path, from `arguments`.
        path: String,
        /// What the value is, as a predicate (`is undefined`, `is NaN`).
        what: &'static str,
    },
    /// Nested deeper than the configured depth.
    TooDeep,
    /// A getter, proxy trap or conversion threw this (catchable) value.
    Threw(Value<'js>),
    /// An uncatchable error (interrupt) or allocation failure: propagate it.
    Fatal(rquickjs::Error),
}

/// Maps a failed engine operation: catchable exceptions are caught, the rest propagates.
pub(crate) fn caught<'js>(ctx: &Ctx<'js>, error: rquickjs::Error) -> ToJsonError<'js> {
    if !matches!(error, rquickjs::Error::Exception) {
        return ToJsonError::Fatal(error);
    }
    let thrown = ctx.catch();
    if thrown.is_uncatchable_error() {
        ToJsonError::Fatal(ctx.throw(thrown))
    } else {
        ToJsonError::Threw(thrown)
    }
}

/// A JS string as a Rust string (lone surrogates become U+FFFD).
pub(crate) fn js_string<'js>(
    env: &Env<'js>,
    string: &rquickjs::String<'js>,
) -> rquickjs::Result<String> {
    match string.to_string() {
        Err(rquickjs::Error::Utf8(_)) => {
            let fixed: rquickjs::String<'js> = env
                .to_well_formed
                .call((rquickjs::function::This(string.clone()),))?;
            fixed.to_string()
        }
        other => other,
    }
}

fn key_string<'js>(env: &Env<'js>, atom: &Atom<'js>) -> rquickjs::Result<String> {
    js_string(env, &atom.to_js_string()?)
}

/// A finite, non-negative-zero double as a JSON number (integers as integers).
pub(crate) fn number(x: f64) -> Option<Number> {
    if !x.is_finite() || (x == 0.0 && x.is_sign_negative()) {
        return None;
    }
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER as f64 {
        return Some(Number::from(x as i64));
    }
    Number::from_f64(x)
}

/// One open container of the JS → JSON walk.
enum Open<'js> {
    Array {
        source: Object<'js>,
        len: u32,
        next: u32,
        out: Vec<Json>,
    },
    Object {
        source: Object<'js>,
        keys: Vec<(Atom<'js>, String)>,
        next: usize,
        out: Map<String, Json>,
    },
}

impl<'js> Open<'js> {
    fn source(&self) -> &Object<'js> {
        match self {
            Open::Array { source, .. } | Open::Object { source, .. } => source,
        }
    }
}

/// What one JS value becomes: a finished JSON value or a container to walk.
enum Step<'js> {
    Done(Json),
    Open(Open<'js>),
}

/// Converts a JS value to lossless JSON; `Ok(None)` for a root `undefined`.
pub(crate) fn to_json<'js>(
    ctx: &Ctx<'js>,
    env: &Env<'js>,
    root: Value<'js>,
    max_depth: usize,
) -> Result<Option<Json>, ToJsonError<'js>> {
    if root.is_undefined() {
        return Ok(None);
    }
    let mut stack: Vec<Open<'js>> = Vec::new();
    let mut step = classify(ctx, env, root, &stack).map_err(|e| placed(e, &stack))?;
    loop {
        let mut finished = match step {
            Step::Open(open) => {
                if stack.len() >= max_depth {
                    return Err(ToJsonError::TooDeep);
                }
                stack.push(open);
                None
            }
            Step::Done(json) => Some(json),
        };
        // Attach finished values to their parents, closing containers that are complete.
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(finished);
            };
            match top {
                Open::Array { out, .. } => out.extend(finished.take()),
                Open::Object {
                    out, keys, next, ..
                } => {
                    if let Some(json) = finished.take() {
                        out.insert(std::mem::take(&mut keys[*next - 1].1), json);
                    }
                }
            }
            let child = match top {
                Open::Array {
                    source, len, next, ..
                } if *next < *len => {
                    let index = *next;
                    *next += 1;
                    Some(source.get::<_, Value<'js>>(index))
                }
                Open::Object {
                    source, keys, next, ..
                } if *next < keys.len() => {
                    let atom = keys[*next].0.clone();
                    *next += 1;
                    Some(source.get::<_, Value<'js>>(atom))
                }
                _ => None,
            };
            match child {
                Some(value) => {
                    let value = value.map_err(|e| caught(ctx, e))?;
                    if value.is_undefined() {
                        return Err(placed(lossy("is undefined"), &stack));
                    }
                    step = classify(ctx, env, value, &stack).map_err(|e| placed(e, &stack))?;
                    break;
                }
                None => {
                    finished = Some(match stack.pop().expect("non-empty") {
                        Open::Array { out, .. } => Json::Array(out),
                        Open::Object { out, .. } => Json::Object(out),
                    });
                }
            }
        }
    }
}

fn classify<'js>(
    ctx: &Ctx<'js>,
    env: &Env<'js>,
    value: Value<'js>,
    stack: &[Open<'js>],
) -> Result<Step<'js>, ToJsonError<'js>> {
    let json = match value.type_of() {
        Type::Null => Json::Null,
        Type::Bool => Json::Bool(value.as_bool().unwrap_or_default()),
        Type::Int => Json::Number(Number::from(value.as_int().unwrap_or_default())),
        Type::Float => {
            let x = value.as_float().unwrap_or(f64::NAN);
            Json::Number(number(x).ok_or_else(|| lossy(not_a_number(x)))?)
        }
        Type::String => {
            let string = value.as_string().expect("a string");
            Json::String(js_string(env, string).map_err(|e| caught(ctx, e))?)
        }
        Type::Array | Type::Object | Type::Exception | Type::Proxy | Type::Promise => {
            let object = value.into_object().expect("an object");
            if stack.iter().any(|open| open.source() == &object) {
                return Err(lossy("refers to an object that contains it (a cycle)"));
            }
            return open(ctx, env, object).map(Step::Open);
        }
        Type::BigInt => return Err(lossy("is a BigInt (use a number)")),
        Type::Symbol => return Err(lossy("is a symbol")),
        Type::Function | Type::Constructor => return Err(lossy("is a function")),
        _ => return Err(lossy("is not a JSON value")),
    };
    Ok(Step::Done(json))
}

fn prototype<'js>(
    ctx: &Ctx<'js>,
    env: &Env<'js>,
    object: &Object<'js>,
) -> Result<Option<Object<'js>>, ToJsonError<'js>> {
    if !object.as_value().is_proxy() {
        return Ok(object.get_prototype());
    }
    // A proxy's trap may throw: go through the (exception-safe) intrinsic.
    let proto: Value<'js> = env
        .get_prototype_of
        .call((object.clone(),))
        .map_err(|e| caught(ctx, e))?;
    Ok(proto.into_object())
}

fn open<'js>(
    ctx: &Ctx<'js>,
    env: &Env<'js>,
    object: Object<'js>,
) -> Result<Open<'js>, ToJsonError<'js>> {
    let proto = prototype(ctx, env, &object)?;
    if object.as_value().is_array() {
        if proto.as_ref() != Some(&env.array_proto) {
            return Err(lossy("is not a plain array"));
        }
        let len: f64 = object.get("length").map_err(|e| caught(ctx, e))?;
        let len = len as u32;
        // Own keys come as ascending indices, then `length`, then other strings, then symbols:
        // a dense undecorated array has exactly `len` indices, then `length`, and nothing else.
        let mut keys = object.own_keys::<Atom<'js>>(Filter::new().string().symbol());
        const SPARSE: &str = "is an array with holes or extra properties";
        if keys.len() != len as usize + 1 {
            return Err(match keys.next() {
                Some(Err(error)) => caught(ctx, error),
                _ => lossy(SPARSE),
            });
        }
        let mut key = |nth: usize| match keys.nth(nth) {
            Some(Ok(atom)) => atom.to_string().map_err(|e| caught(ctx, e)),
            Some(Err(error)) => Err(caught(ctx, error)),
            None => Err(lossy(SPARSE)),
        };
        if len > 0 && key(len as usize - 1)? != (len - 1).to_string() {
            return Err(lossy(SPARSE));
        }
        if key(0)? != "length" {
            return Err(lossy(SPARSE));
        }
        return Ok(Open::Array {
            source: object,
            len,
            next: 0,
            out: Vec::with_capacity(len.min(4096) as usize),
        });
    }
    if object.as_value().is_function() {
        return Err(lossy("is a function"));
    }
    if proto.is_some_and(|proto| proto != env.object_proto) {
        return Err(lossy(
            "is not a plain object (a Date, Map, Set or class instance: convert it to JSON data first)",
        ));
    }
    let mut all = 0;
    for key in object.own_keys::<Atom<'js>>(Filter::new().string().symbol()) {
        key.map_err(|e| caught(ctx, e))?;
        all += 1;
    }
    let keys = object
        .own_keys::<Atom<'js>>(Filter::new().string().enum_only())
        .map(|atom| {
            let atom = atom?;
            let name = key_string(env, &atom)?;
            Ok((atom, name))
        })
        .collect::<rquickjs::Result<Vec<_>>>()
        .map_err(|e| caught(ctx, e))?;
    if keys.len() != all {
        return Err(lossy("has symbol or non-enumerable keys"));
    }
    Ok(Open::Object {
        source: object,
        keys,
        next: 0,
        out: Map::new(),
    })
}
