//! The Python SDK of Code Mode (docs/CONTRACTS.md, "Code Mode: Python"): the text a model writes
//! its `run_code` programs against when the code runtime's language is `python`.
//!
//! - [`render_tools_sdk_py`]: the `tools:sdk` prompt section — [`INSTRUCTIONS_PY`] and one
//!   Python module: `from typing import …` (only the names used), `ToolCallError` (a builtin class),
//!   a `TypedDict` class per object type (nested classes first, deterministic CamelCase names,
//!   `NotRequired[...]` for optional keys, the functional form when a key is not an identifier),
//!   `class Tools(Protocol)` with one `async def name(self, args: X) -> Y` per tool and its
//!   description as docstring, and `tools: Tools`.
//! - [`json_schema_to_py`]: one JSON Schema as a Python annotation (and the classes it names).
//!
//! Types: `string` → `str`, `integer` → `int`, `number` → `float`, `boolean` → `bool`, `null` →
//! `None`, `enum`/`const` → `Literal[...]` (JSON-escaped strings, `True`/`False`), arrays →
//! `list[T]`, objects without properties → `dict[str, T]`, `anyOf`/`oneOf`/type arrays/`nullable`
//! → unions with `|`. As in the TypeScript SDK a node that cannot be typed degrades to `Any` where
//! it stands; the rest of the tool keeps its types.
//!
//! Names: a tool is a method of `Tools` when its name is a Python identifier that means itself
//! ([`is_python_identifier`]: not a keyword, unchanged by NFKC, not `__debug__`) and does not
//! start with `_` ([`is_method_name`]); every other tool is reached by subscript,
//! `tools["my-tool"]`, and declared by a comment and a `__getitem__` overload. Descriptions,
//! keys and literals reach the text only as escaped string literals, one-line docstrings and
//! one-line comments, so the module is valid Python whatever the schemas hold (checked with
//! Python's own `ast` and `mypy --strict` in the tests).

mod instructions;
mod ir;
mod lower;
mod names;
mod print;
mod render;
mod text;

pub use instructions::INSTRUCTIONS_PY;
pub use names::{PYTHON_KEYWORDS, is_method_name, is_python_identifier};
pub(crate) use render::signature_py_of;
pub use render::{json_schema_to_py, render_tools_sdk_py, sdk_declarations_py};
pub use text::python_string;
