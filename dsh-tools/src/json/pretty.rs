//! The pretty JSON renderer of `run_code` results (`docs/CONTRACTS.md`, "Sub-calls", rule 8).

use serde_json::Value;

use super::stringify::{KeyOrder, write_json};

/// Containers at this depth (root = 0) or deeper render compact: their children would be
/// indented past ten characters.
const COMPACT_DEPTH: usize = 5;

/// Renders a value as pretty JSON: 2-space indentation, `"key": value`, `,\n` separators, empty
/// `[]` / `{}` compact, and every container at depth 5 or deeper (root = depth 0) rendered compact
/// together with all of its descendants (`[1,{"k":"v"}]`, `"k":v`). Numbers print as JavaScript
/// prints them; keys and strings use `JSON.stringify` escaping. A root string is rendered as a
/// JSON string (see [`render_value_text`] for the raw form). Iterative.
///
/// ```
/// use dsh_tools::json::render_pretty;
/// use serde_json::json;
/// assert_eq!(render_pretty(&json!({"a": [1, 2], "b": {}})), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}");
/// assert_eq!(render_pretty(&json!("x")), "\"x\"");
/// assert_eq!(
///     render_pretty(&json!([[[[[[1, {"k": "v"}]]]]]])),
///     "[\n  [\n    [\n      [\n        [\n          [1,{\"k\":\"v\"}]\n        ]\n      ]\n    ]\n  ]\n]"
/// );
/// ```
pub fn render_pretty(v: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, v, COMPACT_DEPTH, KeyOrder::JavaScript);
    out
}

/// Renders a `run_code` result value as model-facing text: a root string raw, anything else via
/// [`render_pretty`].
///
/// ```
/// use dsh_tools::json::render_value_text;
/// use serde_json::json;
/// assert_eq!(render_value_text(&json!("line\nnext")), "line\nnext");
/// assert_eq!(render_value_text(&json!(null)), "null");
/// assert_eq!(render_value_text(&json!([1e21])), "[\n  1e+21\n]");
/// ```
pub fn render_value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => render_pretty(other),
    }
}

/// How a value without a renderer of its own reaches the model as text
/// ([`ToolDefinition::render_with`](crate::ToolDefinition::render_with)): a root string is its
/// raw text either way; anything else is compact JSON (`JSON.stringify(v)`) or pretty JSON
/// ([`render_pretty`], the reference's form). Compact is the registry's default: it costs about
/// 1.5× fewer tokens on real tool results (BENCHMARKS.md, "Tool results: pretty or compact
/// JSON").
///
/// ```
/// use dsh_tools::json::ResultJson;
/// use serde_json::json;
/// let v = json!({"files": ["a.rs", "b.rs"], "n": 2});
/// assert_eq!(ResultJson::Compact.render(&v), r#"{"files":["a.rs","b.rs"],"n":2}"#);
/// assert_eq!(ResultJson::Pretty.render(&v), "{\n  \"files\": [\n    \"a.rs\",\n    \"b.rs\"\n  ],\n  \"n\": 2\n}");
/// assert_eq!(ResultJson::Compact.render(&json!("raw\ntext")), "raw\ntext");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ResultJson {
    /// `JSON.stringify(v)`: no whitespace (the default).
    #[default]
    Compact,
    /// 2-space indentation ([`render_pretty`]).
    Pretty,
}

impl ResultJson {
    /// `v` as model-facing text: a root string raw, anything else in this layout.
    pub fn render(self, v: &Value) -> String {
        match (v, self) {
            (Value::String(s), _) => s.clone(),
            (other, Self::Compact) => super::js_stringify(other),
            (other, Self::Pretty) => render_pretty(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_four_objects_stay_pretty_and_depth_five_compacts() {
        let v = json!({"a": {"b": {"c": {"d": {"e": {"f": [1, "x"]}, "g": []}}}}});
        let want = "{\n  \"a\": {\n    \"b\": {\n      \"c\": {\n        \"d\": {\n          \"e\": {\"f\":[1,\"x\"]},\n          \"g\": []\n        }\n      }\n    }\n  }\n}";
        assert_eq!(render_pretty(&v), want);
    }

    #[test]
    fn scalars_and_escapes() {
        assert_eq!(render_pretty(&json!(-0.5)), "-0.5");
        assert_eq!(render_pretty(&json!(true)), "true");
        assert_eq!(
            render_pretty(&json!({"k\n": "\u{1}"})),
            "{\n  \"k\\n\": \"\\u0001\"\n}"
        );
        assert_eq!(render_value_text(&json!("")), "");
    }

    #[test]
    fn deep_values_are_iterative() {
        let mut v = json!(null);
        for _ in 0..5_000 {
            v = Value::Array(vec![v]);
        }
        let text = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let text = render_pretty(&v);
                std::mem::forget(v);
                text
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert!(text.starts_with("[\n  [\n    [\n      [\n        [\n          [[[["));
        assert!(text.contains("[[null]]]"));
        assert!(text.ends_with("]]]]\n        ]\n      ]\n    ]\n  ]\n]"));
    }
}
