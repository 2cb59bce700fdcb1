//! `json_schema_to_ts`: one JSON Schema as one TypeScript type.

use serde_json::Value;

use super::ir::{TyId, Types};
use super::{reference, text, wide};

/// The TypeScript type of the values a JSON Schema accepts, as text.
///
/// `indent` is the object nesting level the type is printed at (members at `indent + 1`,
/// 2 spaces a level); the first line never has leading padding.
///
/// **Inside the reference subset** (`dsh_tools::subset::assert_supported` passes) the text is
/// exactly that of `docs/CONTRACTS.md`, "TypeScript types": annotation-only → `JsonValue`; `oneOf`
/// → branches joined by ` | `; `const`/`enum` → `JSON.stringify` literals; `integer` → `number`; an
/// array item whose text contains `|` or `&` is parenthesised; objects without properties →
/// `Record<string, JsonValue>` (or `Record<string, never>` when `additionalProperties` is `false`);
/// objects with properties → one member per line with doc lines from descriptions, `?` for optional
/// members and ` & Record<string, JsonValue>` unless closed.
///
/// **Beyond it**, real-world schemas keep their types where the reference gives up on the whole
/// tool: `anyOf` (union), `allOf` (intersection), `$ref` into `$defs`/`definitions` or any
/// `#/…` pointer (inlined; a reference to a schema already being expanded on the current path
/// becomes `unknown` here — the SDK declares a named recursive alias instead, see
/// [`sdk_declarations`](super::sdk_declarations)), type arrays and `nullable` (unions with
/// `null`), schema-valued
/// `additionalProperties` and `patternProperties` (index signatures), tuples (`prefixItems`,
/// array-valued `items`), composite `const`/`enum` values; `$schema`, `$id`, `propertyNames`
/// and the like are ignored, and `format`, `pattern` and the bounds become JSDoc tags on the
/// member (`/** The URL. @format uri */`). A node that cannot be typed degrades to `unknown`
/// where it stands; the rest of the schema keeps its types.
///
/// Never panics; iterative, so 5,000-deep schemas are fine on a small stack.
///
/// ```
/// use dsh_tools_runtime::code::sdk::json_schema_to_ts;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "path": {"type": "string", "description": "The file."},
///         "tags": {"type": "array", "items": {"enum": ["a", "b"], "type": "string"}}
///     },
///     "required": ["path"],
///     "additionalProperties": false
/// });
/// assert_eq!(
///     json_schema_to_ts(&schema, 0),
///     "{\n  /** The file. */\n  path: string;\n  tags?: (\"a\" | \"b\")[];\n}"
/// );
///
/// // Beyond the reference subset: the bad node degrades alone.
/// let wide = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": {
///         "url": {"type": "string", "format": "uri"},
///         "limit": {"type": ["integer", "null"], "minimum": 1},
///         "mode": {"type": "strange"}
///     },
///     "required": ["url"]
/// });
/// assert_eq!(
///     json_schema_to_ts(&wide, 0),
///     "{\n  /** @format uri */\n  url: string;\n  /** @minimum 1 */\n  limit?: number | null;\n  \
///      mode?: unknown;\n} & Record<string, JsonValue>"
/// );
/// ```
pub fn json_schema_to_ts(schema: &Value, indent: usize) -> String {
    let mut types = Types::new();
    let root = lower(&mut types, schema);
    text::print(&types, root, indent)
}

/// Lowers a schema into `types`: the reference path inside the subset, the wide path outside.
pub(crate) fn lower<'s>(types: &mut Types<'s>, schema: &'s Value) -> TyId {
    if reference::in_subset(schema) {
        reference::lower(types, schema)
    } else {
        wide::lower(types, schema)
    }
}

/// The wide path alone (for cross-checks: on subset schemas it must agree with the reference).
pub fn json_schema_to_ts_wide(schema: &Value, indent: usize) -> String {
    let mut types = Types::new();
    let root = wide::lower(&mut types, schema);
    text::print(&types, root, indent)
}
