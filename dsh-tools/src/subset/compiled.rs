//! The compiled form of a schema: an arena of pre-parsed nodes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::{Number, Value};

use super::scalar::short_eq;
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
/// [`CompiledSchema::validate`] (the exact messages of REFERENCE §3).
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
    /// The item schema ([`ANY`] when `items` is absent).
    pub(crate) items: NodeId,
    pub(crate) min_items: Option<Bound>,
    pub(crate) max_items: Option<Bound>,
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

    /// Compiles any schema, best effort: what is not understood accepts any lossless value
    /// (non-record nodes, unknown `type`s), a non-array `oneOf` has no branches, malformed
    /// `properties`/`required` are ignored, only `additionalProperties: false` closes an object.
    /// Bounds are honoured whenever they are numbers. Never fails, iterative.
    pub(crate) fn compile_lenient(schema: &Value) -> Self {
        let mut nodes = vec![Node::Any];
        let mut work: Vec<(&Value, NodeId)> = vec![(schema, 0)];
        while let Some((value, id)) = work.pop() {
            let node = compile_node(value, &mut nodes, &mut work);
            if let Some(slot) = nodes.get_mut(id) {
                *slot = node;
            }
        }
        Self { nodes }
    }

    /// The node `id` (`Any` for an out-of-range id, which compilation never produces).
    #[inline(always)]
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        self.nodes.get(id).unwrap_or(&Node::Any)
    }
}

/// Reserves a node slot for `child` and queues it for compilation.
fn reserve<'a>(
    child: &'a Value,
    nodes: &mut Vec<Node>,
    work: &mut Vec<(&'a Value, NodeId)>,
) -> NodeId {
    let id = nodes.len();
    nodes.push(Node::Any);
    work.push((child, id));
    id
}

fn compile_node<'a>(
    value: &'a Value,
    nodes: &mut Vec<Node>,
    work: &mut Vec<(&'a Value, NodeId)>,
) -> Node {
    let Value::Object(schema) = value else {
        return Node::Any;
    };
    if let Some(one_of) = schema.get("oneOf") {
        let branches = one_of.as_array().map(Vec::as_slice).unwrap_or_default();
        return Node::OneOf(branches.iter().map(|b| reserve(b, nodes, work)).collect());
    }
    let number = |key: &str| schema.get(key).and_then(Value::as_number).map(Bound::new);
    let ty = match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let mut props: Vec<Prop> = match schema.get("properties") {
                Some(Value::Object(properties)) => properties
                    .iter()
                    .map(|(name, child)| Prop {
                        name: name.as_str().into(),
                        node: reserve(child, nodes, work),
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
                Some(values @ Value::Object(_)) => reserve(values, nodes, work),
                _ => ANY,
            };
            return Node::Object(ObjectNode::new(
                props,
                required,
                schema.get("additionalProperties") == Some(&Value::Bool(false)),
                extra,
            ));
        }
        Some("array") => {
            return Node::Array(ArrayNode {
                items: schema
                    .get("items")
                    .map_or(ANY, |items| reserve(items, nodes, work)),
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
    })
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
        }
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
