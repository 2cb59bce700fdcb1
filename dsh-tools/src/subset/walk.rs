//! The one walk over a schema that decides whether it lies inside a vocabulary
//! (`docs/CONTRACTS.md`, "Schema vocabulary" and "Checking a schema").
//!
//! The walk reports to a [`Sink`]: [`Messages`] builds every violation with its path (for
//! [`assert_supported_in`](super::assert_supported_in)), [`Verdict`] stops at the first one and
//! never builds a path or a message (for [`is_supported`](super::is_supported)), so both verdicts
//! come from the same rules. Depth-first pre-order, tail checks after the node's children;
//! iterative, with an inline stack that only spills to the heap past [`INLINE`] pending nodes.

use serde_json::{Map, Value};

use super::cycles::{self, Problem};
use super::format::FORMAT_NAMES;
use super::pattern::{Pattern, is_supported_pattern};
use super::refs::resolve_schema_ref;
use super::{ANNOTATIONS, FORMATS, PARAMETER_KEYWORDS, SCHEMA_TYPES, Vocabulary, allowed_types};
use crate::json::{is_integer, is_lossless, is_lossless_number, scalar_equal};

/// One step of a child path.
#[derive(Clone, Copy)]
pub(super) enum Seg<'a> {
    /// `.<keyword>.<key>` (`properties`, `$defs`).
    Key(&'static str, &'a str),
    /// `.<keyword>[<index>]` (`oneOf`, `prefixItems`).
    Index(&'static str, usize),
    /// `.<keyword>` (`items`, `additionalProperties`).
    Word(&'static str),
}

/// Where the walk reports.
pub(super) trait Sink {
    /// A node's path (`()` when paths are never shown).
    type Path: Clone;
    /// Whether only the verdict counts (no message is ever read).
    const IS_VERDICT: bool = false;
    /// The root's path.
    fn root(&self) -> Self::Path;
    /// A child's path.
    fn child(&self, path: &Self::Path, seg: Seg<'_>) -> Self::Path;
    /// Records a violation at `path`; `false` stops the walk.
    fn report(&mut self, path: &Self::Path, message: impl FnOnce(&str) -> String) -> bool;
}

/// Every violation, with its message.
#[derive(Default)]
pub(super) struct Messages(pub(super) Vec<String>);

impl Sink for Messages {
    type Path = String;

    fn root(&self) -> String {
        String::from("schema")
    }

    fn child(&self, path: &String, seg: Seg<'_>) -> String {
        match seg {
            Seg::Key(keyword, key) => format!("{path}.{keyword}.{key}"),
            Seg::Index(keyword, index) => format!("{path}.{keyword}[{index}]"),
            Seg::Word(keyword) => format!("{path}.{keyword}"),
        }
    }

    fn report(&mut self, path: &String, message: impl FnOnce(&str) -> String) -> bool {
        self.0.push(message(path));
        true
    }
}

/// Whether any violation exists; stops at the first.
#[derive(Default)]
pub(super) struct Verdict {
    pub(super) failed: bool,
}

impl Sink for Verdict {
    type Path = ();
    const IS_VERDICT: bool = true;

    fn root(&self) {}

    fn child(&self, _: &(), _: Seg<'_>) {}

    fn report(&mut self, _: &(), _: impl FnOnce(&str) -> String) -> bool {
        self.failed = true;
        false
    }
}

/// The assertions a node of [`Vocabulary::Parameters`] may state without `type`: each applies
/// to the values of its own type, as in JSON Schema.
pub(super) const TYPELESS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "prefixItems",
    "minProperties",
    "maxProperties",
];

/// Pending nodes kept inline before the stack spills to the heap.
const INLINE: usize = 24;

/// A stack that holds its first [`INLINE`] entries without allocating.
struct Stack<T> {
    inline: [Option<T>; INLINE],
    len: usize,
    spill: Vec<T>,
}

impl<T> Stack<T> {
    fn new() -> Self {
        Self {
            inline: std::array::from_fn(|_| None),
            len: 0,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, item: T) {
        if self.len < INLINE
            && let Some(slot) = self.inline.get_mut(self.len)
        {
            *slot = Some(item);
            self.len += 1;
        } else {
            self.spill.push(item);
        }
    }

    fn pop(&mut self) -> Option<T> {
        if let Some(item) = self.spill.pop() {
            return Some(item);
        }
        self.len = self.len.checked_sub(1)?;
        self.inline.get_mut(self.len)?.take()
    }
}

/// One pending step of the walk.
enum Task<'a, P> {
    /// Check a schema node.
    Enter(&'a Value, P),
    /// After a `oneOf` node's branches: the keywords not allowed beside `oneOf`.
    OneOfTail(&'a Map<String, Value>, P),
    /// After an object node's properties: `required` and `additionalProperties`.
    ObjectTail(&'a Map<String, Value>, P),
}

/// The keywords of one node, found in one pass over its keys.
#[derive(Default)]
struct Keys<'a> {
    ty: Option<&'a Value>,
    one_of: Option<&'a Value>,
    reference: Option<&'a Value>,
    defs: Option<&'a Value>,
    /// The node's typed keywords, indexed like the vocabulary's list.
    typed: [Option<&'a Value>; PARAMETER_KEYWORDS.len()],
}

impl<'a> Keys<'a> {
    fn get(&self, vocab: Vocabulary, key: &str) -> Option<&'a Value> {
        let index = vocab.typed_keywords().iter().position(|k| *k == key)?;
        self.typed.get(index).copied().flatten()
    }
}

/// Walks `root` against `vocab`, reporting to `sink`.
pub(super) fn walk<S: Sink>(root: &Value, vocab: Vocabulary, sink: &mut S) {
    let mut walker = Walker {
        root,
        vocab,
        refs: Vec::new(),
        tasks: Stack::new(),
    };
    walker.tasks.push(Task::Enter(root, sink.root()));
    let mut clean = true;
    while let Some(task) = walker.tasks.pop() {
        let go_on = match task {
            Task::Enter(node, path) => walker.enter(node, path, sink, &mut clean),
            Task::OneOfTail(node, path) => walker.one_of_tail(node, &path, sink, &mut clean),
            Task::ObjectTail(node, path) => walker.object_tail(node, &path, sink, &mut clean),
        };
        if !go_on {
            return;
        }
    }
    if clean && !walker.refs.is_empty() {
        let nodes: Vec<&Value> = walker.refs.iter().map(|(node, _)| *node).collect();
        for (index, problem) in cycles::problems(root, &nodes) {
            let Some((_, path)) = walker.refs.get(index) else {
                continue;
            };
            let go_on = sink.report(path, |p| match problem {
                Problem::Unguarded => format!(
                    "{p}.$ref leads back to itself without passing through a property or an item (a cycle validation could never leave)"
                ),
                Problem::NoBaseCase => format!(
                    "{p}.$ref refers to a schema no finite value satisfies (its recursion has no base case)"
                ),
            });
            if !go_on {
                return;
            }
        }
    }
}

struct Walker<'a, P> {
    root: &'a Value,
    vocab: Vocabulary,
    /// The `$ref` nodes met, with their paths (for the cycle checks).
    refs: Vec<(&'a Value, P)>,
    tasks: Stack<Task<'a, P>>,
}

/// Reports and returns from the enclosing function when the sink says stop.
macro_rules! report {
    ($sink:expr, $clean:expr, $path:expr, $message:expr) => {
        *$clean = false;
        if !$sink.report($path, $message) {
            return false;
        }
    };
}

impl<'a, P: Clone> Walker<'a, P> {
    fn enter<S: Sink<Path = P>>(
        &mut self,
        value: &'a Value,
        path: P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        let Value::Object(node) = value else {
            report!(sink, clean, &path, |p| format!(
                "{p} must be a schema object"
            ));
            return true;
        };
        let mut k = Keys::default();
        // `description` and `title`, met in the pass (a map lookup hashes its key).
        let mut texts: [Option<&Value>; 2] = [None, None];
        for (key, entry) in node {
            match key.as_str() {
                "type" => k.ty = Some(entry),
                "oneOf" => k.one_of = Some(entry),
                "$ref" if vocab.structural() => k.reference = Some(entry),
                "$defs" if vocab.structural() => k.defs = Some(entry),
                key if vocab.is_constraint(key) => {
                    let index = vocab.typed_keywords().iter().position(|k| *k == key);
                    if let Some(slot) = index.and_then(|i| k.typed.get_mut(i)) {
                        *slot = Some(entry);
                    }
                }
                key if ANNOTATIONS.contains(&key) => {
                    match key {
                        "description" => texts[0] = Some(entry),
                        "title" => texts[1] = Some(entry),
                        _ => {}
                    }
                    if !is_lossless(entry) {
                        report!(sink, clean, &path, |p| format!(
                            "{p}.{key} annotation must be lossless JSON data"
                        ));
                    }
                }
                key => {
                    report!(sink, clean, &path, |p| format!(
                        "{p}.{key} is not a supported keyword (subset: {} + annotations)",
                        vocab.subset_list()
                    ));
                }
            }
        }
        for (key, text) in ["description", "title"].into_iter().zip(texts) {
            if text.is_some_and(|v| !v.is_string()) {
                report!(sink, clean, &path, |p| format!(
                    "{p}.{key} must be a string"
                ));
            }
        }
        if let Some(defs) = k.defs {
            match defs {
                Value::Object(defs) => {
                    for (name, def) in defs.iter().rev() {
                        let child = sink.child(&path, Seg::Key("$defs", name));
                        self.tasks.push(Task::Enter(def, child));
                    }
                }
                _ => {
                    report!(sink, clean, &path, |p| format!(
                        "{p}.$defs must be an object of schemas"
                    ));
                }
            }
        }
        if let Some(reference) = k.reference {
            return self.reference(value, &k, reference, path, sink, clean);
        }
        match (k.ty, k.one_of) {
            (Some(_), Some(_)) => {
                report!(sink, clean, &path, |p| format!(
                    "{p} cannot declare both type and oneOf"
                ));
                return true;
            }
            (None, None) => {
                let typeless = vocab == Vocabulary::Parameters;
                for key in vocab.typed_keywords() {
                    let allowed = typeless
                        && (TYPELESS.contains(key)
                            || (*key == "items"
                                && k.get(vocab, "items") == Some(&Value::Bool(false))
                                && k.get(vocab, "prefixItems").is_some()));
                    if k.get(vocab, key).is_some() && !allowed {
                        report!(sink, clean, &path, |p| format!(
                            "{p}.{key} requires type or oneOf"
                        ));
                    }
                }
                if typeless {
                    // Each assertion applies to the values of its own type (JSON Schema).
                    return self.number_keywords(&k, &path, sink, clean)
                        && self.string_keywords(&k, &path, sink, clean)
                        && self.count_keywords(&k, &path, sink, clean)
                        && self.array(&k, path, sink, clean);
                }
                return true;
            }
            (None, Some(one_of)) => {
                match one_of {
                    Value::Array(branches) if branches.len() >= 2 => {
                        self.tasks.push(Task::OneOfTail(node, path.clone()));
                        for (index, branch) in branches.iter().enumerate().rev() {
                            let child = sink.child(&path, Seg::Index("oneOf", index));
                            self.tasks.push(Task::Enter(branch, child));
                        }
                    }
                    _ => {
                        report!(sink, clean, &path, |p| format!(
                            "{p}.oneOf must be an array of at least two schemas"
                        ));
                        self.tasks.push(Task::OneOfTail(node, path));
                    }
                }
                return true;
            }
            (Some(_), None) => {}
        }
        let ty = match k.ty {
            Some(Value::String(ty)) if SCHEMA_TYPES.contains(&ty.as_str()) => ty.as_str(),
            Some(Value::Array(_)) => {
                report!(sink, clean, &path, |p| format!(
                    "{p}.type must be a single type string (type arrays are not supported)"
                ));
                return true;
            }
            _ => {
                report!(sink, clean, &path, |p| format!(
                    "{p}.type must be one of {}",
                    SCHEMA_TYPES.join("/")
                ));
                return true;
            }
        };
        for key in vocab.typed_keywords() {
            if k.get(vocab, key).is_some() && !allowed_types(key).contains(&ty) {
                report!(sink, clean, &path, |p| format!(
                    "{p}.{key} is not supported on type \"{ty}\""
                ));
            }
        }
        match ty {
            "object" => self.object(node, &k, path, sink, clean),
            "array" => self.array(&k, path, sink, clean),
            scalar => self.scalar(&k, &path, scalar, sink, clean),
        }
    }

    /// A `$ref` node: a local reference to a schema, with nothing but annotations and `$defs`
    /// beside it.
    fn reference<S: Sink<Path = P>>(
        &mut self,
        node: &'a Value,
        k: &Keys<'a>,
        reference: &Value,
        path: P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        let resolves = reference
            .as_str()
            .is_some_and(|r| resolve_schema_ref(self.root, r).is_some());
        if !resolves {
            report!(sink, clean, &path, |p| format!(
                "{p}.$ref must be a local reference to a schema of this document (like \"#/$defs/Name\")"
            ));
        }
        for (key, present) in [("type", k.ty.is_some()), ("oneOf", k.one_of.is_some())] {
            if present {
                report!(sink, clean, &path, |p| format!(
                    "{p}.{key} is not supported beside $ref"
                ));
            }
        }
        for key in vocab.typed_keywords() {
            if k.get(vocab, key).is_some() {
                report!(sink, clean, &path, |p| format!(
                    "{p}.{key} is not supported beside $ref"
                ));
            }
        }
        self.refs.push((node, path));
        true
    }

    fn object<S: Sink<Path = P>>(
        &mut self,
        node: &'a Map<String, Value>,
        k: &Keys<'a>,
        path: P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        if vocab == Vocabulary::Parameters && !self.count_keywords(k, &path, sink, clean) {
            return false;
        }
        self.tasks.push(Task::ObjectTail(node, path.clone()));
        if vocab == Vocabulary::Parameters
            && let Some(values @ Value::Object(_)) = k.get(vocab, "additionalProperties")
        {
            let child = sink.child(&path, Seg::Word("additionalProperties"));
            self.tasks.push(Task::Enter(values, child));
        }
        match k.get(vocab, "properties") {
            None => {}
            Some(Value::Object(properties)) => {
                for (key, child) in properties.iter().rev() {
                    let child_path = sink.child(&path, Seg::Key("properties", key));
                    self.tasks.push(Task::Enter(child, child_path));
                }
            }
            Some(_) => {
                report!(sink, clean, &path, |p| format!(
                    "{p}.properties must be an object of schemas"
                ));
            }
        }
        true
    }

    fn array<S: Sink<Path = P>>(
        &mut self,
        k: &Keys<'a>,
        path: P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        let prefix = k.get(vocab, "prefixItems");
        match k.get(vocab, "items") {
            None => {}
            Some(items @ Value::Object(_)) => {
                let child = sink.child(&path, Seg::Word("items"));
                self.tasks.push(Task::Enter(items, child));
            }
            Some(Value::Bool(false)) if prefix.is_some() => {}
            Some(_) if vocab.structural() => {
                report!(sink, clean, &path, |p| format!(
                    "{p}.items must be a schema object (or false after prefixItems)"
                ));
            }
            Some(items) => {
                // Not a schema record: reported where it would be visited (`docs/CONTRACTS.md`,
                // "Checking a schema", rule 8).
                let child = sink.child(&path, Seg::Word("items"));
                self.tasks.push(Task::Enter(items, child));
            }
        }
        match prefix {
            None => {}
            Some(Value::Array(schemas)) if !schemas.is_empty() => {
                for (index, schema) in schemas.iter().enumerate().rev() {
                    let child = sink.child(&path, Seg::Index("prefixItems", index));
                    self.tasks.push(Task::Enter(schema, child));
                }
            }
            Some(_) => {
                report!(sink, clean, &path, |p| format!(
                    "{p}.prefixItems must be a non-empty array of schemas"
                ));
            }
        }
        if vocab == Vocabulary::Parameters {
            for key in ["minItems", "maxItems"] {
                if k.get(vocab, key).is_some_and(|v| !is_count(v)) {
                    report!(sink, clean, &path, |p| format!(
                        "{p}.{key} must be a non-negative integer"
                    ));
                }
            }
            if k.get(vocab, "uniqueItems").is_some_and(|v| !v.is_boolean()) {
                report!(sink, clean, &path, |p| format!(
                    "{p}.uniqueItems must be a boolean"
                ));
            }
        }
        true
    }

    fn scalar<S: Sink<Path = P>>(
        &mut self,
        k: &Keys<'a>,
        path: &P,
        ty: &str,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        let enumeration = k.get(vocab, "enum");
        let enum_entries = match enumeration {
            Some(Value::Array(entries))
                if !entries.is_empty() && entries.iter().all(|e| scalar_matches(ty, e)) =>
            {
                Some(entries)
            }
            _ => None,
        };
        if enumeration.is_some() && enum_entries.is_none() {
            report!(sink, clean, path, |p| format!(
                "{p}.enum must be a non-empty array of {ty} values"
            ));
        }
        if let Some(declared) = k.get(vocab, "const") {
            if !scalar_matches(ty, declared) {
                report!(sink, clean, path, |p| format!(
                    "{p}.const must be a {ty} value"
                ));
            } else if let Some(entries) = enum_entries
                && !entries.iter().any(|e| scalar_equal(e, declared))
            {
                report!(sink, clean, path, |p| format!(
                    "{p}.const must be one of {p}.enum when both are declared"
                ));
            }
        }
        if vocab != Vocabulary::Parameters {
            return true;
        }
        if ty == "number" || ty == "integer" {
            return self.number_keywords(k, path, sink, clean);
        }
        if ty == "string" {
            return self.string_keywords(k, path, sink, clean);
        }
        true
    }

    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
    fn number_keywords<S: Sink<Path = P>>(
        &mut self,
        k: &Keys<'a>,
        path: &P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            if k.get(vocab, key)
                .is_some_and(|v| !v.as_number().is_some_and(is_lossless_number))
            {
                report!(sink, clean, path, |p| format!(
                    "{p}.{key} must be a finite number"
                ));
            }
        }
        let positive = |v: &Value| {
            v.as_number()
                .is_some_and(|n| is_lossless_number(n) && crate::json::number_to_f64(n) > 0.0)
        };
        if k.get(vocab, "multipleOf").is_some_and(|v| !positive(v)) {
            report!(sink, clean, path, |p| format!(
                "{p}.multipleOf must be a number greater than 0"
            ));
        }
        true
    }

    /// `minProperties`, `maxProperties`.
    fn count_keywords<S: Sink<Path = P>>(
        &mut self,
        k: &Keys<'a>,
        path: &P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        for key in ["minProperties", "maxProperties"] {
            if k.get(vocab, key).is_some_and(|v| !is_count(v)) {
                report!(sink, clean, path, |p| format!(
                    "{p}.{key} must be a non-negative integer"
                ));
            }
        }
        true
    }

    /// `minLength`, `maxLength`, `pattern`, `format`.
    fn string_keywords<S: Sink<Path = P>>(
        &mut self,
        k: &Keys<'a>,
        path: &P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        let vocab = self.vocab;
        for key in ["minLength", "maxLength"] {
            if k.get(vocab, key).is_some_and(|v| !is_count(v)) {
                report!(sink, clean, path, |p| format!(
                    "{p}.{key} must be a non-negative integer"
                ));
            }
        }
        match k.get(vocab, "pattern") {
            None => {}
            Some(Value::String(source)) => {
                if S::IS_VERDICT {
                    if !is_supported_pattern(source) {
                        report!(sink, clean, path, |_| String::new());
                    }
                } else if let Err(reason) = Pattern::compile(source) {
                    report!(sink, clean, path, |p| format!("{p}.pattern {reason}"));
                }
            }
            Some(_) => {
                report!(sink, clean, path, |p| format!(
                    "{p}.pattern must be a string"
                ));
            }
        }
        if let Some(format) = k.get(vocab, "format")
            && !format.as_str().is_some_and(|f| FORMATS.contains(&f))
        {
            report!(sink, clean, path, |p| format!(
                "{p}.format must be one of {FORMAT_NAMES} (got {format})"
            ));
        }
        true
    }

    fn one_of_tail<S: Sink<Path = P>>(
        &mut self,
        node: &Map<String, Value>,
        path: &P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        for key in self.vocab.typed_keywords() {
            if has_key(node, key) {
                report!(sink, clean, path, |p| format!(
                    "{p}.{key} is not supported beside oneOf"
                ));
            }
        }
        true
    }

    fn object_tail<S: Sink<Path = P>>(
        &mut self,
        node: &Map<String, Value>,
        path: &P,
        sink: &mut S,
        clean: &mut bool,
    ) -> bool {
        // One pass over the node's keys (a map lookup hashes its key).
        let (mut required, mut properties, mut additional) = (None, None, None);
        for (key, value) in node {
            match key.as_str() {
                "required" => required = Some(value),
                "properties" => properties = Some(value),
                "additionalProperties" => additional = Some(value),
                _ => {}
            }
        }
        if let Some(required) = required {
            match required.as_array() {
                Some(names) if names.iter().all(Value::is_string) => {
                    let declared = properties.and_then(Value::as_object);
                    for name in names.iter().filter_map(Value::as_str) {
                        if !declared.is_some_and(|p| has_key(p, name)) {
                            report!(sink, clean, path, |p| format!(
                                "{p}.required names \"{name}\" which is not in properties"
                            ));
                        }
                    }
                }
                _ => {
                    report!(sink, clean, path, |p| format!(
                        "{p}.required must be an array of strings"
                    ));
                }
            }
        }
        match (additional, self.vocab) {
            (None | Some(Value::Bool(_)), _) | (Some(Value::Object(_)), Vocabulary::Parameters) => {
            }
            (Some(_), Vocabulary::Parameters) => {
                report!(sink, clean, path, |p| format!(
                    "{p}.additionalProperties must be a boolean or a schema object"
                ));
            }
            (Some(_), _) => {
                report!(sink, clean, path, |p| format!(
                    "{p}.additionalProperties must be a boolean"
                ));
            }
        }
        true
    }
}

/// Whether `map` has `key` (small maps are scanned: cheaper than hashing the key).
fn has_key(map: &Map<String, Value>, key: &str) -> bool {
    if map.len() <= 8 {
        map.keys().any(|k| k == key)
    } else {
        map.contains_key(key)
    }
}

/// `minLength`/`maxLength`/`minItems`/`maxItems`/`minProperties`/`maxProperties` must be
/// non-negative integers (`2.0` counts).
fn is_count(v: &Value) -> bool {
    v.as_number().is_some_and(|n| {
        is_lossless_number(n) && is_integer(n) && n.as_f64().is_some_and(|f| f >= 0.0)
    })
}

/// Whether `value` is a valid literal of the scalar type `ty` (`docs/CONTRACTS.md`, "Checking a
/// schema", rule 9).
fn scalar_matches(ty: &str, value: &Value) -> bool {
    match (ty, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("number", Value::Number(n)) => is_lossless_number(n),
        ("integer", Value::Number(n)) => is_lossless_number(n) && is_integer(n),
        _ => false,
    }
}
