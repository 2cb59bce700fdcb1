//! The compiled form of a schema: an arena of pre-parsed nodes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::{Map, Number, Value};

use super::format::Format;
use super::pattern::Pattern;
use super::refs::resolve_ref;
use super::scalar::short_eq;
use super::walk::TYPELESS;
use super::{Vocabulary, assert_supported_in};
use crate::error::JsonSchemaError;
use crate::json::js_stringify;

/// Index of a node in [`CompiledSchema::nodes`]; the root is node 0.
pub(crate) type NodeId = usize;

/// A node id that resolves to [`Node::Any`] (children of annotation-only containers, undeclared
/// properties of open objects).
pub(crate) const ANY: NodeId = NodeId::MAX;

/// Property tables with more entries than this are hashed; smaller ones are scanned.
const LINEAR_LOOKUP_MAX: usize = 8;

/// A schema compiled for fast validation.
///
/// Built by [`CompiledSchema::compile`] (which asserts the subset first); validated with
/// [`CompiledSchema::is_valid`] (fast, allocation-free for flat values) or
/// [`CompiledSchema::validate`] (the exact messages of `docs/CONTRACTS.md`, "Validating a
/// value").
///
/// ```
/// use dsh_tools::subset::{CompiledSchema, Vocabulary};
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
/// let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).unwrap();
/// assert!(compiled.is_valid(&json!({"n": 1.0})));
/// assert_eq!(compiled.validate(&json!({"n": 0}), ""), vec!["\"n\" must be at least 1"]);
/// ```
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    pub(crate) nodes: Vec<Node>,
    /// The tool whose parameters these are (named by unknown-key violations of the root).
    pub(crate) tool: Option<Box<str>>,
}

/// One compiled schema node.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Annotation-only (or not understood): any lossless JSON value.
    Any,
    /// Exactly one of the branches must match.
    OneOf(Box<[NodeId]>),
    /// `type: "object"`.
    Object(ObjectNode),
    /// `type: "array"`.
    Array(ArrayNode),
    /// A scalar type.
    Scalar(ScalarNode),
}

/// `type: "object"`.
#[derive(Debug, Clone)]
pub(crate) struct ObjectNode {
    /// Declared properties, in declaration order.
    pub(crate) props: Vec<Prop>,
    /// Hashed lookup for large property tables.
    index: Option<HashMap<Box<str>, usize, BuildHasherDefault<Fnv>>>,
    /// `required`, in declared order (duplicates kept).
    pub(crate) required: Vec<Required>,
    /// How many distinct declared properties are required.
    pub(crate) required_props: usize,
    /// Whether some required name is not a declared property (only in unsupported schemas).
    pub(crate) required_undeclared: bool,
    /// `additionalProperties: false`.
    pub(crate) closed: bool,
    /// The schema of undeclared properties (a map's values, [`Vocabulary::Parameters`] only;
    /// [`ANY`] otherwise).
    pub(crate) extra: NodeId,
    /// `minProperties`.
    pub(crate) min_props: Option<Bound>,
    /// `maxProperties`.
    pub(crate) max_props: Option<Bound>,
}

/// A declared property.
#[derive(Debug, Clone)]
pub(crate) struct Prop {
    pub(crate) name: Box<str>,
    pub(crate) node: NodeId,
    pub(crate) required: bool,
}

/// A required name.
#[derive(Debug, Clone)]
pub(crate) struct Required {
    pub(crate) name: Box<str>,
    pub(crate) declared: bool,
}

/// `type: "array"`.
#[derive(Debug, Clone)]
pub(crate) struct ArrayNode {
    /// The item schema ([`ANY`] when `items` is absent) of the items after the tuple prefix.
    pub(crate) items: NodeId,
    /// `prefixItems`: the schemas of the first items.
    pub(crate) prefix: Box<[NodeId]>,
    /// `items: false`: no item after the prefix.
    pub(crate) closed: bool,
    /// `uniqueItems: true`.
    pub(crate) unique: bool,
    pub(crate) min_items: Option<Bound>,
    pub(crate) max_items: Option<Bound>,
}

impl ArrayNode {
    /// The schema of the item at `index`.
    #[inline(always)]
    pub(crate) fn item(&self, index: usize) -> NodeId {
        self.prefix.get(index).copied().unwrap_or(self.items)
    }
}

/// The scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarType {
    String,
    Number,
    Integer,
    Boolean,
    Null,
}

/// A scalar type with its literal and bound constraints.
#[derive(Debug, Clone)]
pub(crate) struct ScalarNode {
    pub(crate) ty: ScalarType,
    pub(crate) enumeration: Option<Literals>,
    pub(crate) constant: Option<Literals>,
    /// `minimum` (numbers) or `minLength` (strings).
    pub(crate) min: Option<Bound>,
    /// `maximum` (numbers) or `maxLength` (strings).
    pub(crate) max: Option<Bound>,
    /// The rarer assertions, kept out of line so the common node stays small.
    pub(crate) extra: Option<Box<ScalarExtra>>,
}

/// `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` (numbers), `pattern` and `format`
/// (strings).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScalarExtra {
    pub(crate) exclusive_min: Option<Bound>,
    pub(crate) exclusive_max: Option<Bound>,
    pub(crate) multiple_of: Option<Bound>,
    pub(crate) pattern: Option<Pattern>,
    pub(crate) format: Option<Format>,
}

/// A bound keyword's value: the declared number (printed in messages) and the double every value
/// is compared with (the crate's number contract: `json::cmp_numbers`).
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    /// The declared number (printed in messages).
    pub(crate) number: Number,
    /// The same value as the double JavaScript would hold.
    pub(crate) double: f64,
}

impl Bound {
    fn new(number: &Number) -> Self {
        Self {
            number: number.clone(),
            double: crate::json::number_to_f64(number),
        }
    }
}

/// The scalar entries of `enum` (or the single `const`) and its `JSON.stringify` text.
#[derive(Debug, Clone)]
pub(crate) struct Literals {
    /// Only scalar entries: a container never equals a scalar value.
    pub(crate) values: Vec<Value>,
    pub(crate) json: Box<str>,
}

impl CompiledSchema {
    /// Asserts that `schema` lies in the subset of `vocab` (see
    /// [`assert_supported_in`](super::assert_supported_in)) and compiles it.
    ///
    /// ```
    /// use dsh_tools::subset::{CompiledSchema, Vocabulary};
    /// let err = CompiledSchema::compile(&serde_json::json!({"type": "date"}), Vocabulary::Reference).unwrap_err();
    /// assert_eq!(err.violations, vec!["schema.type must be one of object/array/string/number/integer/boolean/null"]);
    /// ```
    pub fn compile(schema: &Value, vocab: Vocabulary) -> Result<Self, JsonSchemaError> {
        assert_supported_in(schema, vocab)?;
        Ok(Self::compile_lenient(schema))
    }

    /// The same schema as the parameters of tool `name`: an undeclared key of the arguments
    /// object is then `"<key>" is not a parameter of <name>; …`.
    ///
    /// ```
    /// use dsh_tools::subset::{CompiledSchema, Vocabulary};
    /// use serde_json::json;
    /// let schema = json!({"type": "object", "additionalProperties": false, "properties": {"path": {"type": "string"}}});
    /// let compiled = CompiledSchema::compile(&schema, Vocabulary::Parameters).unwrap().for_tool("read_file");
    /// assert_eq!(
    ///     compiled.validate(&json!({"pth": "a"}), ""),
    ///     vec!["\"pth\" is not a parameter of read_file; did you mean \"path\"?"]
    /// );
    /// ```
    #[must_use]
    pub fn for_tool(mut self, name: &str) -> Self {
        self.tool = Some(name.into());
        self
    }

    /// Compiles any schema, best effort: what is not understood accepts any lossless value
    /// (non-record nodes, unknown `type`s, unresolvable `$ref`s, invalid patterns and unknown
    /// formats), a non-array `oneOf` has no branches, malformed `properties`/`required` are
    /// ignored, only `additionalProperties: false` closes an object. Bounds are honoured
    /// whenever they are numbers. A `$ref` compiles to its target's node (compiled once), so
    /// recursive schemas become cyclic node graphs; a cycle through `oneOf` branches alone is
    /// cut (the `oneOf` accepts any value), so validation always ends. Never fails, iterative.
    pub(crate) fn compile_lenient(schema: &Value) -> Self {
        let mut compiler = Compiler {
            root: schema,
            nodes: vec![Node::Any],
            work: Vec::new(),
            targets: HashMap::from([(std::ptr::from_ref(schema), 0)]),
        };
        // A root that is itself a reference compiles as its target.
        let mut start = Some(schema);
        let mut hops = 0;
        while let Some(reference) = start.and_then(|s| s.get("$ref")).and_then(Value::as_str) {
            hops += 1;
            start = resolve_ref(schema, reference)
                .map(|(target, _)| target)
                .filter(|_| hops <= 64);
        }
        if let Some(start) = start {
            compiler.targets.insert(std::ptr::from_ref(start), 0);
            compiler.work.push((start, 0));
        }
        while let Some((value, id)) = compiler.work.pop() {
            let node = compiler.compile_node(value);
            if let Some(slot) = compiler.nodes.get_mut(id) {
                *slot = node;
            }
        }
        let mut compiled = Self {
            nodes: compiler.nodes,
            tool: None,
        };
        compiled.cut_unguarded_cycles();
        compiled
    }

    /// The node `id` (`Any` for an out-of-range id, which compilation never produces).
    #[inline(always)]
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id).unwrap_or(&Node::Any)
    }

    /// Replaces every `oneOf` node that reaches itself through `oneOf` branches alone by
    /// [`Node::Any`] (only unsupported schemas have such cycles).
    fn cut_unguarded_cycles(&mut self) {
        let count = self.nodes.len();
        let branches = |nodes: &[Node], id: NodeId| -> Vec<NodeId> {
            match nodes.get(id) {
                Some(Node::OneOf(branches)) => branches.to_vec(),
                _ => Vec::new(),
            }
        };
        let mut color = vec![0u8; count];
        let mut cut = Vec::new();
        for start in 0..count {
            if color[start] != 0 || !matches!(self.nodes[start], Node::OneOf(_)) {
                continue;
            }
            let mut path: Vec<(NodeId, usize)> = vec![(start, 0)];
            color[start] = 1;
            while let Some(top) = path.last_mut() {
                let (node, next) = *top;
                match branches(&self.nodes, node).get(next) {
                    Some(&child) if child < count => {
                        top.1 += 1;
                        match color[child] {
                            0 => {
                                color[child] = 1;
                                path.push((child, 0));
                            }
                            1 => cut.push(child),
                            _ => {}
                        }
                    }
                    Some(_) => top.1 += 1,
                    None => {
                        color[node] = 2;
                        path.pop();
                    }
                }
            }
        }
        for id in cut {
            if let Some(slot) = self.nodes.get_mut(id) {
                *slot = Node::Any;
            }
        }
    }
}

/// The state of one compilation.
struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    work: Vec<(&'a Value, NodeId)>,
    /// The node of each schema compiled so far as a `$ref` target (and the root).
    targets: HashMap<*const Value, NodeId>,
}

impl<'a> Compiler<'a> {
    /// Reserves a node slot for `child` and queues it for compilation; a `$ref` child is its
    /// target's node.
    fn reserve(&mut self, child: &'a Value) -> NodeId {
        let mut child = child;
        let mut hops = 0;
        while let Some(reference) = child.get("$ref").and_then(Value::as_str) {
            hops += 1;
            match resolve_ref(self.root, reference) {
                Some((target, _)) if hops <= 64 => child = target,
                // Unresolvable, or a chain of references that never reaches a schema.
                _ => return ANY,
            }
            if let Some(&id) = self.targets.get(&std::ptr::from_ref(child)) {
                return id;
            }
        }
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.work.push((child, id));
        if hops > 0 {
            self.targets.insert(std::ptr::from_ref(child), id);
        }
        id
    }

    fn compile_node(&mut self, value: &'a Value) -> Node {
        let Value::Object(schema) = value else {
            return Node::Any;
        };
        if let Some(one_of) = schema.get("oneOf") {
            let branches = one_of.as_array().map(Vec::as_slice).unwrap_or_default();
            return Node::OneOf(branches.iter().map(|b| self.reserve(b)).collect());
        }
        let declared = schema.get("type").and_then(Value::as_str);
        if !schema.contains_key("type") && TYPELESS.iter().any(|k| schema.contains_key(*k)) {
            // Assertions without `type` apply to the values of their own type: one branch per
            // JSON type (disjoint, so exactly one can match).
            let mut branches = Vec::with_capacity(6);
            for ty in ["string", "number", "array", "object", "boolean", "null"] {
                let id = self.nodes.len();
                self.nodes.push(Node::Any);
                let node = self.compile_typed(schema, Some(ty));
                if let Some(slot) = self.nodes.get_mut(id) {
                    *slot = node;
                }
                branches.push(id);
            }
            return Node::OneOf(branches.into());
        }
        self.compile_typed(schema, declared)
    }

    /// A node of type `ty` (the schema's own `type`, or one branch of a type-less node).
    fn compile_typed(&mut self, schema: &'a Map<String, Value>, ty: Option<&str>) -> Node {
        let number = |key: &str| schema.get(key).and_then(Value::as_number).map(Bound::new);
        let ty = match ty {
            Some("object") => {
                let mut props: Vec<Prop> = match schema.get("properties") {
                    Some(Value::Object(properties)) => properties
                        .iter()
                        .map(|(name, child)| Prop {
                            name: name.as_str().into(),
                            node: self.reserve(child),
                            required: false,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let names = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice);
                let mut required = Vec::new();
                for name in names.unwrap_or_default().iter().filter_map(Value::as_str) {
                    let declared = props.iter_mut().find(|p| &*p.name == name);
                    let is_declared = declared.is_some();
                    if let Some(prop) = declared {
                        prop.required = true;
                    }
                    required.push(Required {
                        name: name.into(),
                        declared: is_declared,
                    });
                }
                let extra = match schema.get("additionalProperties") {
                    Some(values @ Value::Object(_)) => self.reserve(values),
                    _ => ANY,
                };
                let mut object = ObjectNode::new(
                    props,
                    required,
                    schema.get("additionalProperties") == Some(&Value::Bool(false)),
                    extra,
                );
                object.min_props = number("minProperties");
                object.max_props = number("maxProperties");
                return Node::Object(object);
            }
            Some("array") => {
                let prefix: Box<[NodeId]> = match schema.get("prefixItems") {
                    Some(Value::Array(schemas)) => {
                        schemas.iter().map(|s| self.reserve(s)).collect()
                    }
                    _ => Box::default(),
                };
                let items = schema.get("items");
                return Node::Array(ArrayNode {
                    items: match items {
                        Some(items @ Value::Object(_)) => self.reserve(items),
                        _ => ANY,
                    },
                    closed: !prefix.is_empty() && items == Some(&Value::Bool(false)),
                    prefix,
                    unique: schema.get("uniqueItems") == Some(&Value::Bool(true)),
                    min_items: number("minItems"),
                    max_items: number("maxItems"),
                });
            }
            Some("string") => ScalarType::String,
            Some("number") => ScalarType::Number,
            Some("integer") => ScalarType::Integer,
            Some("boolean") => ScalarType::Boolean,
            Some("null") => ScalarType::Null,
            _ => return Node::Any,
        };
        let (min, max) = match ty {
            ScalarType::String => (number("minLength"), number("maxLength")),
            ScalarType::Number | ScalarType::Integer => (number("minimum"), number("maximum")),
            ScalarType::Boolean | ScalarType::Null => (None, None),
        };
        let mut extra = ScalarExtra::default();
        match ty {
            ScalarType::String => {
                extra.pattern = schema
                    .get("pattern")
                    .and_then(Value::as_str)
                    .and_then(|p| Pattern::compile(p).ok());
                extra.format = schema
                    .get("format")
                    .and_then(Value::as_str)
                    .and_then(Format::from_name);
            }
            ScalarType::Number | ScalarType::Integer => {
                extra.exclusive_min = number("exclusiveMinimum");
                extra.exclusive_max = number("exclusiveMaximum");
                extra.multiple_of =
                    number("multipleOf").filter(|m| m.double > 0.0 && m.double.is_finite());
            }
            ScalarType::Boolean | ScalarType::Null => {}
        }
        let has_extra = extra.pattern.is_some()
            || extra.format.is_some()
            || extra.exclusive_min.is_some()
            || extra.exclusive_max.is_some()
            || extra.multiple_of.is_some();
        Node::Scalar(ScalarNode {
            ty,
            enumeration: schema.get("enum").and_then(|declared| {
                declared.as_array().map(|entries| Literals {
                    values: entries.iter().filter(|e| is_scalar(e)).cloned().collect(),
                    json: js_stringify(declared).into(),
                })
            }),
            constant: schema.get("const").map(|declared| Literals {
                values: if is_scalar(declared) {
                    vec![declared.clone()]
                } else {
                    Vec::new()
                },
                json: js_stringify(declared).into(),
            }),
            min,
            max,
            extra: has_extra.then(|| Box::new(extra)),
        })
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

impl ObjectNode {
    fn new(props: Vec<Prop>, required: Vec<Required>, closed: bool, extra: NodeId) -> Self {
        let index = (props.len() > LINEAR_LOOKUP_MAX).then(|| {
            let mut index = HashMap::with_capacity_and_hasher(
                props.len(),
                BuildHasherDefault::<Fnv>::default(),
            );
            for (position, prop) in props.iter().enumerate() {
                index.insert(prop.name.clone(), position);
            }
            index
        });
        Self {
            required_props: props.iter().filter(|p| p.required).count(),
            required_undeclared: required.iter().any(|r| !r.declared),
            props,
            index,
            required,
            closed,
            extra,
            min_props: None,
            max_props: None,
        }
    }

    /// Whether an object of `count` entries satisfies `minProperties` and `maxProperties`.
    #[inline(always)]
    pub(crate) fn count_ok(&self, count: usize) -> bool {
        self.min_props
            .as_ref()
            .is_none_or(|min| min.cmp_count(count) != std::cmp::Ordering::Less)
            && self
                .max_props
                .as_ref()
                .is_none_or(|max| max.cmp_count(count) != std::cmp::Ordering::Greater)
    }

    /// The declared property named `key`, trying the property after the previous hit first
    /// (`hint`): arguments usually list keys in declaration order, so most lookups cost a single
    /// comparison.
    #[inline(always)]
    pub(crate) fn lookup_hinted(&self, key: &str, hint: &mut usize) -> Option<&Prop> {
        if let Some(prop) = self.props.get(*hint)
            && short_eq(&prop.name, key)
        {
            *hint += 1;
            return Some(prop);
        }
        let position = match &self.index {
            None => self.props.iter().position(|p| short_eq(&p.name, key))?,
            Some(index) => *index.get(key)?,
        };
        *hint = position + 1;
        self.props.get(position)
    }

    /// The declared property named `key`.
    #[inline]
    pub(crate) fn lookup(&self, key: &str) -> Option<&Prop> {
        match &self.index {
            None => self.props.iter().find(|p| &*p.name == key),
            Some(index) => index
                .get(key)
                .and_then(|&position| self.props.get(position)),
        }
    }
}

/// FNV-1a: a fast hash for short property names (the tables are built from trusted schemas).
#[derive(Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}
