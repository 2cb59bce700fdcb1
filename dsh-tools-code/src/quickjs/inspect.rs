//! Rendering console arguments approximately like Node's `util.inspect`: single line, depth 4,
//! 100 array items, 10,000 characters per string; getters are shown as `[Getter]`, never run.

use dsh_tools::json::js_number;
use rquickjs::function::This;
use rquickjs::promise::PromiseState;
use rquickjs::{Object, Type, Value};

use super::convert::js_string;
use super::errors;
use super::globals::Env;

const MAX_DEPTH: usize = 4;
const MAX_ARRAY_ITEMS: usize = 100;
const MAX_STRING_CHARS: usize = 10_000;

/// One rendering in progress.
pub(crate) struct Inspect<'a, 'js> {
    pub(crate) env: &'a Env<'js>,
    pub(crate) out: String,
    /// Past this many bytes the entry cannot fit the ledger anyway: stop rendering.
    pub(crate) budget: usize,
    /// Objects on the current path (cycle detection).
    pub(crate) seen: Vec<Object<'js>>,
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

impl<'js> Inspect<'_, 'js> {
    pub(crate) fn full(&self) -> bool {
        self.out.len() > self.budget
    }

    fn quoted(&mut self, s: &str) {
        let quote = if s.contains('\'') && !s.contains('"') {
            '"'
        } else {
            '\''
        };
        self.out.push(quote);
        let mut chars = s.chars();
        for c in chars.by_ref().take(MAX_STRING_CHARS) {
            match c {
                '\n' => self.out.push_str("\\n"),
                '\t' => self.out.push_str("\\t"),
                '\r' => self.out.push_str("\\r"),
                '\\' => self.out.push_str("\\\\"),
                c if c == quote => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                c if (c as u32) < 0x20 => self.out.push_str(&format!("\\x{:02X}", c as u32)),
                c => self.out.push(c),
            }
        }
        self.out.push(quote);
        let more = chars.count();
        if more > 0 {
            self.out.push_str(&format!(
                "... {more} more character{}",
                if more == 1 { "" } else { "s" }
            ));
        }
    }

    fn number(&mut self, x: f64) {
        if x == 0.0 && x.is_sign_negative() {
            self.out.push_str("-0");
        } else if x.is_nan() {
            self.out.push_str("NaN");
        } else if x.is_infinite() {
            self.out
                .push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            self.out.push_str(&js_number(x));
        }
    }

    pub(crate) fn value(&mut self, v: &Value<'js>, depth: usize) -> rquickjs::Result<()> {
        if self.full() {
            return Ok(());
        }
        match v.type_of() {
            Type::Uninitialized | Type::Undefined => self.out.push_str("undefined"),
            Type::Null => self.out.push_str("null"),
            Type::Bool => self.out.push_str(if v.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            Type::Int => self
                .out
                .push_str(&v.as_int().unwrap_or_default().to_string()),
            Type::Float => self.number(v.as_float().unwrap_or(f64::NAN)),
            Type::String => {
                let s = js_string(self.env, v.as_string().expect("a string"))?;
                self.quoted(&s);
            }
            Type::Symbol | Type::BigInt => {
                let s: rquickjs::String<'js> = self.env.string.call((v.clone(),))?;
                self.out.push_str(&js_string(self.env, &s)?);
                if v.type_of() == Type::BigInt {
                    self.out.push('n');
                }
            }
            Type::Function | Type::Constructor => self.function(v)?,
            Type::Module | Type::Unknown => self.out.push_str("[unknown]"),
            _ => self.object(v.as_object().expect("an object").clone(), depth)?,
        }
        Ok(())
    }

    fn data_property(
        &self,
        object: &Object<'js>,
        key: &str,
    ) -> rquickjs::Result<Option<Value<'js>>> {
        let descriptor: Value<'js> = self
            .env
            .get_own_property_descriptor
            .call((object.clone(), key))?;
        Ok(match descriptor.as_object() {
            Some(d) if d.contains_key("value")? => Some(d.get("value")?),
            _ => None,
        })
    }

    fn function(&mut self, v: &Value<'js>) -> rquickjs::Result<()> {
        let object = v.as_object().expect("a function");
        let name = match self.data_property(object, "name")? {
            Some(n) => n
                .as_string()
                .map(|s| js_string(self.env, s))
                .transpose()?
                .unwrap_or_default(),
            None => String::new(),
        };
        let is_async = object.get_prototype().as_ref() == Some(&self.env.async_function_proto);
        let kind = if is_async {
            "AsyncFunction"
        } else {
            "Function"
        };
        if name.is_empty() {
            self.out.push_str(&format!("[{kind} (anonymous)]"));
        } else {
            self.out.push_str(&format!("[{kind}: {name}]"));
        }
        Ok(())
    }

    fn object(&mut self, object: Object<'js>, depth: usize) -> rquickjs::Result<()> {
        if self.seen.iter().any(|seen| seen == &object) {
            self.out.push_str("[Circular]");
            return Ok(());
        }
        let value = object.as_value().clone();
        if value.is_error() {
            let rendered = if depth == 0 {
                errors::render(self.env, &value)
            } else {
                None
            };
            match rendered {
                Some(text) => self.out.push_str(&text),
                None => {
                    let text = errors::render(self.env, &value).unwrap_or_default();
                    let first = text.lines().next().unwrap_or("Error");
                    self.out.push_str(&format!("[{first}]"));
                }
            }
            return Ok(());
        }
        let proto: Option<Object<'js>> = if value.is_proxy() {
            self.env
                .get_prototype_of
                .call::<_, Value<'js>>((object.clone(),))?
                .into_object()
        } else {
            object.get_prototype()
        };
        if proto.as_ref() == Some(&self.env.date_proto) {
            match self
                .env
                .date_to_iso
                .call::<_, rquickjs::String<'js>>((This(object.clone()),))
            {
                Ok(s) => self.out.push_str(&js_string(self.env, &s)?),
                Err(_) => {
                    let _ = object.ctx().catch();
                    self.out.push_str("Invalid Date");
                }
            }
            return Ok(());
        }
        if proto.as_ref() == Some(&self.env.regexp_proto) {
            let s: rquickjs::String<'js> =
                self.env.regexp_to_string.call((This(object.clone()),))?;
            self.out.push_str(&js_string(self.env, &s)?);
            return Ok(());
        }
        if let Some(promise) = value.as_promise() {
            self.out.push_str("Promise { ");
            match promise.state() {
                PromiseState::Pending => self.out.push_str("<pending>"),
                PromiseState::Resolved => {
                    let v: Value<'js> = promise.result().expect("settled")?;
                    self.value(&v, depth + 1)?;
                }
                PromiseState::Rejected => {
                    self.out.push_str("<rejected> ");
                    let _ = promise.result::<Value<'js>>();
                    let reason = object.ctx().catch();
                    self.value(&reason, depth + 1)?;
                }
            }
            self.out.push_str(" }");
            return Ok(());
        }
        let is_array = value.is_array();
        if depth >= MAX_DEPTH {
            self.out
                .push_str(if is_array { "[Array]" } else { "[Object]" });
            return Ok(());
        }
        self.seen.push(object.clone());
        let result = if is_array {
            self.array(&object, depth)
        } else if proto.as_ref() == Some(&self.env.map_proto)
            || proto.as_ref() == Some(&self.env.set_proto)
        {
            self.collection(&object, proto.as_ref() == Some(&self.env.map_proto), depth)
        } else {
            self.plain(&object, proto, depth)
        };
        self.seen.pop();
        result
    }

    fn array(&mut self, object: &Object<'js>, depth: usize) -> rquickjs::Result<()> {
        let len = object.get::<_, f64>("length")? as usize;
        if len == 0 {
            self.out.push_str("[]");
            return Ok(());
        }
        self.out.push_str("[ ");
        for index in 0..len.min(MAX_ARRAY_ITEMS) {
            if index > 0 {
                self.out.push_str(", ");
            }
            let item: Value<'js> = object.get(index as u32)?;
            self.value(&item, depth + 1)?;
            if self.full() {
                return Ok(());
            }
        }
        if len > MAX_ARRAY_ITEMS {
            let more = len - MAX_ARRAY_ITEMS;
            self.out.push_str(&format!(
                ", ... {more} more item{}",
                if more == 1 { "" } else { "s" }
            ));
        }
        self.out.push_str(" ]");
        Ok(())
    }

    fn collection(
        &mut self,
        object: &Object<'js>,
        is_map: bool,
        depth: usize,
    ) -> rquickjs::Result<()> {
        let iterator: Value<'js> = if is_map {
            self.env.map_entries.call((This(object.clone()),))?
        } else {
            self.env.set_values.call((This(object.clone()),))?
        };
        let items: Object<'js> = self.env.array_from.call((iterator,))?;
        let len = items.get::<_, f64>("length")? as usize;
        self.out
            .push_str(&format!("{}({len}) {{", if is_map { "Map" } else { "Set" }));
        for index in 0..len.min(MAX_ARRAY_ITEMS) {
            self.out.push_str(if index == 0 { " " } else { ", " });
            let item: Value<'js> = items.get(index as u32)?;
            if is_map {
                let pair = item.as_object().expect("an entry");
                self.value(&pair.get(0u32)?, depth + 1)?;
                self.out.push_str(" => ");
                self.value(&pair.get(1u32)?, depth + 1)?;
            } else {
                self.value(&item, depth + 1)?;
            }
            if self.full() {
                return Ok(());
            }
        }
        if len > MAX_ARRAY_ITEMS {
            self.out
                .push_str(&format!(", ... {} more", len - MAX_ARRAY_ITEMS));
        }
        self.out.push_str(if len == 0 { "}" } else { " }" });
        Ok(())
    }

    fn plain(
        &mut self,
        object: &Object<'js>,
        proto: Option<Object<'js>>,
        depth: usize,
    ) -> rquickjs::Result<()> {
        match &proto {
            None => self.out.push_str("[Object: null prototype] "),
            Some(proto) if proto != &self.env.object_proto => {
                let constructor = self.data_property(proto, "constructor")?;
                let name = match constructor.as_ref().and_then(Value::as_object) {
                    Some(c) => self.data_property(c, "name")?,
                    None => None,
                };
                if let Some(name) = name.as_ref().and_then(Value::as_string) {
                    let name = js_string(self.env, name)?;
                    if !name.is_empty() {
                        self.out.push_str(&name);
                        self.out.push(' ');
                    }
                }
            }
            Some(_) => {}
        }
        let keys: rquickjs::Array<'js> = self.env.own_keys.call((object.clone(),))?;
        let mut shown = 0;
        for index in 0..keys.len() {
            let key: Value<'js> = keys.get(index)?;
            let descriptor: Value<'js> = self
                .env
                .get_own_property_descriptor
                .call((object.clone(), key.clone()))?;
            let Some(descriptor) = descriptor.into_object() else {
                continue;
            };
            if !descriptor.get::<_, bool>("enumerable")? {
                continue;
            }
            self.out.push_str(if shown == 0 { "{ " } else { ", " });
            shown += 1;
            if key.is_symbol() {
                self.out.push('[');
                self.value(&key, depth + 1)?;
                self.out.push(']');
            } else {
                let name = js_string(self.env, key.as_string().expect("a string key"))?;
                if is_identifier(&name) {
                    self.out.push_str(&name)
                } else {
                    self.quoted(&name)
                }
            }
            self.out.push_str(": ");
            if descriptor.contains_key("value")? {
                self.value(&descriptor.get("value")?, depth + 1)?;
            } else {
                let get = !descriptor.get::<_, Value<'js>>("get")?.is_undefined();
                let set = !descriptor.get::<_, Value<'js>>("set")?.is_undefined();
                self.out.push_str(match (get, set) {
                    (true, true) => "[Getter/Setter]",
                    (true, false) => "[Getter]",
                    _ => "[Setter]",
                });
            }
            if self.full() {
                return Ok(());
            }
        }
        if shown == 0 {
            self.out.push_str("{}");
            return Ok(());
        }
        self.out.push_str(" }");
        Ok(())
    }
}
