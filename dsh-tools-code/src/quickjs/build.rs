//! JSON → JS for binding resolutions, iteratively: object keys become own data properties
//! (`__proto__` included); integers beyond ±(2^53 − 1) and `-0` are refused.

use rquickjs::object::Property;
use rquickjs::{Array, Ctx, Object, Value};
use serde_json::Value as Json;

use super::convert::{MAX_SAFE_INTEGER, number};

/// Why a JSON value cannot cross into the program.
pub(crate) enum ToJsError {
    /// An integer beyond ±(2^53 − 1), or `-0`.
    Lossy,
    /// Nested deeper than the configured depth.
    TooDeep,
    /// The engine failed (allocation, interrupt).
    Fatal(rquickjs::Error),
}

fn scalar<'js>(ctx: &Ctx<'js>, json: &Json) -> Result<Option<Value<'js>>, ToJsError> {
    Ok(Some(match json {
        Json::Null => Value::new_null(ctx.clone()),
        Json::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Json::Number(n) => {
            let x = if let Some(i) = n.as_i64() {
                if i.abs() > MAX_SAFE_INTEGER {
                    return Err(ToJsError::Lossy);
                }
                i as f64
            } else if n.is_u64() {
                return Err(ToJsError::Lossy);
            } else {
                n.as_f64()
                    .filter(|x| number(*x).is_some())
                    .ok_or(ToJsError::Lossy)?
            };
            Value::new_number(ctx.clone(), x)
        }
        Json::String(s) => rquickjs::String::from_str(ctx.clone(), s)
            .map_err(ToJsError::Fatal)?
            .into_value(),
        Json::Array(_) | Json::Object(_) => return Ok(None),
    }))
}

/// One open container of the JSON → JS build.
enum Build<'a, 'js> {
    Array(Array<'js>, std::iter::Enumerate<std::slice::Iter<'a, Json>>),
    Object(Object<'js>, serde_json::map::Iter<'a>),
}

fn container<'a, 'js>(
    ctx: &Ctx<'js>,
    json: &'a Json,
) -> rquickjs::Result<(Value<'js>, Build<'a, 'js>)> {
    Ok(match json {
        Json::Array(items) => {
            let array = Array::new(ctx.clone())?;
            (
                array.clone().into_value(),
                Build::Array(array, items.iter().enumerate()),
            )
        }
        Json::Object(map) => {
            let object = Object::new(ctx.clone())?;
            (
                object.clone().into_value(),
                Build::Object(object, map.iter()),
            )
        }
        _ => unreachable!("scalars are built by `scalar`"),
    })
}

/// Builds the JS value of a JSON value (object keys as own data properties, `__proto__`
/// included).
pub(crate) fn to_js<'js>(
    ctx: &Ctx<'js>,
    json: &Json,
    max_depth: usize,
) -> Result<Value<'js>, ToJsError> {
    if let Some(value) = scalar(ctx, json)? {
        return Ok(value);
    }
    let (root, build) = container(ctx, json).map_err(ToJsError::Fatal)?;
    let mut stack = vec![build];
    while let Some(top) = stack.last_mut() {
        let (slot, child) = match top {
            Build::Array(array, items) => match items.next() {
                Some((index, child)) => (
                    (array.clone().into_object(), Slot::Index(index as u32)),
                    child,
                ),
                None => {
                    stack.pop();
                    continue;
                }
            },
            Build::Object(object, entries) => match entries.next() {
                Some((key, child)) => ((object.clone(), Slot::Key(key)), child),
                None => {
                    stack.pop();
                    continue;
                }
            },
        };
        let value = match scalar(ctx, child)? {
            Some(value) => value,
            None => {
                if stack.len() >= max_depth {
                    return Err(ToJsError::TooDeep);
                }
                let (value, build) = container(ctx, child).map_err(ToJsError::Fatal)?;
                stack.push(build);
                value
            }
        };
        let (target, slot) = slot;
        let done = match slot {
            Slot::Index(index) => target.set(index, value),
            Slot::Key(key) => target.prop(
                key,
                Property::from(value).writable().enumerable().configurable(),
            ),
        };
        done.map_err(ToJsError::Fatal)?;
    }
    Ok(root)
}

enum Slot<'a> {
    Index(u32),
    Key(&'a str),
}
