//! One pass over a schema node's keys, picking out every keyword the wide path reads.
//!
//! `serde_json` maps (with `preserve_order`) hash every lookup; a node has a handful of keys
//! while the wide path consults some forty keywords, so one scan is much cheaper than lookups.

use serde_json::{Map, Value};

/// The keywords of one schema node that the wide path reads.
#[derive(Default)]
pub(crate) struct Keywords<'a> {
    /// `$ref`, `$dynamicRef`, `$recursiveRef` (in this order).
    pub(crate) refs: [Option<&'a Value>; 3],
    pub(crate) ty: Option<&'a Value>,
    pub(crate) nullable: bool,
    pub(crate) konst: Option<&'a Value>,
    pub(crate) enumeration: Option<&'a Value>,
    pub(crate) all_of: Option<&'a Value>,
    pub(crate) one_of: Option<&'a Value>,
    pub(crate) any_of: Option<&'a Value>,
    pub(crate) properties: Option<&'a Value>,
    pub(crate) required: Option<&'a Value>,
    pub(crate) additional_properties: Option<&'a Value>,
    pub(crate) pattern_properties: Option<&'a Value>,
    pub(crate) prefix_items: Option<&'a Value>,
    pub(crate) items: Option<&'a Value>,
    pub(crate) additional_items: Option<&'a Value>,
    pub(crate) min_items: Option<&'a Value>,
    pub(crate) max_items: Option<&'a Value>,
    /// Some object keyword is present (`properties`, `required`, `additionalProperties`,
    /// `patternProperties`, `minProperties`, `maxProperties`).
    pub(crate) object_keyword: bool,
    /// Some array keyword is present (`items`, `prefixItems`, `additionalItems`, `minItems`,
    /// `maxItems`, `contains`, `uniqueItems`).
    pub(crate) array_keyword: bool,
}

impl<'a> Keywords<'a> {
    /// Scans `map` once.
    pub(crate) fn scan(map: &'a Map<String, Value>) -> Self {
        let mut k = Keywords::default();
        for (key, value) in map {
            match key.as_str() {
                "$ref" => k.refs[0] = Some(value),
                "$dynamicRef" => k.refs[1] = Some(value),
                "$recursiveRef" => k.refs[2] = Some(value),
                "type" => k.ty = Some(value),
                "nullable" => k.nullable = value == &Value::Bool(true),
                "const" => k.konst = Some(value),
                "enum" => k.enumeration = Some(value),
                "allOf" => k.all_of = Some(value),
                "oneOf" => k.one_of = Some(value),
                "anyOf" => k.any_of = Some(value),
                "properties" => {
                    k.properties = Some(value);
                    k.object_keyword = true;
                }
                "required" => {
                    k.required = Some(value);
                    k.object_keyword = true;
                }
                "additionalProperties" => {
                    k.additional_properties = Some(value);
                    k.object_keyword = true;
                }
                "patternProperties" => {
                    k.pattern_properties = Some(value);
                    k.object_keyword = true;
                }
                "minProperties" | "maxProperties" => k.object_keyword = true,
                "prefixItems" => {
                    k.prefix_items = Some(value);
                    k.array_keyword = true;
                }
                "items" => {
                    k.items = Some(value);
                    k.array_keyword = true;
                }
                "additionalItems" => {
                    k.additional_items = Some(value);
                    k.array_keyword = true;
                }
                "minItems" => {
                    k.min_items = Some(value);
                    k.array_keyword = true;
                }
                "maxItems" => {
                    k.max_items = Some(value);
                    k.array_keyword = true;
                }
                "contains" | "uniqueItems" => k.array_keyword = true,
                _ => {}
            }
        }
        k
    }
}
