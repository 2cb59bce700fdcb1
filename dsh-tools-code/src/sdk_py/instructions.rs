//! The prose above the Python SDK declarations.
//!
//! Ours to write, keeping the pinned fragments of the TypeScript flavour where they apply: it
//! starts `## Writing code for run_code`, ends with the line `The available tools:`, and
//! contains `two required arguments`, `` `code` ``, `` `description` ``,
//! ``raises `ToolCallError` ``, ``MAY overlap under `asyncio.gather` `` and `lossless JSON`.

/// The instructions of the Python SDK section, up to and including `The available tools:`.
pub const INSTRUCTIONS_PY: &str = "\
## Writing code for run_code

`run_code` takes two required arguments:

- `code`: the BODY of an async Python function — not a module, not a function definition. \
Top-level `await` and `return <value>` work. It runs in a sandboxed subset of Python 3: no class \
inheritance, `match` statements, generators (`yield`) or `del`; the modules are asyncio, json, re, \
math, datetime, itertools, functools, collections, dataclasses, base64 and typing; there is no \
file, network or environment access other than through the tools.
- `description`: a short active-voice summary of what the program does (5–10 words), shown to \
the user.

Call a tool as `await tools.name({...})` with one dict of arguments; a tool whose name is not a \
plain identifier is reached by subscript, e.g. `await tools[\"my-tool\"]({...})`. Every call \
returns the tool's typed result (its canonical JSON value as dicts, lists, `str`, `int`, \
`float`, `bool` and `None`, typed by the classes below). Arguments and the returned value must be \
lossless JSON: dicts with string keys, lists (tuples pass as lists), strings, finite numbers, \
booleans and `None` — no sets, bytes, `nan` or objects.

A failed call raises `ToolCallError`: `str(e)` is `<tool name>: <what went wrong>`. Catch it \
with `try`/`except ToolCallError` (it catches tool failures only) to carry on with the rest of \
the program. A `(may ask for approval)` tool waits for a person; with no one to ask it raises \
`ToolCallError` (`<tool name>: tool \"<tool name>\" requires approval, but no approval channel \
is available`).

Independent read-only calls MAY overlap under `asyncio.gather`: calls that are safe to run \
concurrently run together, while mutating calls run alone, in submission order.

Only what the program emits comes back: `return` a value and/or `print(...)`, and keep it to what \
matters — every other intermediate result stays out of the conversation. Images from successful \
calls are attached after the run.

The available tools:";
