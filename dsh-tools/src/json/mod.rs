//! The JSON boundary: JavaScript-compatible number formatting, string escaping, stringification,
//! canonical JSON (RFC 8785), pretty rendering, ordering, equality and the lossless-JSON rules
//! (`docs/CONTRACTS.md`, "Numbers", "JSON values").
//!
//! Every traversal is iterative, so 5,000-deep values never overflow the stack.
//!
//! Names follow two rules: `x(…)` returns a `String` and `write_x(out, …)` appends the same text
//! to `out` (`js_stringify` / `write_js_stringify`, `json_quote` / `write_json_quote`); a number
//! function takes an `f64` unless its name ends in `_of`, which takes a `serde_json::Number`
//! (`js_number` / `js_number_of`, `write_js_number` / `write_js_number_of`).

mod equal;
mod escape;
mod lossless;
mod number;
mod order;
mod pretty;
mod stringify;

pub use equal::json_equal;
pub(crate) use equal::scalar_equal;
pub use escape::{json_quote, write_json_quote};
pub use lossless::{LossyNumber, find_lossy, is_lossless, is_lossless_number, number_from_f64};
pub use number::{
    cmp_numbers, is_integer, js_number, js_number_of, number_to_f64, numbers_equal,
    write_js_number, write_js_number_of,
};
pub use order::{collapse_js_whitespace, is_js_whitespace, utf16_cmp};
pub use pretty::{ResultJson, render_pretty, render_value_text};
pub use stringify::{canonical_json, js_stringify, write_canonical_json, write_js_stringify};
