//! Object and array shapes of the wide path: planning (which children to lower) and building
//! (assembling the children's types).

use serde_json::{Map, Value};

use super::doc::member_doc;
use super::ir::{Elem, ElemKind, Member, Ty, TyId, Types};
use super::keywords::Keywords;

/// A child of a node, lowered before the node is built.
pub(crate) enum Child<'a> {
    /// A sub-schema.
    Schema(&'a Value),
    /// A `$ref` target and its reference text (expanded unless already on the path).
    Ref(&'a Value, &'a str),
    /// A `const`/`enum` value.
    Value(&'a Value),
}

/// Whether an `enum` entry can satisfy the declared `type` (a name or an array of names; all
/// entries when none is declared).
pub(crate) fn value_has_type(value: &Value, declared: Option<&Value>) -> bool {
    let matches = |name: &Value| match (name.as_str(), value) {
        (Some("string"), Value::String(_))
        | (Some("number"), Value::Number(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("null"), Value::Null)
        | (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_)) => true,
        (Some("integer"), Value::Number(n)) => dsh_tools::json::is_integer(n),
        _ => false,
    };
    match declared {
        None => true,
        Some(Value::Array(names)) => names.iter().any(matches),
        Some(name) => matches(name),
    }
}

/// One declared property.
pub(crate) struct PropPlan<'a> {
    key: &'a str,
    optional: bool,
    doc: Option<String>,
}

/// `additionalProperties`.
pub(crate) enum Extra {
    /// Absent, `true` or not a schema: `& Record<string, JsonValue>`.
    Open,
    /// `false`: no index signature.
    Closed,
    /// A schema: one child.
    Schema,
}

/// How to build an object type.
pub(crate) struct ObjectPlan<'a> {
    props: Vec<PropPlan<'a>>,
    /// Required names that `properties` does not declare.
    extra_required: Vec<&'a str>,
    extra: Extra,
    /// How many `patternProperties` schemas follow as children.
    patterns: usize,
}

/// Plans an object: children are the property schemas (declared order), then the
/// `additionalProperties` schema, then the `patternProperties` schemas.
pub(crate) fn object_plan<'a>(
    k: &Keywords<'a>,
    root: &'a Value,
    children: &mut Vec<Child<'a>>,
) -> ObjectPlan<'a> {
    let required: &[Value] = match k.required {
        Some(Value::Array(names)) => names,
        _ => &[],
    };
    let mut props = Vec::new();
    let declared = match k.properties {
        Some(Value::Object(properties)) => Some(properties),
        _ => None,
    };
    for (key, schema) in declared.into_iter().flatten() {
        props.push(PropPlan {
            key,
            optional: !required.iter().any(|name| name.as_str() == Some(key)),
            doc: member_doc(schema, root),
        });
        children.push(Child::Schema(schema));
    }
    let mut extra_required: Vec<&str> = Vec::new();
    // Small maps are scanned: cheaper than hashing the name.
    let declares = |d: &Map<String, Value>, name: &str| match d.len() {
        0..=8 => d.keys().any(|key| key == name),
        _ => d.contains_key(name),
    };
    for name in required.iter().filter_map(Value::as_str) {
        if !declared.is_some_and(|d| declares(d, name)) && !extra_required.contains(&name) {
            extra_required.push(name);
        }
    }
    let extra = match k.additional_properties {
        Some(Value::Bool(false)) => Extra::Closed,
        Some(schema @ Value::Object(_)) => {
            children.push(Child::Schema(schema));
            Extra::Schema
        }
        _ => Extra::Open,
    };
    let mut patterns = 0;
    if let Some(Value::Object(pattern_properties)) = k.pattern_properties {
        for schema in pattern_properties.values() {
            children.push(Child::Schema(schema));
            patterns += 1;
        }
    }
    ObjectPlan {
        props,
        extra_required,
        extra,
        patterns,
    }
}

/// Builds an object type.
///
/// The index signature: open objects get `& Record<string, JsonValue>` (the reference form);
/// a schema-valued `additionalProperties` and/or `patternProperties` give
/// `Record<string, A | P… | D…>` where the `D`s are the declared property types — TypeScript
/// applies an intersected index signature to the declared properties too, so leaving them out
/// would reject valid objects. Required names that `properties` does not declare become
/// required members of the index type (`never` when the object is closed).
pub(crate) fn build_object<'s>(
    types: &mut Types<'s>,
    plan: ObjectPlan<'s>,
    children: &mut impl Iterator<Item = TyId>,
) -> TyId {
    let props: Vec<TyId> = children.by_ref().take(plan.props.len()).collect();
    let extra = match plan.extra {
        Extra::Schema => Some(children.next().unwrap_or(TyId::UNKNOWN)),
        _ => None,
    };
    let patterns: Vec<TyId> = children.by_ref().take(plan.patterns).collect();
    let index = match plan.extra {
        Extra::Open => Some(TyId::JSON),
        Extra::Closed if patterns.is_empty() => None,
        _ => {
            let mut members: Vec<TyId> = Vec::new();
            for id in extra
                .into_iter()
                .chain(patterns)
                .chain(props.iter().copied())
            {
                if !members.contains(&id) {
                    members.push(id);
                }
            }
            Some(if members.contains(&TyId::JSON) {
                TyId::JSON
            } else if members.contains(&TyId::UNKNOWN) {
                TyId::UNKNOWN
            } else {
                types.union_exact(members)
            })
        }
    };
    let mut members: Vec<Member<'s>> = plan
        .props
        .into_iter()
        .zip(props)
        .map(|(prop, ty)| Member {
            key: prop.key,
            optional: prop.optional,
            doc: prop.doc,
            ty,
        })
        .collect();
    members.extend(plan.extra_required.into_iter().map(|key| Member {
        key,
        optional: false,
        doc: None,
        ty: index.unwrap_or(TyId::NEVER),
    }));
    if members.is_empty() {
        return match index {
            Some(TyId::JSON) => TyId::RECORD_JSON,
            None => TyId::RECORD_NEVER,
            Some(value) => types.add(Ty::Record(value)),
        };
    }
    let object = types.add(Ty::Object(members));
    let record = match index {
        None => return object,
        Some(TyId::JSON) => TyId::RECORD_JSON,
        Some(value) => types.add(Ty::Record(value)),
    };
    types.add(Ty::Inter(vec![object, record]))
}

/// `parts` joined by ` & `, flattened and deduplicated, without the parts that constrain
/// nothing. Nothing left → `JsonValue`, or `unknown` when only `unknown` parts were seen.
pub(crate) fn intersect(types: &mut Types<'_>, parts: Vec<TyId>) -> TyId {
    if parts.len() == 1 {
        return parts[0];
    }
    let mut members: Vec<TyId> = Vec::with_capacity(parts.len() + 1);
    let mut saw_json = false;
    for part in parts {
        let flat = match types.get(part) {
            Ty::Inter(inner) => inner.clone(),
            _ => vec![part],
        };
        for member in flat {
            if member == TyId::JSON {
                saw_json = true;
            } else if member != TyId::UNKNOWN && !members.contains(&member) {
                members.push(member);
            }
        }
    }
    match members.len() {
        0 if saw_json => TyId::JSON,
        0 => TyId::UNKNOWN,
        1 => members[0],
        _ => types.add(Ty::Inter(members)),
    }
}

/// `nullable: true`: `T | null` (unless `T` already admits `null`).
pub(crate) fn with_null(types: &mut Types<'_>, id: TyId) -> TyId {
    if matches!(id, TyId::JSON | TyId::UNKNOWN | TyId::NULL) {
        return id;
    }
    let mut members = match types.get(id) {
        Ty::Union(members) => members.clone(),
        _ => vec![id],
    };
    if members.contains(&TyId::NULL) {
        return id;
    }
    members.push(TyId::NULL);
    types.union_exact(members)
}

/// The rest of a tuple.
pub(crate) enum Rest {
    /// No more elements.
    None,
    /// `...JsonValue[]`.
    Json,
    /// `...T[]` for one child `T`.
    Schema,
    /// `...unknown[]`.
    Unknown,
}

/// How to build an array type.
pub(crate) enum ArrayPlan {
    /// `JsonValue[]`.
    Any,
    /// `[]` (`items: false`).
    Empty,
    /// `unknown[]` (`items` is not a schema).
    Unknown,
    /// `T[]` for one child.
    Items,
    /// A tuple: `prefix` children, the first `min` required, then the rest.
    Tuple {
        prefix: usize,
        min: usize,
        rest: Rest,
    },
}

/// Plans an array: `prefixItems` (+ `items` as the rest), the old tuple form `items: […]`
/// (+ `additionalItems`), or `items` as one schema.
pub(crate) fn array_plan<'a>(k: &Keywords<'a>, children: &mut Vec<Child<'a>>) -> ArrayPlan {
    let tuple = match (k.prefix_items, k.items) {
        (Some(Value::Array(prefix)), rest) => Some((prefix, rest)),
        (_, Some(Value::Array(prefix))) => Some((prefix, k.additional_items)),
        _ => None,
    };
    if let Some((prefix, rest)) = tuple {
        children.extend(prefix.iter().map(Child::Schema));
        let max = k.max_items.and_then(Value::as_u64);
        let rest = match rest {
            _ if max.is_some_and(|max| max <= prefix.len() as u64) => Rest::None,
            None | Some(Value::Bool(true)) => Rest::Json,
            Some(Value::Bool(false)) => Rest::None,
            Some(schema @ Value::Object(_)) => {
                children.push(Child::Schema(schema));
                Rest::Schema
            }
            Some(_) => Rest::Unknown,
        };
        let min = k.min_items.and_then(Value::as_u64).unwrap_or(0);
        return ArrayPlan::Tuple {
            prefix: prefix.len(),
            min: usize::try_from(min).unwrap_or(usize::MAX),
            rest,
        };
    }
    match k.items {
        None | Some(Value::Bool(true)) => ArrayPlan::Any,
        Some(Value::Bool(false)) => ArrayPlan::Empty,
        Some(items @ Value::Object(_)) => {
            children.push(Child::Schema(items));
            ArrayPlan::Items
        }
        Some(_) => ArrayPlan::Unknown,
    }
}

/// Builds an array type.
pub(crate) fn build_array(
    types: &mut Types<'_>,
    plan: ArrayPlan,
    children: &mut impl Iterator<Item = TyId>,
) -> TyId {
    match plan {
        ArrayPlan::Any => TyId::JSON_ARRAY,
        ArrayPlan::Empty => types.add(Ty::Tuple(Vec::new())),
        ArrayPlan::Unknown => types.add(Ty::Array(TyId::UNKNOWN)),
        ArrayPlan::Items => {
            let item = children.next().unwrap_or(TyId::UNKNOWN);
            types.add(Ty::Array(item))
        }
        ArrayPlan::Tuple { prefix, min, rest } => {
            let mut elems: Vec<Elem> = children
                .by_ref()
                .take(prefix)
                .enumerate()
                .map(|(i, ty)| Elem {
                    ty,
                    kind: if i < min {
                        ElemKind::Required
                    } else {
                        ElemKind::Optional
                    },
                })
                .collect();
            let rest = match rest {
                Rest::None => None,
                Rest::Json => Some(TyId::JSON_ARRAY),
                Rest::Schema => {
                    let item = children.next().unwrap_or(TyId::UNKNOWN);
                    Some(types.add(Ty::Array(item)))
                }
                Rest::Unknown => Some(types.add(Ty::Array(TyId::UNKNOWN))),
            };
            if let Some(ty) = rest {
                elems.push(Elem {
                    ty,
                    kind: ElemKind::Rest,
                });
            }
            types.add(Ty::Tuple(elems))
        }
    }
}

/// The literal type of an array value: a tuple of its elements' types.
pub(crate) fn tuple_of(types: &mut Types<'_>, elems: Vec<TyId>) -> TyId {
    let elems = elems
        .into_iter()
        .map(|ty| Elem {
            ty,
            kind: ElemKind::Required,
        })
        .collect();
    types.add(Ty::Tuple(elems))
}

/// The literal type of an object value: its entries as required members (`{}` →
/// `Record<string, never>`).
pub(crate) fn object_of<'s>(
    types: &mut Types<'s>,
    map: &'s Map<String, Value>,
    children: Vec<TyId>,
) -> TyId {
    if map.is_empty() {
        return TyId::RECORD_NEVER;
    }
    let members = map
        .keys()
        .zip(children)
        .map(|(key, ty)| Member {
            key: key.as_str(),
            optional: false,
            doc: None,
            ty,
        })
        .collect();
    types.add(Ty::Object(members))
}
